// report.h: what a training run measured, written as report.json (for
// machines and the reproduction scripts), report.md (for people) and
// report.html (the model page, report_html.h) next to the bundle in
// MODELS/<name>/<version>/.
#ifndef INVARIANT_TRAIN_PIPELINE_REPORT_H_
#define INVARIANT_TRAIN_PIPELINE_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "invariant/v1/bundle.pb.h"

namespace invariant::train {

// One round of a k-fold run (cross_validation.h): the refit's training rows
// (the K−1 folds), its inner cross-validation's rows per inner round, the
// test fold's rows, the λ chosen, the refit's test metrics and, leaving one
// group out, the group held out.
struct ReportFold {
  int64_t train_rows = 0;
  std::vector<int64_t> inner_train_rows;
  std::vector<int64_t> inner_validation_rows;
  int64_t test_rows = 0;
  double lambda = 0;
  std::map<std::string, double> test_metrics;
  std::string group;  // leave-one-group-out: the test fold's group; else empty
};

// One λ solved by conjugate gradients.
struct ReportCgSolve {
  double lambda = 0;
  int64_t iterations = 0;
  double relative_residual = 0;
};

struct TrainReport {
  std::string model_name;
  int64_t version = 0;
  std::string description;
  std::string encoder_kind;
  std::string group;
  int64_t input_dim = 0;
  int64_t feature_dim = 0;
  int64_t train_rows = 0;
  int64_t augmented_train_rows = 0;  // of train_rows: augmented copies (audio_augment.h)
  int64_t validation_rows = 0;
  int64_t test_rows = 0;
  std::string task;               // "classification" | "regression" | "none"
  double lambda = 0;              // chosen regularisation
  std::string validation_metric;  // "accuracy" | "rmse" (the test metric's)
  std::vector<std::pair<double, double>> validation_curve;  // (λ, metric)
  std::map<std::string, double> test_metrics;               // accuracy | rmse, mae
  v1::InvarianceCertificate certificate;                    // with its curve (invariance_curve.h)
  // certificate.baseline: its path and its certificate on the same points
  // against the same elements (baseline_certificate.h); empty when unset.
  std::string baseline_model;
  v1::InvarianceCertificate baseline_certificate;
  // The test rows' outcome (k-fold: every row, scored by the round that
  // holds it out, pooled in round order): classification's confusion matrix,
  // confusion[true][predicted] counts with the class names in index order;
  // regression's (prediction, target) pairs of the first target, at most
  // kMaxReportedPredictions of them taken evenly over the test rows in order.
  std::vector<std::string> class_names;
  std::vector<std::vector<int64_t>> confusion;
  std::string target_name;
  std::vector<std::pair<double, double>> test_predictions;
  std::vector<std::pair<std::string, double>> stage_seconds;  // in order
  // The feature map alone: every row it computed (training, validation,
  // test) and the seconds it took, without the ΦᵀΦ, ΦᵀY accumulation.
  int64_t featurized_rows = 0;
  double featurize_seconds = 0;
  double featurize_rows_per_second = 0;
  // The training rows accumulated into ΦᵀΦ and ΦᵀY (k-fold: also sorted into
  // their folds) and the seconds that took, apart from featurizing them.
  int64_t accumulated_rows = 0;
  double accumulate_seconds = 0;
  std::vector<std::string> warnings;  // e.g. λ at an end of its grid
  // The head's solver: "eigen", "cholesky", "band", "dual_band", "cg_gram",
  // "cg_rows" (ridge),
  // "spec_avg", "" for none; CG's iterations and residual per λ solved.
  std::string solver;
  std::vector<ReportCgSolve> cg_solves;
  // k-fold runs (k_fold > 0): whether the folds are stratified, every
  // round, the test metrics' sample standard deviation over the rounds
  // (test_metrics then holds their mean), the metrics pooled over every
  // test row of every round, and what the written model is.
  int k_fold = 0;
  bool stratified = false;
  // Leave-one-group-out (split.leave_one_group_out): the group of every
  // fold, in fold order; empty for k_fold.
  std::vector<std::string> fold_groups;
  std::vector<ReportFold> folds;
  std::map<std::string, double> test_metrics_std;
  std::map<std::string, double> test_metrics_pooled;
  int64_t pooled_rows = 0;
  std::string written_model;
};

inline constexpr int64_t kMaxReportedPredictions = 2000;

// Sets r.class_names and r.confusion from the predicted and true classes.
void RecordConfusion(const std::vector<int32_t>& predicted, const std::vector<int32_t>& labels,
                     const std::vector<std::string>& class_names, TrainReport& r);
// Sets r.target_name (the first of `target_names`, "y0" when there are
// none) and r.test_predictions from column 0 of n × T predictions and targets.
void RecordPredictions(int64_t n, const float* predictions, const float* targets, int64_t cols,
                       const std::vector<std::string>& target_names, TrainReport& r);

// One JSON object; keys are stable (documented in README "Training").
std::string ReportToJson(const TrainReport& report);
// A short Markdown page with the same facts.
std::string ReportToMarkdown(const TrainReport& report);

// A k-fold run's console lines (k_fold > 0), each count named: the protocol,
// every round's rows, λ and test metrics, then per metric the mean ± sample
// std over the folds beside the pooled value over every test row, and the
// written model.
std::string CrossValidationConsole(const TrainReport& report);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_REPORT_H_
