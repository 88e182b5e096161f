#include "train/pipeline/cv_rounds.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/linear_model.h"
#include "train/pipeline/progress.h"
#include "train/pipeline/solve.h"

namespace invariant::train {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Adds one featurize pass to the report's counts: rows the feature map
// computed and its seconds alone, and the rows sorted and summed apart.
void CountPass(TrainReport& r, int64_t rows, double features, double accumulate) {
  r.featurized_rows += rows;
  r.featurize_seconds += features;
  r.featurize_rows_per_second =
      r.featurize_seconds > 0 ? static_cast<double>(r.featurized_rows) / r.featurize_seconds : 0;
  r.accumulated_rows += rows;
  r.accumulate_seconds += accumulate;
}

// Adds `seconds` to the report's stage `name`, appending it when absent.
void AddStageSeconds(TrainReport& r, const std::string& name, double seconds) {
  for (auto& [stage, s] : r.stage_seconds) {
    if (stage == name) {
      s += seconds;
      return;
    }
  }
  r.stage_seconds.emplace_back(name, seconds);
}

std::string PassLine(const std::string& what, int64_t rows, double features, double accumulate,
                     double stage) {
  return absl::StrFormat(
      "%s: featurize %lld rows: features %.2fs (%.0f rows/s), sort into folds and sum %.2fs; "
      "stage %.2fs",
      what, static_cast<long long>(rows), features, features > 0 ? rows / features : 0.0,
      accumulate, stage);
}

// Adds the augmented copies among a block's rows (features phi, targets y)
// to their folds' sums, one Add per fold; `scratch` holds a fold's rows.
absl::Status AddCopiesToFolds(const DataPlan& plan, const TrainBlock& b, const float* phi,
                              const FloatMatrix& y, std::vector<FoldRows>& folds,
                              std::vector<float>& scratch) {
  const int64_t f = folds.empty() ? 0 : folds[0].phi.cols(), t = y.cols();
  std::vector<float> targets;
  for (size_t fold = 0; fold < folds.size(); ++fold) {
    scratch.clear();
    targets.clear();
    for (int64_t i = 0; i < b.n; ++i) {
      const int64_t ordinal = b.first_ordinal + i;
      if (!plan.IsCopy(ordinal) ||
          static_cast<size_t>(plan.fold[static_cast<size_t>(ordinal)]) != fold) {
        continue;
      }
      scratch.insert(scratch.end(), phi + i * f, phi + (i + 1) * f);
      targets.insert(targets.end(), y.row(i), y.row(i) + t);
    }
    if (targets.empty()) continue;
    const int64_t rows = static_cast<int64_t>(targets.size()) / t;
    RETURN_IF_ERROR(folds[fold].sums.Add(rows, scratch.data(), targets.data()));
  }
  return absl::OkStatus();
}

// One pass over every training row with `model`. Per-fold (folds != null):
// each original row's features and targets land in its fold, then every
// fold's sums are formed; an augmented copy goes to its fold's sums only
// (it trains, and is never scored). Otherwise (all != null): every row is
// summed into *all, and fold 0's raw original rows are copied into *first.
absl::Status FeaturizePass(const Model& model, const v1::TrainConfig& config, DataPlan& plan,
                           const std::string& what, TrainReport& report,
                           std::vector<FoldRows>* folds, GramAccumulator* all, Dataset* first) {
  const int k = plan.num_folds;
  const int64_t f = model.feature_dim(), d = plan.schema.dim;
  const int64_t t = std::max<int64_t>(1, plan.target_dim());
  std::vector<int64_t> sizes(static_cast<size_t>(k), 0), next(static_cast<size_t>(k), 0);
  for (size_t o = 0; o < plan.fold.size(); ++o) {
    if (!plan.IsCopy(static_cast<int64_t>(o))) ++sizes[static_cast<size_t>(plan.fold[o])];
  }
  if (folds != nullptr) {
    folds->clear();
    for (int i = 0; i < k; ++i) {
      ASSIGN_OR_RETURN(GramAccumulator sums, GramAccumulator::Create(f, t));
      folds->push_back(FoldRows{FloatMatrix::Zeros(sizes[static_cast<size_t>(i)], f),
                                FloatMatrix::Zeros(sizes[static_cast<size_t>(i)], t),
                                std::move(sums)});
    }
  } else {
    first->name = "fold 1";
    first->x = FloatMatrix::Zeros(sizes[0], d);
  }
  Progress progress(what, plan.train_rows);
  std::vector<float> phi, scratch;
  double features = 0, accumulate = 0;
  RETURN_IF_ERROR(ForEachTrainBlock(plan, config.block_rows(), 0, 1, [&](const TrainBlock& b) {
    phi.resize(static_cast<size_t>(b.n * f));
    const auto start = Clock::now();
    FeaturizeInParallel(model, b.n, b.x, phi.data());
    features += SecondsSince(start);
    ASSIGN_OR_RETURN(FloatMatrix y, BlockTargets(plan, b));
    const auto copy_start = Clock::now();
    if (all != nullptr) RETURN_IF_ERROR(all->Add(b.n, phi.data(), y.data()));
    if (folds != nullptr && plan.augmented_rows > 0) {
      RETURN_IF_ERROR(AddCopiesToFolds(plan, b, phi.data(), y, *folds, scratch));
    }
    for (int64_t i = 0; i < b.n; ++i) {
      if (plan.IsCopy(b.first_ordinal + i)) continue;
      const size_t fold = static_cast<size_t>(plan.fold[static_cast<size_t>(b.first_ordinal + i)]);
      const int64_t row = next[fold]++;
      if (folds != nullptr) {
        std::memcpy((*folds)[fold].phi.mutable_row(row), phi.data() + i * f, sizeof(float) * f);
        std::memcpy((*folds)[fold].y.mutable_row(row), y.row(i), sizeof(float) * t);
      } else if (fold == 0) {
        std::memcpy(first->x.mutable_row(row), b.x + i * d, sizeof(float) * d);
      }
    }
    accumulate += SecondsSince(copy_start);
    progress.Advance(b.n);
    return absl::OkStatus();
  }));
  if (folds != nullptr) {
    const auto sums_start = Clock::now();
    for (FoldRows& fold : *folds) {
      RETURN_IF_ERROR(fold.sums.Add(fold.phi.rows(), fold.phi.data(), fold.y.data()));
    }
    accumulate += SecondsSince(sums_start);
  }
  progress.Finish(PassLine(what, plan.train_rows, features, accumulate, progress.seconds()));
  CountPass(report, plan.train_rows, features, accumulate);
  return absl::OkStatus();
}

// The confusion matrix (or the residuals) of every round's test fold, pooled.
void RecordPooledPredictions(const std::vector<FoldPredictions>& rounds, const DataPlan& plan,
                             TrainReport& r) {
  if (rounds.empty()) return;
  const int64_t t = rounds[0].scores.cols();
  int64_t rows = 0;
  for (const FoldPredictions& f : rounds) rows += f.scores.cols() == t ? f.scores.rows() : 0;
  FloatMatrix scores = FloatMatrix::Zeros(rows, t), targets = FloatMatrix::Zeros(rows, t);
  int64_t at = 0;
  for (const FoldPredictions& f : rounds) {
    if (f.scores.cols() != t || f.targets.cols() != t) continue;
    for (int64_t i = 0; i < f.scores.rows(); ++i, ++at) {
      std::memcpy(scores.mutable_row(at), f.scores.row(i), sizeof(float) * t);
      std::memcpy(targets.mutable_row(at), f.targets.row(i), sizeof(float) * t);
    }
  }
  if (plan.classification()) {
    RecordConfusion(ArgmaxRows(scores), ArgmaxRows(targets), plan.schema.class_names, r);
  } else {
    RecordPredictions(rows, scores.data(), targets.data(), t, plan.schema.target_names, r);
  }
}

// The report's cross-validation fields from the result.
void FillCrossValidationReport(const CrossValidationResult& cv, const v1::TrainConfig& config,
                               const DataPlan& plan, TrainReport& r) {
  r.k_fold = plan.num_folds;
  r.validation_metric = plan.classification() ? "accuracy" : "rmse";
  r.validation_curve = cv.mean_curve;
  r.lambda = cv.refit_lambda;
  r.stratified = config.split().stratify();
  r.fold_groups = plan.fold_groups;
  r.test_metrics = cv.mean;
  r.test_metrics_std = cv.stddev;
  r.test_metrics_pooled = cv.pooled;
  r.pooled_rows = cv.pooled_rows;
  RecordPooledPredictions(cv.test_predictions, plan, r);
  for (size_t i = 0; i < cv.folds.size(); ++i) {
    const FoldResult& fr = cv.folds[i];
    r.folds.push_back({fr.train_rows, fr.inner_train_rows, fr.inner_validation_rows, fr.test_rows,
                       fr.lambda, fr.test_metrics,
                       i < plan.fold_groups.size() ? plan.fold_groups[i] : ""});
  }
  r.written_model = absl::StrCat(
      "refit on all ", cv.refit_rows, " rows at lambda ", cv.refit_lambda,
      " (best inner validation score averaged over the ", plan.num_folds,
      " rounds); its test metrics are estimated by the rounds (mean, std, pooled), each round "
      "on a feature map fitted on its own training rows only");
  std::vector<double> curve_grid;
  for (const auto& [lambda, unused] : cv.mean_curve) curve_grid.push_back(lambda);
  WarnAtGridEnd(r, curve_grid);
}

}  // namespace

void FeaturizeInParallel(const Model& model, int64_t n, const float* x, float* out) {
  constexpr int64_t kChunkRows = 256;
  ParallelFor((n + kChunkRows - 1) / kChunkRows, [&](int64_t chunk) {
    const int64_t start = chunk * kChunkRows;
    const int64_t rows = std::min(kChunkRows, n - start);
    model.Featurize(rows, x + start * model.input_dim(), out + start * model.feature_dim());
  });
}

absl::StatusOr<CrossValidationRun> RunCrossValidation(const v1::TrainConfig& config, DataPlan& plan,
                                                      const Model& written_map, TrainReport& report,
                                                      const RoundMapObserver& observe) {
  const int k = plan.num_folds;
  const v1::LearnerConfig& l = config.learner();
  const RlsTask task = plan.classification() ? RlsTask::kClassification : RlsTask::kRegression;
  const std::vector<double> grid(l.lambda_grid().begin(), l.lambda_grid().end());
  double bank = 0, featurize = 0, solve = 0;
  std::vector<RoundOutcome> rounds;
  for (int f = 0; f < k; ++f) {
    const std::string round = absl::StrCat("round ", f + 1, " of ", k);
    auto start = Clock::now();
    ASSIGN_OR_RETURN(FeatureMap map, BuildFeatureMap(config, plan, f));
    bank += SecondsSince(start);
    int64_t held_out = 0;
    for (int32_t fold : plan.fold) held_out += (fold == f);
    const std::string which = static_cast<size_t>(f) < plan.fold_groups.size()
                                  ? absl::StrCat("group ", plan.fold_groups[static_cast<size_t>(f)])
                                  : absl::StrCat("fold ", f + 1);
    std::fprintf(stderr,
                 "%s: feature map fitted on its %lld training rows (%s held out), %lld features\n",
                 round.c_str(), static_cast<long long>(plan.train_rows - held_out), which.c_str(),
                 static_cast<long long>(map.model->feature_dim()));
    if (observe) observe(f, map);
    start = Clock::now();
    std::vector<FoldRows> folds;
    RETURN_IF_ERROR(
        FeaturizePass(*map.model, config, plan, round, report, &folds, nullptr, nullptr));
    featurize += SecondsSince(start);
    start = Clock::now();
    const HeadSolver kind = ChooseHeadSolver(l, map.model->feature_dim(), /*rows=*/0);
    ASSIGN_OR_RETURN(RoundOutcome outcome,
                     CrossValidateRound(f, folds, grid, l.extend_lambda_grid(), task,
                                        GramSolverFactory(kind, l)));
    rounds.push_back(std::move(outcome));
    solve += SecondsSince(start);
  }
  auto start = Clock::now();
  CrossValidationRun out;
  ASSIGN_OR_RETURN(out.cv, CombineRounds(std::move(rounds), grid, l.extend_lambda_grid(), task));
  solve += SecondsSince(start);
  // The written model: every row, featurized by the map fitted on all rows.
  start = Clock::now();
  ASSIGN_OR_RETURN(
      GramAccumulator all,
      GramAccumulator::Create(written_map.feature_dim(), std::max<int64_t>(1, plan.target_dim())));
  RETURN_IF_ERROR(
      FeaturizePass(written_map, config, plan, "written model", report, nullptr, &all, &out.first));
  featurize += SecondsSince(start);
  start = Clock::now();
  const HeadSolver kind = ChooseHeadSolver(l, written_map.feature_dim(), /*rows=*/0);
  report.solver = HeadSolverName(kind);
  RETURN_IF_ERROR(RefitOnAllRows(all, GramSolverFactory(kind, l), out.cv));
  solve += SecondsSince(start);
  AddStageSeconds(report, "bank", bank);
  AddStageSeconds(report, "featurize", featurize);
  AddStageSeconds(report, "solve", solve);
  FillCrossValidationReport(out.cv, config, plan, report);
  return out;
}

}  // namespace invariant::train
