// Cross-validated runs without a leak (train/pipeline/cv_rounds.h): every
// round's feature map is fitted on that round's training rows only (its
// preprocess statistics, its templates drawn from data), for
// leave-one-group-out and k-fold splits; the written model keeps the map of
// all rows.
#include "train/pipeline/cv_rounds.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/base/random.h"
#include "core/model/bank_tensors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "train/data/row_source.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/feature_map.h"

namespace invariant::train {
namespace {

constexpr int64_t kDim = 4;

// Centred rows, CDF templates drawn from the (centred) data: every template
// is one training row minus the round's mean, nothing else.
constexpr char kConfig[] = R"pb(
  description: "cv rounds"
  data { coulomb { num_molecules: 40 max_atoms: 2 seed: 1 } }
  split { leave_one_group_out: true }
  preprocess { center: true }
  encoder {
    cdf {
      num_templates: NUM_TEMPLATES
      num_group_elements: 1
      num_bins: 4
      range: 1.0
      template_kind: TEMPLATE_DATA
    }
    group { identity { dim: 4 } }
    seed: 3
  }
  learner {
    kind: RIDGE
    task: TASK_REGRESSION
    lambda_grid: [ 1e-3, 1e-1, 10 ]
  }
  block_rows: 7
)pb";

v1::TrainConfig Config(int num_templates, const std::string& split) {
  const std::string text = absl::StrReplaceAll(
      kConfig,
      {{"NUM_TEMPLATES", std::to_string(num_templates)}, {"leave_one_group_out: true", split}});
  absl::StatusOr<v1::TrainConfig> config = ParseTrainConfig(text, "test");
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

// 4 groups of 10 rows (groups a, b, c, far, in row order a b c far a b …):
// x ~ N(0, 1)^4, plus 100 in every coordinate for group "far"; y = Σ x.
Dataset Rows() {
  Rng rng(17);
  const std::vector<std::string> names = {"a", "b", "c", "far"};
  Dataset data;
  data.name = "offset groups";
  data.x = FloatMatrix::Zeros(40, kDim);
  data.y = FloatMatrix::Zeros(40, 1);
  data.input_shape = {kDim};
  for (int64_t i = 0; i < 40; ++i) {
    const size_t g = static_cast<size_t>(i % 4);
    double sum = 0;
    for (int64_t j = 0; j < kDim; ++j) {
      const float v = static_cast<float>(rng.Normal() + (names[g] == "far" ? 100.0 : 0.0));
      data.x.mutable_row(i)[j] = v;
      sum += v;
    }
    data.y.mutable_row(i)[0] = static_cast<float>(sum);
    data.groups.push_back(names[g]);
  }
  return data;
}

// A plan over `data` whose fold of row i is fold[i] (every row trains).
DataPlan PlanOver(const Dataset& data, std::vector<int32_t> fold, int k,
                  std::vector<std::string> fold_groups) {
  DataPlan plan;
  plan.train = MakeDatasetSource(data);
  plan.schema = plan.train->schema();
  plan.role.assign(static_cast<size_t>(data.rows()), DataPlan::kTrain);
  plan.fold = std::move(fold);
  plan.num_folds = k;
  plan.fold_groups = std::move(fold_groups);
  plan.train_rows = data.rows();
  plan.classify = false;
  return plan;
}

// The per-coordinate mean of the rows of `data` outside fold `held_out`
// (-1: every row).
std::vector<double> MeanOutside(const Dataset& data, const std::vector<int32_t>& fold,
                                int held_out) {
  std::vector<double> mean(static_cast<size_t>(data.dim()), 0.0);
  int64_t n = 0;
  for (int64_t i = 0; i < data.rows(); ++i) {
    if (fold[static_cast<size_t>(i)] == held_out) continue;
    for (int64_t j = 0; j < data.dim(); ++j) mean[static_cast<size_t>(j)] += data.x.row(i)[j];
    ++n;
  }
  for (double& m : mean) m /= static_cast<double>(n);
  return mean;
}

// Whether `row` is row i of `data` minus `mean` (to float rounding).
bool IsCentredRow(const float* row, const Dataset& data, int64_t i, const FloatMatrix& mean) {
  for (int64_t j = 0; j < data.dim(); ++j) {
    if (std::abs(row[j] - (data.x.row(i)[j] - mean.data()[j])) > 1e-4) return false;
  }
  return true;
}

// Every round: its preprocess mean is the mean of its training rows, and
// every template is one of its training rows centred by that mean, never a
// held-out row. With num_templates = the round's training rows, the
// templates are exactly its training rows (each once).
void ExpectEveryRoundFitsItsTrainingRowsOnly(const v1::TrainConfig& config, const Dataset& data,
                                             DataPlan& plan) {
  const int k = plan.num_folds;
  absl::StatusOr<FeatureMap> written = BuildFeatureMap(config, plan);
  ASSERT_TRUE(written.ok()) << written.status();
  int rounds = 0;
  TrainReport report;
  auto run =
      RunCrossValidation(config, plan, *written->model, report, [&](int f, const FeatureMap& map) {
        ++rounds;
        const std::vector<double> want = MeanOutside(data, plan.fold, f);
        const std::vector<double> all = MeanOutside(data, plan.fold, -1);
        const FloatMatrix& mean = map.tensors.f32.at("preprocess/mean");
        ASSERT_EQ(mean.size(), kDim);
        for (int64_t j = 0; j < kDim; ++j) {
          EXPECT_NEAR(mean.data()[j], want[static_cast<size_t>(j)], 1e-4) << "round " << f;
          // The groups are far apart: the mean of all rows is not the round's.
          EXPECT_GT(std::abs(want[static_cast<size_t>(j)] - all[static_cast<size_t>(j)]), 1.0);
        }
        const FloatMatrix& bank = map.tensors.f32.at(kBankTensor);
        std::vector<int> used(static_cast<size_t>(data.rows()), 0);
        for (int64_t t = 0; t < bank.rows(); ++t) {
          int matches = 0;
          for (int64_t i = 0; i < data.rows(); ++i) {
            if (!IsCentredRow(bank.row(t), data, i, mean)) continue;
            EXPECT_NE(plan.fold[static_cast<size_t>(i)], f)
                << "round " << f << ": template " << t << " is held-out row " << i;
            ++used[static_cast<size_t>(i)];
            ++matches;
          }
          EXPECT_EQ(matches, 1) << "round " << f << ": template " << t;
        }
        for (int64_t i = 0; i < data.rows(); ++i) {
          EXPECT_EQ(used[static_cast<size_t>(i)], plan.fold[static_cast<size_t>(i)] == f ? 0 : 1)
              << "round " << f << ", row " << i;
        }
      });
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(rounds, k);
  // The written model's map is fitted on every row and refit on every row.
  const FloatMatrix& mean = written->tensors.f32.at("preprocess/mean");
  const std::vector<double> all = MeanOutside(data, plan.fold, -1);
  for (int64_t j = 0; j < kDim; ++j) EXPECT_NEAR(mean.data()[j], all[static_cast<size_t>(j)], 1e-4);
  EXPECT_EQ(run->cv.refit_rows, data.rows());
  EXPECT_EQ(run->cv.folds.size(), static_cast<size_t>(k));
  EXPECT_EQ(run->cv.pooled_rows, data.rows());
  EXPECT_EQ(run->first.rows(), 10);
  // Every round featurizes every row once, and the written model once more.
  EXPECT_EQ(report.featurized_rows, (k + 1) * data.rows());
  EXPECT_EQ(report.k_fold, k);
  EXPECT_EQ(report.folds.size(), static_cast<size_t>(k));
}

TEST(CvRoundsTest, LeaveOneGroupOutFitsEachRoundOnItsOwnGroupsOnly) {
  const Dataset data = Rows();
  std::vector<int32_t> fold;
  for (int64_t i = 0; i < data.rows(); ++i) fold.push_back(static_cast<int32_t>(i % 4));
  DataPlan plan = PlanOver(data, fold, 4, {"a", "b", "c", "far"});
  // 30 templates: every round's 30 training rows, each once.
  ExpectEveryRoundFitsItsTrainingRowsOnly(Config(30, "leave_one_group_out: true"), data, plan);
}

TEST(CvRoundsTest, KFoldFitsEachRoundOnItsOwnFoldsOnly) {
  const Dataset data = Rows();
  // Folds of 10 consecutive rows (each with rows of every group).
  std::vector<int32_t> fold;
  for (int64_t i = 0; i < data.rows(); ++i) fold.push_back(static_cast<int32_t>(i / 10));
  DataPlan plan = PlanOver(data, fold, 4, {});
  const v1::TrainConfig config = Config(30, "k_fold: 4");
  int rounds = 0;
  absl::StatusOr<FeatureMap> written = BuildFeatureMap(config, plan);
  ASSERT_TRUE(written.ok()) << written.status();
  TrainReport report;
  auto run = RunCrossValidation(
      config, plan, *written->model, report, [&](int f, const FeatureMap& round_map) {
        ++rounds;
        const std::vector<double> want = MeanOutside(data, plan.fold, f);
        const FloatMatrix& mean = round_map.tensors.f32.at("preprocess/mean");
        for (int64_t j = 0; j < kDim; ++j) {
          EXPECT_NEAR(mean.data()[j], want[static_cast<size_t>(j)], 1e-4) << "round " << f;
        }
        const FloatMatrix& bank = round_map.tensors.f32.at(kBankTensor);
        ASSERT_EQ(bank.rows(), 30);
        for (int64_t t = 0; t < bank.rows(); ++t) {
          for (int64_t i = 0; i < data.rows(); ++i) {
            if (plan.fold[static_cast<size_t>(i)] != f) continue;
            EXPECT_FALSE(IsCentredRow(bank.row(t), data, i, mean))
                << "round " << f << ": template " << t << " is held-out row " << i;
          }
        }
      });
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(rounds, 4);
  EXPECT_EQ(report.featurized_rows, 5 * 40);
}

// A round cannot draw more templates than its training rows: the count is
// checked against the round's rows (30), not all rows (40).
TEST(CvRoundsTest, DataTemplatesAreCountedAgainstTheRoundsTrainingRows) {
  const Dataset data = Rows();
  std::vector<int32_t> fold;
  for (int64_t i = 0; i < data.rows(); ++i) fold.push_back(static_cast<int32_t>(i % 4));
  DataPlan plan = PlanOver(data, fold, 4, {"a", "b", "c", "far"});
  const v1::TrainConfig config = Config(35, "leave_one_group_out: true");
  EXPECT_TRUE(BuildFeatureMap(config, plan).ok());
  absl::StatusOr<FeatureMap> round = BuildFeatureMap(config, plan, 0);
  EXPECT_EQ(round.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(round.status().message()),
              ::testing::HasSubstr("must be <= the training rows (30)"));
  EXPECT_EQ(BuildFeatureMap(config, plan, 4).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace invariant::train
