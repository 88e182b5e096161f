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
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/data/splits.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
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
    EXPECT_EQ(r.validation_rows, sizes[static_cast<size_t>((f + 1) % 4)]);
    EXPECT_EQ(r.train_rows + r.validation_rows + r.test_rows, 120);
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
  EXPECT_THAT(ReadText(*version + "/report.md"), HasSubstr("mean ± std over 5 folds"));
  auto model = Model::Load(*version + "/model.bundle");
  ASSERT_TRUE(model.ok()) << model.status();
  const auto& metrics = (*model)->manifest().metrics();
  ASSERT_TRUE(metrics.contains("test_rmse") && metrics.contains("test_rmse_std"));
  EXPECT_EQ(metrics.at("test_rmse"), summary.test_metrics.at("rmse"));
  EXPECT_GT(metrics.at("test_rmse_std"), 0);
  EXPECT_TRUE((*model)->has_head());
  EXPECT_TRUE((*model)->manifest().certificate().num_points() > 0);
}

TEST(KFoldTrainingTest, RefusesWhatDoesNotCombine) {
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"k_fold: 5", "k_fold: 2"},
                                                        {"k_fold: 5", "k_fold: 5 train: 100"},
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
