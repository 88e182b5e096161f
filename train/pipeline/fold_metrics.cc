#include "train/pipeline/fold_metrics.h"

#include <cmath>
#include <cstring>

#include "core/base/status_macros.h"
#include "core/rls/linear_model.h"
#include "core/rls/metrics.h"

namespace invariant::train {

absl::StatusOr<std::map<std::string, double>> TestMetrics(const FloatMatrix& scores,
                                                          const FloatMatrix& targets,
                                                          RlsTask task) {
  std::map<std::string, double> m;
  if (task == RlsTask::kClassification) {
    ASSIGN_OR_RETURN(m["accuracy"], Accuracy(ArgmaxRows(scores), ArgmaxRows(targets)));
  } else {
    ASSIGN_OR_RETURN(m["rmse"], RootMeanSquaredError(scores, targets));
    ASSIGN_OR_RETURN(m["mae"], MeanAbsoluteError(scores, targets));
  }
  return m;
}

absl::StatusOr<FoldMetrics> SummarizeFolds(const std::vector<FoldPredictions>& folds,
                                           RlsTask task) {
  if (folds.empty()) return absl::InvalidArgumentError("fold metrics: no folds");
  FoldMetrics out;
  int64_t rows = 0;
  for (const FoldPredictions& f : folds) {
    out.per_fold.emplace_back();
    ASSIGN_OR_RETURN(out.per_fold.back(), TestMetrics(f.scores, f.targets, task));
    rows += f.scores.rows();
  }
  const double k = static_cast<double>(folds.size());
  for (const auto& [name, unused] : out.per_fold[0]) {
    double sum = 0, sq = 0;
    for (const auto& m : out.per_fold) sum += m.at(name);
    const double mean = sum / k;
    for (const auto& m : out.per_fold) sq += (m.at(name) - mean) * (m.at(name) - mean);
    out.mean[name] = mean;
    out.stddev[name] = folds.size() > 1 ? std::sqrt(sq / (k - 1)) : 0.0;
  }
  // Pooled: the same metric over all folds' rows stacked.
  const int64_t t = folds[0].scores.cols();
  FloatMatrix scores = FloatMatrix::Zeros(rows, t), targets = FloatMatrix::Zeros(rows, t);
  int64_t at = 0;
  for (const FoldPredictions& f : folds) {
    if (f.scores.cols() != t || f.targets.cols() != t || f.targets.rows() != f.scores.rows()) {
      return absl::InvalidArgumentError("fold metrics: the folds' scores differ in shape");
    }
    for (int64_t i = 0; i < f.scores.rows(); ++i, ++at) {
      std::memcpy(scores.mutable_row(at), f.scores.row(i), sizeof(float) * t);
      std::memcpy(targets.mutable_row(at), f.targets.row(i), sizeof(float) * t);
    }
  }
  ASSIGN_OR_RETURN(out.pooled, TestMetrics(scores, targets, task));
  out.pooled_rows = rows;
  return out;
}

double MetricOrZero(const std::map<std::string, double>& metrics, const std::string& name) {
  const auto it = metrics.find(name);
  return it == metrics.end() ? 0.0 : it->second;
}

}  // namespace invariant::train
