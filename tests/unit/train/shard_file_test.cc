// Shard files: written whole, merged a column at a time, refused with the
// right code when they are another run's, truncated or padded; the reduce's
// wait for them; and the training memory estimate they are sized by.
#include "train/pipeline/shard_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/training_memory.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

constexpr uint64_t kFingerprint = 0x1234;

GramAccumulator SmallSums(int64_t d, int64_t t, float value) {
  GramAccumulator acc = *GramAccumulator::Create(d, t);
  std::vector<float> phi(static_cast<size_t>(3 * d), value), y(static_cast<size_t>(3 * t), 1.0f);
  EXPECT_TRUE(acc.Add(3, phi.data(), y.data()).ok());
  return acc;
}

TEST(ShardFileTest, TwoShardFilesMergeIntoTheirSum) {
  TempDir dir;
  const GramAccumulator a = SmallSums(5, 2, 1.0f), b = SmallSums(5, 2, 2.0f);
  const std::string pa = ShardFilePath(dir.path(), 0, 2), pb = ShardFilePath(dir.path(), 1, 2);
  ASSERT_TRUE(WriteShardFile(pa, kFingerprint, 0, 2, a).ok());
  ASSERT_TRUE(WriteShardFile(pb, kFingerprint, 1, 2, b).ok());
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(pa)), ShardFileBytes(5, 2));
  EXPECT_FALSE(fs::exists(pa + ".tmp"));
  GramAccumulator total = *GramAccumulator::Create(5, 2);
  ASSERT_TRUE(MergeShardFile(pa, kFingerprint, 0, 2, &total).ok());
  ASSERT_TRUE(MergeShardFile(pb, kFingerprint, 1, 2, &total).ok());
  GramAccumulator expected = *GramAccumulator::Create(5, 2);
  ASSERT_TRUE(expected.Merge(a).ok() && expected.Merge(b).ok());
  EXPECT_EQ(total.count(), 6);
  EXPECT_EQ(total.PhiTPhi(), expected.PhiTPhi());
  EXPECT_EQ(total.phi_t_y(), expected.phi_t_y());
}

TEST(ShardFileTest, RefusesAnotherShapeATruncatedOrPaddedFileAndAnotherRun) {
  TempDir dir;
  const std::string path = ShardFilePath(dir.path(), 0, 1);
  ASSERT_TRUE(WriteShardFile(path, kFingerprint, 0, 1, SmallSums(5, 2, 1.0f)).ok());
  GramAccumulator wider = *GramAccumulator::Create(6, 2);
  const absl::Status shape = MergeShardFile(path, kFingerprint, 0, 1, &wider);
  EXPECT_EQ(shape.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(shape.message(), HasSubstr("for 6 features and 2 targets"));
  GramAccumulator total = *GramAccumulator::Create(5, 2);
  EXPECT_EQ(MergeShardFile(path, kFingerprint + 1, 0, 1, &total).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MergeShardFile(path, kFingerprint, 0, 2, &total).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MergeShardFile(path + "x", kFingerprint, 0, 1, &total).code(),
            absl::StatusCode::kNotFound);
  const auto size = fs::file_size(path);
  fs::resize_file(path, size - 8);
  const absl::Status truncated = MergeShardFile(path, kFingerprint, 0, 1, &total);
  EXPECT_EQ(truncated.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(truncated.message(), HasSubstr("truncated or padded"));
  fs::resize_file(path, size + 8);
  EXPECT_EQ(MergeShardFile(path, kFingerprint, 0, 1, &total).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(total.count(), 0) << "nothing was added from a refused file";
}

TEST(ShardFileTest, WaitNamesTheMissingShardsAndRemoveClearsTheRun) {
  TempDir dir;
  const std::string run = dir.path() + "/run";
  ASSERT_TRUE(
      WriteShardFile(ShardFilePath(run, 1, 3), kFingerprint, 1, 3, SmallSums(2, 1, 1)).ok());
  const absl::Status missing = WaitForShardFiles(run, 3, /*timeout_seconds=*/0);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("shards 0, 2 of 3 still missing"));
  for (int i : {0, 2}) {
    ASSERT_TRUE(
        WriteShardFile(ShardFilePath(run, i, 3), kFingerprint, i, 3, SmallSums(2, 1, 1)).ok());
  }
  EXPECT_TRUE(WaitForShardFiles(run, 3, 0).ok());
  RemoveShardFiles(run, 3);
  EXPECT_FALSE(fs::exists(run));
}

TEST(TrainingMemoryTest, GrowsAsTheGramAndChargesEachSolverItsMatrices) {
  TrainingShape s;
  s.feature_dim = 20000;
  s.target_dim = 10;
  s.input_dim = 3072;
  s.validation_rows = 1000;
  s.block_rows = 3750;
  s.prepared_bytes = int64_t{700} << 20;
  const int64_t gram = s.feature_dim * s.feature_dim * 8;
  s.solver = HeadSolver::kCgGram;
  const TrainingMemory cg = EstimateTrainingMemory(s);
  // The itemised sum: Gram, ΦᵀY and the three vectors; a block of features,
  // the accumulator's staging block, two blocks of inputs; 16 MiB + 5 %.
  const int64_t sums = gram + 20000 * 10 * 8 + 3 * 20000 * 8;
  const int64_t featurize = 3750 * 20000 * 4 + 512 * 20000 * 8 + 2 * 3750 * 3072 * 4;
  EXPECT_EQ(cg.shard_bytes, s.prepared_bytes + sums + featurize + (16 << 20) + sums / 20);
  EXPECT_GT(cg.reduce_bytes, s.prepared_bytes + gram);
  EXPECT_EQ(cg.shard_file_bytes, ShardFileBytes(20000, 10));
  s.solver = HeadSolver::kCholesky;
  EXPECT_EQ(EstimateTrainingMemory(s).reduce_bytes - cg.reduce_bytes, gram + gram / 20);
  s.solver = HeadSolver::kEigen;
  EXPECT_NEAR(EstimateTrainingMemory(s).reduce_bytes - cg.reduce_bytes, 2.1 * gram, 8);
  EXPECT_EQ(EstimateTrainingMemory(s).shard_bytes, cg.shard_bytes) << "a shard does not solve";
}

TEST(TrainingMemoryTest, CheckRefusesWithTheFiguresOnlyPastALimit) {
  TrainingShape s;
  s.feature_dim = 25600;
  s.solver = HeadSolver::kBand;
  EXPECT_TRUE(CheckTrainingMemory("the reduce", int64_t{6} << 30, 0, s).ok()) << "no limit";
  EXPECT_TRUE(CheckTrainingMemory("the reduce", int64_t{6} << 30, uint64_t{6} << 30, s).ok());
  const absl::Status over =
      CheckTrainingMemory("the reduce", int64_t{6} << 30, uint64_t{4} << 30, s);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.message(), HasSubstr("the reduce needs about 6.00 GiB (25600 features"));
  EXPECT_THAT(over.message(), HasSubstr("solver band), the memory limit is 4.00 GiB"));
}

}  // namespace
}  // namespace invariant::train
