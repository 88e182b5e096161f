#include "train/data/splits.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace invariant::train {
namespace {

// Asserts the parts are pairwise disjoint and, when `n` >= 0, cover 0..n-1.
void ExpectDisjointCover(const std::vector<std::vector<int64_t>>& parts, int64_t n) {
  std::vector<int64_t> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  std::set<int64_t> unique(all.begin(), all.end());
  EXPECT_EQ(unique.size(), all.size()) << "parts overlap";
  if (n >= 0) {
    EXPECT_EQ(static_cast<int64_t>(all.size()), n);
    EXPECT_EQ(*unique.begin(), 0);
    EXPECT_EQ(*unique.rbegin(), n - 1);
  }
}

TEST(SplitsTest, ShuffleIsASeededPermutation) {
  const std::vector<int64_t> a = ShuffledIndices(1000, 3);
  EXPECT_EQ(a, ShuffledIndices(1000, 3));
  EXPECT_NE(a, ShuffledIndices(1000, 4));
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(a, identity);
}

TEST(SplitsTest, ByCountsIsDisjointAndCoversWithRest) {
  auto split = SplitByCounts(100, 60, 15, kRest, 1);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->train.size(), 60u);
  EXPECT_EQ(split->validation.size(), 15u);
  EXPECT_EQ(split->test.size(), 25u);
  ExpectDisjointCover({split->train, split->validation, split->test}, 100);
}

TEST(SplitsTest, ByCountsWithoutRestLeavesRowsOut) {
  auto split = SplitByCounts(100, 10, 0, 20, 1);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->test.size(), 20u);
  ExpectDisjointCover({split->train, split->validation, split->test}, -1);
}

TEST(SplitsTest, ByCountsRejectsTooManyRows) {
  auto split = SplitByCounts(10, 8, 3, 0, 1);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("10 rows"), std::string::npos);
  EXPECT_FALSE(SplitByCounts(10, kRest, kRest, 0, 1).ok());
  EXPECT_FALSE(SplitByCounts(10, -3, 0, 0, 1).ok());
}

TEST(SplitsTest, ByFractions) {
  auto split = SplitByFractions(1000, 0.7, 0.1, 9);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->train.size(), 700u);
  EXPECT_EQ(split->validation.size(), 100u);
  EXPECT_EQ(split->test.size(), 200u);
  ExpectDisjointCover({split->train, split->validation, split->test}, 1000);
  EXPECT_FALSE(SplitByFractions(10, 0.8, 0.3, 1).ok());
}

TEST(SplitsTest, KFoldTestPartsPartitionAndTrainIsTheComplement) {
  auto folds = KFoldSplits(103, 5, 2);
  ASSERT_TRUE(folds.ok());
  ASSERT_EQ(folds->size(), 5u);
  std::vector<std::vector<int64_t>> tests;
  for (const Fold& f : *folds) {
    EXPECT_GE(f.test.size(), 20u);
    EXPECT_LE(f.test.size(), 21u);
    ExpectDisjointCover({f.train, f.test}, 103);
    tests.push_back(f.test);
  }
  ExpectDisjointCover(tests, 103);
  EXPECT_FALSE(KFoldSplits(3, 5, 1).ok());
  EXPECT_FALSE(KFoldSplits(10, 1, 1).ok());
}

TEST(SplitsTest, PerClassSampleTakesNOfEachClass) {
  std::vector<int32_t> labels;
  for (int i = 0; i < 300; ++i) labels.push_back(i % 3 == 0 ? 0 : (i % 3 == 1 ? 1 : 2));
  auto rows = SamplePerClass(labels, 3, 25, 8);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 75u);
  int counts[3] = {0, 0, 0};
  for (int64_t r : *rows) ++counts[labels[r]];
  EXPECT_EQ(counts[0], 25);
  EXPECT_EQ(counts[1], 25);
  EXPECT_EQ(counts[2], 25);
  ExpectDisjointCover({*rows}, -1);
  // Classes are interleaved, not in blocks.
  EXPECT_FALSE(std::is_sorted(rows->begin(), rows->end(),
                              [&](int64_t a, int64_t b) { return labels[a] < labels[b]; }));
}

TEST(SplitsTest, PerClassSplitCoversAndRejectsSmallClasses) {
  std::vector<int32_t> labels(50, 0);
  labels.resize(60, 1);  // class 1 has 10 rows
  auto split = SplitPerClass(labels, 2, 5, 3, 4);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->train.size(), 10u);
  EXPECT_EQ(split->validation.size(), 6u);
  ExpectDisjointCover({split->train, split->validation, split->test}, 60);
  auto too_many = SamplePerClass(labels, 2, 11, 4);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("class 1 has 10 rows, need 11"), std::string::npos);
}

TEST(SplitsTest, ComplementIsAscending) {
  EXPECT_EQ(Complement(6, std::vector<int64_t>{4, 1}), (std::vector<int64_t>{0, 2, 3, 5}));
}

}  // namespace
}  // namespace invariant::train
