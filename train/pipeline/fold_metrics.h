// fold_metrics.h: the test metrics of a k-fold run — per fold, their mean
// and sample standard deviation over the folds, and the pooled metric over
// every test row of every fold.
//
// The mean weights every fold alike; the pooled metric weights every row
// alike (RMSE: the square root of the mean squared error over all N·T
// entries of all folds, MAE: the mean absolute error over them, accuracy:
// the fraction right over all rows). They differ when the folds differ in
// size or, for RMSE, in error (the mean of square roots is at most the
// square root of the mean). std is the sample standard deviation, K − 1 in
// the denominator (0 for one fold).
//
// Errors: INVALID_ARGUMENT for no folds, an empty fold, or scores and
// targets of different shapes (metrics.h). Thread-safe (pure).
#ifndef INVARIANT_TRAIN_PIPELINE_FOLD_METRICS_H_
#define INVARIANT_TRAIN_PIPELINE_FOLD_METRICS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/rls/lambda_selection.h"

namespace invariant::train {

// One fold's test rows: the model's scores and the targets (n × T; one-vs-all
// rows for classification, compared by their argmax).
struct FoldPredictions {
  FloatMatrix scores;
  FloatMatrix targets;
};

// The names are "accuracy" (classification) or "rmse" and "mae".
struct FoldMetrics {
  std::vector<std::map<std::string, double>> per_fold;
  std::map<std::string, double> mean;
  std::map<std::string, double> stddev;  // sample std over the folds (K − 1)
  std::map<std::string, double> pooled;  // over every row of every fold
  int64_t pooled_rows = 0;
};

// The metrics of one set of predictions.
absl::StatusOr<std::map<std::string, double>> TestMetrics(const FloatMatrix& scores,
                                                          const FloatMatrix& targets, RlsTask task);

// metrics[name], or 0 when the map has no such metric.
double MetricOrZero(const std::map<std::string, double>& metrics, const std::string& name);

absl::StatusOr<FoldMetrics> SummarizeFolds(const std::vector<FoldPredictions>& folds, RlsTask task);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_FOLD_METRICS_H_
