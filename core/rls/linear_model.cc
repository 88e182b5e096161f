#include "core/rls/linear_model.h"

#include <cblas.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace invariant {

void ApplyLinearModel(const LinearModel& model, int64_t n, const float* features, float* scores) {
  const int64_t d = model.feature_dim();
  const int64_t t = model.output_dim();
  if (n == 0 || t == 0) return;
  for (int64_t i = 0; i < n; ++i) {
    std::copy(model.bias.data(), model.bias.data() + t, scores + i * t);
  }
  // Row by row (M = 1) so a row's scores never depend on the batch size.
  for (int64_t i = 0; i < n; ++i) {
    cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(d), static_cast<int>(t), 1.0f,
                model.weights.data(), static_cast<int>(t), features + i * d, 1, 1.0f,
                scores + i * t, 1);
  }
}

absl::StatusOr<FloatMatrix> ApplyLinearModel(const LinearModel& model,
                                             const FloatMatrix& features) {
  if (model.bias.rows() != 1 || model.bias.cols() != model.output_dim()) {
    return absl::InvalidArgumentError(absl::StrCat("LinearModel: expected bias 1 x ",
                                                   model.output_dim(), ", got ", model.bias.rows(),
                                                   " x ", model.bias.cols()));
  }
  if (features.cols() != model.feature_dim()) {
    return absl::InvalidArgumentError(absl::StrCat("ApplyLinearModel: expected features with ",
                                                   model.feature_dim(), " columns, got ",
                                                   features.cols()));
  }
  FloatMatrix scores = FloatMatrix::Zeros(features.rows(), model.output_dim());
  ApplyLinearModel(model, features.rows(), features.data(), scores.mutable_data());
  return scores;
}

absl::StatusOr<FloatMatrix> OneVsAllTargets(absl::Span<const int32_t> labels, int32_t num_classes) {
  if (num_classes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("OneVsAllTargets: expected num_classes >= 1, got ", num_classes));
  }
  FloatMatrix y = FloatMatrix::Zeros(static_cast<int64_t>(labels.size()), num_classes);
  y.mutable_map().setConstant(-1.0f);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= num_classes) {
      return absl::InvalidArgumentError(
          absl::StrCat("OneVsAllTargets: labels[", i, "] = ", labels[i],
                       ", expected a value in [0, ", num_classes, ")"));
    }
    y.mutable_row(static_cast<int64_t>(i))[labels[i]] = 1.0f;
  }
  return y;
}

std::vector<int32_t> ArgmaxRows(int64_t n, int64_t cols, const float* scores) {
  std::vector<int32_t> out(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = scores + i * cols;
    int32_t best = -1;
    for (int64_t j = 0; j < cols; ++j) {
      if (row[j] != row[j]) continue;  // NaN
      if (best < 0 || row[j] > row[best]) best = static_cast<int32_t>(j);
    }
    out[static_cast<size_t>(i)] = best;
  }
  return out;
}

std::vector<int32_t> ArgmaxRows(const FloatMatrix& scores) {
  return ArgmaxRows(scores.rows(), scores.cols(), scores.data());
}

}  // namespace invariant
