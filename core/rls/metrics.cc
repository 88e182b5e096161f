#include "core/rls/metrics.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

absl::StatusOr<Eigen::ArrayXXd> Difference(const char* metric, const FloatMatrix& predictions,
                                           const FloatMatrix& targets) {
  if (predictions.rows() != targets.rows() || predictions.cols() != targets.cols()) {
    return absl::InvalidArgumentError(absl::StrCat(
        metric, ": expected predictions and targets of the same shape, got ", predictions.rows(),
        " x ", predictions.cols(), " and ", targets.rows(), " x ", targets.cols()));
  }
  if (predictions.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(metric, ": expected non-empty inputs, got ",
                                                   predictions.rows(), " x ", predictions.cols()));
  }
  return (predictions.map().cast<double>() - targets.map().cast<double>()).array();
}

}  // namespace

absl::StatusOr<double> Accuracy(absl::Span<const int32_t> predicted,
                                absl::Span<const int32_t> truth) {
  if (predicted.size() != truth.size() || predicted.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Accuracy: expected two non-empty label lists of equal length, got ",
                     predicted.size(), " and ", truth.size()));
  }
  int64_t correct = 0;
  for (size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == truth[i];
  return static_cast<double>(correct) / static_cast<double>(predicted.size());
}

absl::StatusOr<double> MeanSquaredError(const FloatMatrix& predictions,
                                        const FloatMatrix& targets) {
  absl::StatusOr<Eigen::ArrayXXd> diff = Difference("MeanSquaredError", predictions, targets);
  if (!diff.ok()) return diff.status();
  return diff->square().mean();
}

absl::StatusOr<double> RootMeanSquaredError(const FloatMatrix& predictions,
                                            const FloatMatrix& targets) {
  absl::StatusOr<Eigen::ArrayXXd> diff = Difference("RootMeanSquaredError", predictions, targets);
  if (!diff.ok()) return diff.status();
  return std::sqrt(diff->square().mean());
}

absl::StatusOr<double> MeanAbsoluteError(const FloatMatrix& predictions,
                                         const FloatMatrix& targets) {
  absl::StatusOr<Eigen::ArrayXXd> diff = Difference("MeanAbsoluteError", predictions, targets);
  if (!diff.ok()) return diff.status();
  return diff->abs().mean();
}

}  // namespace invariant
