// linear_model.h: THE linear head, scores = features · W + b, its one apply
// function, its one argmax, and the one-vs-all encoding of class labels.
//
// A LinearModel is what every ridge solver (ridge.h) produces, what a Model
// (core/model/model.h) owns and serves, and what a bundle stores as
// "head/weights" (D × T) and "head/bias" (1 × T). Serving, training,
// λ selection and evaluation all score through ApplyLinearModel, so what is
// evaluated is what is served. For classification the T columns are
// one-vs-all scores and the predicted class is ArgmaxRows of a row (ties go
// to the smaller class index, NaN never wins); for regression T is the
// number of targets (usually 1).
#ifndef INVARIANT_CORE_RLS_LINEAR_MODEL_H_
#define INVARIANT_CORE_RLS_LINEAR_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"

namespace invariant {

struct LinearModel {
  FloatMatrix weights;  // D × T
  FloatMatrix bias;     // 1 × T
  double lambda = 0.0;  // the regularisation it was fitted with

  int64_t feature_dim() const { return weights.rows(); }
  int64_t output_dim() const { return weights.cols(); }
};

// scores (n × T, row-major) = features (n × D, row-major) · W + b.
// Preconditions (unchecked, this is the serving hot path): the pointers hold
// n × model.feature_dim() and n × model.output_dim() floats, and the bias is
// 1 × output_dim(). Rows are scored one at a time (BLAS sgemv), so a row's
// scores never depend on how many rows are scored with it. Thread-safe.
void ApplyLinearModel(const LinearModel& model, int64_t n, const float* features, float* scores);

// Checked form: features must be n × model.feature_dim(), and the model's
// bias 1 × output_dim(). Errors: INVALID_ARGUMENT naming the mismatch.
absl::StatusOr<FloatMatrix> ApplyLinearModel(const LinearModel& model, const FloatMatrix& features);

// One-vs-all targets: row i is +1 in column labels[i] and −1 elsewhere
// (N × num_classes). Errors: INVALID_ARGUMENT for num_classes < 1 or a label
// outside [0, num_classes) (names the index and the value).
absl::StatusOr<FloatMatrix> OneVsAllTargets(absl::Span<const int32_t> labels, int32_t num_classes);

// The column of the largest score in each row (ties → smallest column;
// NaN never wins). Rows with no columns, or only NaN, give −1.
std::vector<int32_t> ArgmaxRows(const FloatMatrix& scores);
std::vector<int32_t> ArgmaxRows(int64_t n, int64_t cols, const float* scores);

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_LINEAR_MODEL_H_
