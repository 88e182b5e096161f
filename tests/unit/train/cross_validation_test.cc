// K-fold cross-validation: the rounds, their statistics and the refit
// (train/pipeline/cross_validation.h), and k-fold training runs end to end.
#include "train/pipeline/cross_validation.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/base/random.h"
#include "core/model/model.h"
#include "core/rls/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/data/splits.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/fold_metrics.h"
#include "train/pipeline/report.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using testing::ReadText;
using testing::RunOptions;
using testing::TempDir;

// Four folds of y = x w + 1 + noise, x ~ N(0, 1)^6.
std::vector<FoldRows> MakeFolds(const std::vector<int64_t>& sizes, uint64_t seed) {
  Rng rng(seed);
  Eigen::VectorXd w(6);
  for (int j = 0; j < 6; ++j) w(j) = rng.Normal();
  std::vector<FoldRows> folds;
  for (int64_t n : sizes) {
    FloatMatrix phi = FloatMatrix::Zeros(n, 6), y = FloatMatrix::Zeros(n, 1);
    for (int64_t i = 0; i < n; ++i) {
      double dot = 1.0 + 0.3 * rng.Normal();
      for (int j = 0; j < 6; ++j) {
        phi.mutable_row(i)[j] = static_cast<float>(rng.Normal());
        dot += phi.row(i)[j] * w(j);
      }
      y.mutable_row(i)[0] = static_cast<float>(dot);
    }
    auto sums = GramAccumulator::Create(6, 1);
    EXPECT_TRUE(sums.ok());
    EXPECT_TRUE(sums->Add(n, phi.data(), y.data()).ok());
    folds.push_back(FoldRows{std::move(phi), std::move(y), *std::move(sums)});
  }
  return folds;
}

SolverFactory Eigendecomposition() {
  return [](const GramAccumulator& s) { return MakePrimalRidgeSolver(s); };
}

TEST(CrossValidationTest, RoundsStatisticsAndRefit) {
  const std::vector<int64_t> sizes = {30, 31, 29, 30};
  const std::vector<FoldRows> folds = MakeFolds(sizes, 5);
  const std::vector<double> grid = {1e-4, 1e-2, 1.0, 100.0};
  auto cv = CrossValidate(folds, grid, false, RlsTask::kRegression, Eigendecomposition());
  ASSERT_TRUE(cv.ok()) << cv.status();
  ASSERT_EQ(cv->folds.size(), 4u);
  double sum = 0;
  for (int f = 0; f < 4; ++f) {
    const FoldResult& r = cv->folds[static_cast<size_t>(f)];
    EXPECT_EQ(r.test_rows, sizes[static_cast<size_t>(f)]);
    // The refit trains on the other three folds; its inner cross-validation
    // validates on each of them in turn and trains on the other two.
    EXPECT_EQ(r.train_rows + r.test_rows, 120);
    std::vector<int64_t> others;
    for (int g = 0; g < 4; ++g) {
      if (g != f) others.push_back(sizes[static_cast<size_t>(g)]);
    }
    EXPECT_EQ(r.inner_validation_rows, others);
    ASSERT_EQ(r.inner_train_rows.size(), 3u);
    for (size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(r.inner_train_rows[j] + r.inner_validation_rows[j], r.train_rows);
    }
    EXPECT_THAT(grid, ::testing::Contains(r.lambda));
    sum += r.test_metrics.at("rmse");
  }
  const double mean = sum / 4;
  double sq = 0;
  for (const FoldResult& r : cv->folds) sq += std::pow(r.test_metrics.at("rmse") - mean, 2);
  EXPECT_NEAR(cv->mean.at("rmse"), mean, 1e-12);
  EXPECT_NEAR(cv->stddev.at("rmse"), std::sqrt(sq / 3), 1e-12);
  // The noise is 0.3: a good fit, and λ* is the best averaged validation RMSE.
  EXPECT_LT(cv->mean.at("rmse"), 0.45);
  ASSERT_EQ(cv->mean_curve.size(), grid.size());
  double best = 1e300;
  for (const auto& [lambda, rmse] : cv->mean_curve) best = std::min(best, rmse);
  for (const auto& [lambda, rmse] : cv->mean_curve) {
    if (lambda == cv->refit_lambda) {
      EXPECT_EQ(rmse, best);
    }
  }
  // The refit is the ridge solution on all 120 rows at λ*.
  GramAccumulator all = folds[0].sums;
  for (int g = 1; g < 4; ++g) ASSERT_TRUE(all.Merge(folds[static_cast<size_t>(g)].sums).ok());
  auto direct = MakePrimalRidgeSolver(all);
  ASSERT_TRUE(direct.ok());
  auto want = (*direct)->Solve(cv->refit_lambda);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(cv->refit_rows, 120);
  for (int64_t i = 0; i < want->weights.size(); ++i) {
    EXPECT_EQ(cv->refit.weights.data()[i], want->weights.data()[i]);
  }
}

// |a − b| / max|b|, over the entries of two same-shaped matrices.
double RelativeDifference(const FloatMatrix& a, const FloatMatrix& b) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::abs(double{a.data()[i]} - b.data()[i]));
    scale = std::max(scale, std::abs(double{b.data()[i]}));
  }
  return diff / scale;
}

GramAccumulator SumsExcept(const std::vector<FoldRows>& folds, int skip_a, int skip_b) {
  auto sum = GramAccumulator::Create(folds[0].phi.cols(), folds[0].y.cols());
  EXPECT_TRUE(sum.ok());
  for (int g = 0; g < static_cast<int>(folds.size()); ++g) {
    if (g == skip_a || g == skip_b) continue;
    const FoldRows& fold = folds[static_cast<size_t>(g)];
    EXPECT_TRUE(sum->Add(fold.phi.rows(), fold.phi.data(), fold.y.data()).ok());
  }
  return *std::move(sum);
}

// Round f's model is the ridge solution on ALL its K−1 training folds at its
// λ (not on K−2 of them), and its test metrics are that model's on fold f.
TEST(CrossValidationTest, EachRoundRefitsOnAllItsTrainingFolds) {
  const std::vector<int64_t> sizes = {30, 31, 29, 30, 32};
  const std::vector<FoldRows> folds = MakeFolds(sizes, 7);
  auto cv = CrossValidate(folds, {1e-4, 1e-2, 1.0, 100.0}, false, RlsTask::kRegression,
                          Eigendecomposition());
  ASSERT_TRUE(cv.ok()) << cv.status();
  for (int f = 0; f < 5; ++f) {
    const FoldResult& r = cv->folds[static_cast<size_t>(f)];
    EXPECT_EQ(r.train_rows, 152 - sizes[static_cast<size_t>(f)]);
    auto direct = MakePrimalRidgeSolver(SumsExcept(folds, f, -1));
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ((*direct)->num_examples(), r.train_rows);
    auto want = (*direct)->SolveFinal(r.lambda);
    ASSERT_TRUE(want.ok());
    EXPECT_LT(RelativeDifference(r.model.weights, want->weights), 1e-6) << "round " << f;
    EXPECT_LT(RelativeDifference(r.model.bias, want->bias), 1e-6) << "round " << f;
    auto scores = ApplyLinearModel(*want, folds[static_cast<size_t>(f)].phi);
    ASSERT_TRUE(scores.ok());
    auto rmse = RootMeanSquaredError(*scores, folds[static_cast<size_t>(f)].y);
    ASSERT_TRUE(rmse.ok());
    EXPECT_NEAR(r.test_metrics.at("rmse"), *rmse, 1e-6 * *rmse);
  }
}

// Round f's λ is the best of its inner cross-validation: for every g ≠ f,
// train on the folds other than f and g and score on g; average the K−1
// curves. Recomputed here with ChooseLambda, fold by fold.
TEST(CrossValidationTest, EachRoundChoosesLambdaByInnerCrossValidation) {
  const std::vector<FoldRows> folds = MakeFolds({20, 22, 21, 20}, 8);
  const std::vector<double> grid = {1e-3, 1e-1, 3.0, 30.0, 300.0};
  auto cv = CrossValidate(folds, grid, false, RlsTask::kRegression, Eigendecomposition());
  ASSERT_TRUE(cv.ok()) << cv.status();
  std::vector<double> overall(grid.size(), 0.0);
  for (int f = 0; f < 4; ++f) {
    std::vector<double> mean(grid.size(), 0.0);
    for (int g = 0; g < 4; ++g) {
      if (g == f) continue;
      auto solver = MakePrimalRidgeSolver(SumsExcept(folds, f, g));
      ASSERT_TRUE(solver.ok());
      auto sel = ChooseLambda(**solver, grid, folds[static_cast<size_t>(g)].phi,
                              folds[static_cast<size_t>(g)].y, RlsTask::kRegression);
      ASSERT_TRUE(sel.ok()) << sel.status();
      for (size_t i = 0; i < grid.size(); ++i) mean[i] += sel->curve.scores[i] / 3;
    }
    const FoldResult& r = cv->folds[static_cast<size_t>(f)];
    EXPECT_EQ(r.lambda,
              grid[static_cast<size_t>(BestLambdaIndex(grid, mean, RlsTask::kRegression))]);
    ASSERT_EQ(r.inner_curve.size(), grid.size());
    for (size_t i = 0; i < grid.size(); ++i) {
      EXPECT_NEAR(r.inner_curve[i].second, std::sqrt(mean[i]), 1e-9);
      overall[i] += mean[i] / 4;
    }
  }
  EXPECT_EQ(cv->refit_lambda,
            grid[static_cast<size_t>(BestLambdaIndex(grid, overall, RlsTask::kRegression))]);
}

// Mean over folds, sample std and the pooled metric over every row, on a
// case worked by hand: fold A's two errors are 1 and 1, fold B's one is 3.
TEST(FoldMetricsTest, PooledAndMeanOnAConstructedCase) {
  auto column = [](std::vector<float> v) {
    FloatMatrix m = FloatMatrix::Zeros(static_cast<int64_t>(v.size()), 1);
    for (size_t i = 0; i < v.size(); ++i) m.mutable_row(static_cast<int64_t>(i))[0] = v[i];
    return m;
  };
  std::vector<FoldPredictions> folds;
  folds.push_back({column({1, -1}), column({0, 0})});
  folds.push_back({column({3}), column({0})});
  auto m = SummarizeFolds(folds, RlsTask::kRegression);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->per_fold[0].at("rmse"), 1.0);
  EXPECT_DOUBLE_EQ(m->per_fold[1].at("rmse"), 3.0);
  EXPECT_DOUBLE_EQ(m->mean.at("rmse"), 2.0);
  EXPECT_DOUBLE_EQ(m->stddev.at("rmse"), std::sqrt(2.0));  // sample: ((1)² + (1)²) / (2 − 1)
  EXPECT_DOUBLE_EQ(m->pooled.at("rmse"), std::sqrt(11.0 / 3.0));
  EXPECT_DOUBLE_EQ(m->mean.at("mae"), 2.0);
  EXPECT_DOUBLE_EQ(m->pooled.at("mae"), 5.0 / 3.0);
  EXPECT_EQ(m->pooled_rows, 3);
  // Classification: 1 of 2 right, then 4 of 4: mean 0.75, pooled 5 / 6.
  auto rows = [](std::vector<std::pair<float, float>> v) {
    FloatMatrix x = FloatMatrix::Zeros(static_cast<int64_t>(v.size()), 2);
    for (size_t i = 0; i < v.size(); ++i) {
      x.mutable_row(static_cast<int64_t>(i))[0] = v[i].first;
      x.mutable_row(static_cast<int64_t>(i))[1] = v[i].second;
    }
    return x;
  };
  std::vector<FoldPredictions> classes;
  classes.push_back({rows({{1, 0}, {1, 0}}), rows({{1, -1}, {-1, 1}})});
  classes.push_back(
      {rows({{0, 1}, {0, 1}, {1, 0}, {0, 1}}), rows({{-1, 1}, {-1, 1}, {1, -1}, {-1, 1}})});
  auto c = SummarizeFolds(classes, RlsTask::kClassification);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->mean.at("accuracy"), 0.75);
  EXPECT_DOUBLE_EQ(c->pooled.at("accuracy"), 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(c->stddev.at("accuracy"), std::sqrt(0.125));
  EXPECT_FALSE(SummarizeFolds({}, RlsTask::kRegression).ok());
}

TEST(CrossValidationTest, ExtendsTheGridPastAnEndAndRefusesBadInput) {
  const std::vector<FoldRows> folds = MakeFolds({25, 25, 25}, 6);
  // Every λ of this grid over-regularises: the averaged curve picks its
  // smallest, so the grid grows downwards.
  auto cv = CrossValidate(folds, {10.0, 100.0}, true, RlsTask::kRegression, Eigendecomposition());
  ASSERT_TRUE(cv.ok()) << cv.status();
  EXPECT_LT(cv->refit_lambda, 10.0);
  EXPECT_GT(cv->mean_curve.size(), 2u);
  EXPECT_FALSE(
      CrossValidate({folds[0], folds[1]}, {1.0}, false, RlsTask::kRegression, Eigendecomposition())
          .ok());
  EXPECT_FALSE(CrossValidate(folds, {}, false, RlsTask::kRegression, Eigendecomposition()).ok());
}

constexpr char kCoulombFolds[] = R"pb(
  description: "k-fold"
  data { coulomb { num_molecules: 300 max_atoms: 8 min_atoms: 3 noise_stddev: 0.1 seed: 2 } }
  split { k_fold: 5 seed: 4 }
  encoder {
    random_fourier { num_features: 60 num_group_elements: 4 sigma: 100000 }
    group {
      matrix_permutation { n: 8 noisy_sort_sigma: 1 }
      placement: PLACEMENT_INPUT
    }
    seed: 11
  }
  learner {
    kind: RIDGE
    task: TASK_REGRESSION
    lambda_grid: [ 1e-14, 1e-12, 1e-10, 1e-8 ]
  }
  certificate { num_points: 20 num_group_elements: 4 }
  block_rows: 37
)pb";

// The folds of a plan are KFoldSplits' test parts: disjoint, covering every
// row, sizes within one of each other; every row trains.
TEST(KFoldPlanTest, FoldsAreDisjointAndCoverTheData) {
  auto config = ParseTrainConfig(kCoulombFolds, "test");
  ASSERT_TRUE(config.ok()) << config.status();
  auto plan = PlanData(*config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->train_rows, 300);
  EXPECT_EQ(plan->validation.rows(), 0);
  EXPECT_EQ(plan->test.rows(), 0);
  ASSERT_EQ(plan->fold.size(), 300u);
  for (int8_t role : plan->role) EXPECT_EQ(role, DataPlan::kTrain);
  auto folds = KFoldSplits(300, 5, 4);
  ASSERT_TRUE(folds.ok());
  std::vector<int64_t> count(5, 0);
  for (int f = 0; f < 5; ++f) {
    for (int64_t i : (*folds)[static_cast<size_t>(f)].test) {
      EXPECT_EQ(plan->fold[static_cast<size_t>(i)], f);
    }
  }
  for (int32_t f : plan->fold) {
    ASSERT_GE(f, 0);
    ASSERT_LT(f, 5);
    ++count[static_cast<size_t>(f)];
  }
  for (int64_t c : count) EXPECT_EQ(c, 60);
}

TEST(KFoldTrainingTest, ReportsEveryRoundAndWritesTheRefit) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kCoulombFolds, "folds");
  TrainSummary summary;
  auto version = RunTraining(o, &summary);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(summary.test_rows, 300);
  const std::string json = ReadText(*version + "/report.json");
  EXPECT_THAT(json, HasSubstr("\"cross_validation\": {\"k\": 5"));
  EXPECT_THAT(json, HasSubstr("\"written\": \"refit on all 300 rows at lambda"));
  EXPECT_THAT(json, HasSubstr("\"test_rows\": 60"));
  EXPECT_THAT(json, HasSubstr("\"train_rows\": 240, \"inner_train_rows\": [180, 180, 180, 180], "
                              "\"inner_validation_rows\": [60, 60, 60, 60], \"test_rows\": 60"));
  EXPECT_THAT(ReadText(*version + "/report.md"), HasSubstr("mean ± std over 5 folds"));
  // The model page pools the rounds' test folds: one residual per row.
  const std::string page = ReadText(*version + "/report.html");
  const size_t plot = page.find("<svg class=\"plot\" id=\"residuals\"");
  ASSERT_NE(plot, std::string::npos);
  int residuals = 0;
  for (size_t at = page.find("<circle", plot); at < page.find("</svg>", plot);
       at = page.find("<circle", at + 1)) {
    ++residuals;
  }
  EXPECT_EQ(residuals, 300);
  auto model = Model::Load(*version + "/model.bundle");
  ASSERT_TRUE(model.ok()) << model.status();
  const auto& metrics = (*model)->manifest().metrics();
  ASSERT_TRUE(metrics.contains("test_rmse") && metrics.contains("test_rmse_std"));
  EXPECT_EQ(metrics.at("test_rmse"), summary.test_metrics.at("rmse"));
  EXPECT_GT(metrics.at("test_rmse_std"), 0);
  EXPECT_TRUE((*model)->has_head());
  EXPECT_TRUE((*model)->manifest().certificate().num_points() > 0);
}

// The number after `key` in a report.json (NaN when absent).
double JsonNumberAfter(const std::string& json, const std::string& key) {
  const size_t at = json.find(key);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size(), nullptr);
}

// A stratified k-fold run end to end: report.json says the rows of every
// round, the mean and std of the fold metrics and which std, the pooled
// metric over all rows, and how the featurize time splits; the bundle's
// metrics and the run's summary agree with it.
TEST(KFoldTrainingTest, StratifiedRunReportsRowsMeanStdAndPooledMetrics) {
  TempDir dir;
  const std::string config = absl::StrReplaceAll(
      kCoulombFolds, {{"k_fold: 5 seed: 4", "k_fold: 5 stratify: true seed: 4"}});
  TrainOptions o = RunOptions(dir, config, "stratified");
  TrainSummary summary;
  auto version = RunTraining(o, &summary);
  ASSERT_TRUE(version.ok()) << version.status();
  const std::string json = ReadText(*version + "/report.json");
  EXPECT_THAT(json, HasSubstr("\"cross_validation\": {\"k\": 5, \"stratified\": true"));
  EXPECT_THAT(json, HasSubstr("inner cross-validation of its K-1 training folds"));
  EXPECT_THAT(json, HasSubstr("\"std_kind\": \"sample standard deviation over the folds (K - 1"));
  EXPECT_THAT(json, HasSubstr("\"pooled_rows\": 300"));
  EXPECT_THAT(json, HasSubstr("\"rows_meaning\": \"k-fold"));
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(json, HasSubstr("\"train_rows\": 240, \"inner_train_rows\": [180, 180, 180, 180]"));
  }
  // Pooled and mean: both in the report, the bundle and the summary.
  const double pooled = JsonNumberAfter(json, "\"pooled\": {\"mae\": ");
  const double mean = JsonNumberAfter(json, "\"mean\": {\"mae\": ");
  EXPECT_GT(pooled, 0);
  EXPECT_GT(mean, 0);
  EXPECT_EQ(summary.k_fold, 5);
  EXPECT_EQ(summary.test_rows, 300);
  EXPECT_DOUBLE_EQ(summary.test_metrics_pooled.at("mae"), pooled);
  EXPECT_DOUBLE_EQ(summary.test_metrics.at("mae"), mean);
  // Equal folds: the pooled MAE is the mean of the fold MAEs; the pooled
  // RMSE is at least the mean of the fold RMSEs.
  EXPECT_NEAR(pooled, mean, 1e-9 * mean);
  EXPECT_GE(summary.test_metrics_pooled.at("rmse"), summary.test_metrics.at("rmse") * (1 - 1e-12));
  auto model = Model::Load(*version + "/model.bundle");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->manifest().metrics().at("test_rmse_pooled"),
            summary.test_metrics_pooled.at("rmse"));
  // Featurize time is the feature maps' alone; the accumulation is apart.
  // Every round featurizes the 300 rows with its own map, the written
  // model's map once more: 6 × 300.
  EXPECT_THAT(json, HasSubstr("\"featurized_rows\": 1800"));
  EXPECT_THAT(json, HasSubstr("\"accumulate\": {\"rows\": 1800"));
  const double features = JsonNumberAfter(json, "\"featurize_seconds\": ");
  const double accumulate = JsonNumberAfter(json, "\"accumulate\": {\"rows\": 1800, \"seconds\": ");
  const double stage = JsonNumberAfter(json, "\"featurize\": ");
  EXPECT_GE(features, 0);
  EXPECT_GE(accumulate, 0);
  EXPECT_LE(features + accumulate, stage * 1.01 + 1e-3);
  const std::string md = ReadText(*version + "/report.md");
  EXPECT_THAT(md, HasSubstr("pooled over all 300 test rows"));
  EXPECT_THAT(md, HasSubstr("stratified by the target"));
  EXPECT_THAT(md, HasSubstr("| 1 | 240 | 60 / 60 / 60 / 60 | 60 |"));
}

// The console lines of a k-fold run name every count.
TEST(KFoldTrainingTest, ConsoleNamesEveryCount) {
  TrainReport r;
  r.k_fold = 3;
  r.stratified = true;
  r.folds.push_back({20, {10, 10}, {10, 10}, 10, 0.5, {{"rmse", 2.0}}});
  r.folds.push_back({20, {10, 10}, {10, 10}, 10, 0.5, {{"rmse", 4.0}}});
  r.folds.push_back({20, {10, 10}, {10, 10}, 10, 0.25, {{"rmse", 3.0}}});
  r.test_metrics = {{"rmse", 3.0}};
  r.test_metrics_std = {{"rmse", 1.0}};
  r.test_metrics_pooled = {{"rmse", std::sqrt(29.0 / 3)}};
  r.pooled_rows = 30;
  r.written_model = "refit on all 30 rows";
  const std::string out = CrossValidationConsole(r);
  EXPECT_THAT(out, HasSubstr("inner 2-fold cross-validation of its 2 training folds"));
  EXPECT_THAT(out, HasSubstr("round 2: refit on 20 train rows (inner validation rows 10/10), "
                             "lambda 0.5, test rmse=4 on 10 rows"));
  EXPECT_THAT(out,
              HasSubstr("test rmse: mean 3 +- 1 (sample std over 3 folds, K-1), pooled 3.10913 "
                        "over all 30 test rows"));
  EXPECT_THAT(out, HasSubstr("written model: refit on all 30 rows"));
}

TEST(KFoldTrainingTest, RefusesWhatDoesNotCombine) {
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"k_fold: 5", "k_fold: 2"},
                                                        {"k_fold: 5", "k_fold: 5 train: 100"},
                                                        {"k_fold: 5", "stratify: true"},
                                                        {"kind: RIDGE", "kind: NONE"}}) {
    auto config = ParseTrainConfig(absl::StrReplaceAll(kCoulombFolds, {{from, to}}), "test");
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << to;
    EXPECT_THAT(config.status().message(), HasSubstr("split.k_fold")) << to;
  }
  TempDir dir;
  TrainOptions o = RunOptions(dir, kCoulombFolds, "folds");
  o.num_shards = 2;
  EXPECT_THAT(RunShard(o).status().message(), HasSubstr("split.k_fold"));
}

}  // namespace
}  // namespace invariant::train
