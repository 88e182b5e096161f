// metrics.h: the evaluation numbers the training job reports and the
// reproductions compare with the papers (accuracy, RMSE, MAE).
//
// Regression metrics average over every entry of an N × T matrix, in double.
#ifndef INVARIANT_CORE_RLS_METRICS_H_
#define INVARIANT_CORE_RLS_METRICS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"

namespace invariant {

// Fraction of positions where predicted[i] == truth[i], in [0, 1].
// Errors: INVALID_ARGUMENT for different lengths or empty inputs.
absl::StatusOr<double> Accuracy(absl::Span<const int32_t> predicted,
                                absl::Span<const int32_t> truth);

// (1/(N·T)) Σ (p − y)². Errors: INVALID_ARGUMENT for different shapes or
// empty inputs.
absl::StatusOr<double> MeanSquaredError(const FloatMatrix& predictions, const FloatMatrix& targets);
// √MeanSquaredError. Same errors.
absl::StatusOr<double> RootMeanSquaredError(const FloatMatrix& predictions,
                                            const FloatMatrix& targets);
// (1/(N·T)) Σ |p − y|. Same errors.
absl::StatusOr<double> MeanAbsoluteError(const FloatMatrix& predictions,
                                         const FloatMatrix& targets);

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_METRICS_H_
