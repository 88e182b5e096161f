// Folds stratified by the target (train/data/stratified_folds.h) and a
// stratified k-fold plan (split { k_fold: K stratify: true }).
#include "train/data/stratified_folds.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/base/random.h"
#include "gtest/gtest.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"

namespace invariant::train {
namespace {

// Every row in a fold of [0, k), and fold sizes within one of each other.
void ExpectPartition(const std::vector<int32_t>& fold, int k) {
  std::vector<int64_t> size(static_cast<size_t>(k), 0);
  for (int32_t f : fold) {
    ASSERT_GE(f, 0);
    ASSERT_LT(f, k);
    ++size[static_cast<size_t>(f)];
  }
  const auto [lo, hi] = std::minmax_element(size.begin(), size.end());
  EXPECT_LE(*hi - *lo, 1);
  EXPECT_EQ(std::accumulate(size.begin(), size.end(), int64_t{0}),
            static_cast<int64_t>(fold.size()));
}

// Indices of `targets`, largest first.
std::vector<size_t> ByTargetDescending(const std::vector<double>& targets) {
  std::vector<size_t> order(targets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return targets[a] > targets[b]; });
  return order;
}

TEST(StratifiedFoldsTest, ByTargetPartitionsAndSpreadsTheLargestTargets) {
  Rng rng(3);
  std::vector<double> targets(103);
  for (double& t : targets) t = rng.Normal();
  targets[17] = 1e6;  // outliers, as QM7's: each in a different fold
  targets[40] = 2e6;
  targets[90] = 3e6;
  auto fold = FoldsStratifiedByTarget(targets, 5, 9);
  ASSERT_TRUE(fold.ok()) << fold.status();
  ASSERT_EQ(fold->size(), 103u);
  ExpectPartition(*fold, 5);
  // Every run of 5 consecutive targets in sorted order is spread over the 5
  // folds: the 5 largest (the outliers among them) are in different folds.
  const std::vector<size_t> order = ByTargetDescending(targets);
  for (size_t start = 0; start + 5 <= order.size(); start += 5) {
    std::set<int32_t> folds;
    for (size_t i = start; i < start + 5; ++i) folds.insert((*fold)[order[i]]);
    EXPECT_EQ(folds.size(), 5u) << "sorted rows " << start << "..." << start + 4;
  }
  // Seeded: the same seed gives the same folds, another seed others.
  EXPECT_EQ(*FoldsStratifiedByTarget(targets, 5, 9), *fold);
  EXPECT_NE(*FoldsStratifiedByTarget(targets, 5, 10), *fold);
}

TEST(StratifiedFoldsTest, ByTargetTiesAndErrors) {
  // All targets equal: the seeded order decides, sizes still within one.
  const std::vector<double> same(23, 1.5);
  auto fold = FoldsStratifiedByTarget(same, 4, 1);
  ASSERT_TRUE(fold.ok());
  ExpectPartition(*fold, 4);
  EXPECT_NE(*FoldsStratifiedByTarget(same, 4, 2), *fold);
  EXPECT_FALSE(FoldsStratifiedByTarget(same, 1, 1).ok());
  EXPECT_FALSE(FoldsStratifiedByTarget(same, 24, 1).ok());
  EXPECT_FALSE(FoldsStratifiedByTarget({1.0, std::nan(""), 2.0}, 2, 1).ok());
}

TEST(StratifiedFoldsTest, ByClassKeepsClassProportions) {
  std::vector<int32_t> labels;
  const std::vector<int64_t> class_sizes = {50, 23, 7, 1};
  for (int32_t c = 0; c < 4; ++c) labels.insert(labels.end(), class_sizes[c], c);
  Rng rng(4);
  for (size_t i = labels.size() - 1; i > 0; --i)
    std::swap(labels[i], labels[rng.UniformInt(i + 1)]);
  auto fold = FoldsStratifiedByClass(labels, 4, 5, 11);
  ASSERT_TRUE(fold.ok()) << fold.status();
  ExpectPartition(*fold, 5);
  for (int32_t c = 0; c < 4; ++c) {
    std::vector<int64_t> count(5, 0);
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == c) ++count[static_cast<size_t>((*fold)[i])];
    }
    for (int64_t n : count) {
      EXPECT_GE(n, class_sizes[c] / 5) << "class " << c;
      EXPECT_LE(n, (class_sizes[c] + 4) / 5) << "class " << c;
    }
  }
  EXPECT_FALSE(FoldsStratifiedByClass({0, 1, 4}, 2, 2, 1).ok());
}

constexpr char kCoulombStratified[] = R"pb(
  data { coulomb { num_molecules: 203 max_atoms: 8 min_atoms: 3 noise_stddev: 0.1 seed: 2 } }
  split { k_fold: 5 stratify: true seed: 4 }
  encoder {
    random_fourier { num_features: 20 num_group_elements: 1 sigma: 100000 }
    group { identity { dim: 64 } }
    seed: 11
  }
  learner {
    kind: RIDGE
    task: TASK_REGRESSION
    lambda_grid: [ 1e-8 ]
  }
)pb";

// A stratified plan: its folds are FoldsStratifiedByTarget's of the
// molecules' energies, so the five largest energies are in five folds.
TEST(StratifiedFoldsTest, StratifiedPlanSpreadsTheLargestTargets) {
  auto config = ParseTrainConfig(kCoulombStratified, "test");
  ASSERT_TRUE(config.ok()) << config.status();
  auto plan = PlanData(*config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->fold.size(), 203u);
  ExpectPartition(plan->fold, 5);
  std::vector<double> targets(203);
  ASSERT_TRUE(ForEachTrainBlock(*plan, 64, 0, 1, [&](const TrainBlock& b) {
                for (int64_t i = 0; i < b.n; ++i) {
                  targets[static_cast<size_t>(b.first_ordinal + i)] =
                      b.y[i * plan->schema.num_targets];
                }
                return absl::OkStatus();
              }).ok());
  auto want = FoldsStratifiedByTarget(targets, 5, 4);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(plan->fold, *want);
  const std::vector<size_t> order = ByTargetDescending(targets);
  std::set<int32_t> top;
  for (size_t i = 0; i < 5; ++i) top.insert(plan->fold[order[i]]);
  EXPECT_EQ(top.size(), 5u);
  // Unstratified, the same seed gives random folds (KFoldSplits').
  auto random =
      ParseTrainConfig(absl::StrReplaceAll(kCoulombStratified, {{"stratify: true", ""}}), "test");
  ASSERT_TRUE(random.ok());
  auto random_plan = PlanData(*random);
  ASSERT_TRUE(random_plan.ok());
  EXPECT_NE(random_plan->fold, plan->fold);
}

// A stratified classification plan keeps every class's share in every fold.
TEST(StratifiedFoldsTest, StratifiedClassificationPlanKeepsClassProportions) {
  auto config =
      ParseTrainConfig(R"pb(
                         data { xperm { seed: 1 } }
                         split { k_fold: 4 stratify: true seed: 2 }
                         encoder {
                           random_fourier { num_features: 10 num_group_elements: 1 sigma: 1 }
                           group { identity { dim: 40 } }
                         }
                         learner {
                           kind: RIDGE
                           task: TASK_CLASSIFICATION
                           lambda_grid: [ 1e-3 ]
                         }
                       )pb",
                       "test");
  ASSERT_TRUE(config.ok()) << config.status();
  auto plan = PlanData(*config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectPartition(plan->fold, 4);
  std::vector<int32_t> labels;
  ASSERT_TRUE(ForEachTrainBlock(*plan, 4096, 0, 1, [&](const TrainBlock& b) {
                labels.insert(labels.end(), b.labels, b.labels + b.n);
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(labels.size(), plan->fold.size());
  for (int32_t c = 0; c < 2; ++c) {
    std::vector<int64_t> count(4, 0);
    int64_t total = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] != c) continue;
      ++count[static_cast<size_t>(plan->fold[i])];
      ++total;
    }
    ASSERT_GT(total, 0);
    for (int64_t n : count) {
      EXPECT_GE(n, total / 4) << "class " << c;
      EXPECT_LE(n, (total + 3) / 4) << "class " << c;
    }
  }
}

}  // namespace
}  // namespace invariant::train
