#include "core/rls/gram_accumulator.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/rls/test_data.h"

namespace invariant {
namespace {

using rls_test::RandomNormal;
using rls_test::RelativeError;
using rls_test::ToDouble;

constexpr int64_t kRows = 1300;  // crosses the accumulator's internal 512-row blocks
constexpr int64_t kFeatures = 17;
constexpr int64_t kTargets = 3;

struct Data {
  FloatMatrix phi;
  FloatMatrix y;
};

Data MakeData(uint64_t seed) {
  Rng rng(seed);
  return {RandomNormal(rng, kRows, kFeatures, 0.3, 1.0), RandomNormal(rng, kRows, kTargets)};
}

void ExpectSameSums(const GramAccumulator& a, const GramAccumulator& b, double tolerance) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_LT(RelativeError(a.PhiTPhi(), b.PhiTPhi()), tolerance);
  EXPECT_LT(RelativeError(a.phi_t_y(), b.phi_t_y()), tolerance);
  EXPECT_LT(RelativeError(a.phi_sum(), b.phi_sum()), tolerance);
  EXPECT_LT(RelativeError(a.y_sum(), b.y_sum()), tolerance);
  EXPECT_LT(RelativeError(a.y_squared_sum(), b.y_squared_sum()), tolerance);
}

TEST(GramAccumulatorTest, MatchesDirectDoubleSums) {
  const Data data = MakeData(1);
  auto acc = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(acc.ok()) << acc.status();
  ASSERT_TRUE(acc->Add(kRows, data.phi.data(), data.y.data()).ok());
  const Eigen::MatrixXd phi = ToDouble(data.phi);
  const Eigen::MatrixXd y = ToDouble(data.y);
  EXPECT_EQ(acc->count(), kRows);
  EXPECT_LT(RelativeError(acc->PhiTPhi(), phi.transpose() * phi), 1e-12);
  EXPECT_LT(RelativeError(acc->phi_t_y(), phi.transpose() * y), 1e-12);
  EXPECT_LT(RelativeError(acc->phi_sum(), phi.colwise().sum().transpose()), 1e-12);
  EXPECT_LT(RelativeError(acc->y_sum(), y.colwise().sum().transpose()), 1e-12);
  EXPECT_LT(RelativeError(acc->y_squared_sum(), y.colwise().squaredNorm().transpose()), 1e-12);
  // The full matrix is symmetric and the lower storage has a zero upper part.
  const Eigen::MatrixXd full = acc->PhiTPhi();
  EXPECT_EQ((full - full.transpose()).norm(), 0.0);
  EXPECT_EQ(acc->phi_t_phi_lower().triangularView<Eigen::StrictlyUpper>().toDenseMatrix().norm(),
            0.0);
}

TEST(GramAccumulatorTest, BlocksOfAnySizeEqualOneBlock) {
  const Data data = MakeData(2);
  auto whole = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(whole.ok());
  ASSERT_TRUE(whole->Add(kRows, data.phi.data(), data.y.data()).ok());
  for (int64_t block : {1, 7, 64, 511, 513, 1000}) {
    auto blocked = GramAccumulator::Create(kFeatures, kTargets);
    ASSERT_TRUE(blocked.ok());
    for (int64_t start = 0; start < kRows; start += block) {
      const int64_t n = std::min(block, kRows - start);
      ASSERT_TRUE(blocked->Add(n, data.phi.row(start), data.y.row(start)).ok());
    }
    SCOPED_TRACE(block);
    ExpectSameSums(*blocked, *whole, 1e-12);
  }
}

TEST(GramAccumulatorTest, MergedShardsEqualOneAccumulator) {
  const Data data = MakeData(3);
  auto whole = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(whole.ok());
  ASSERT_TRUE(whole->Add(kRows, data.phi.data(), data.y.data()).ok());
  const std::vector<int64_t> bounds = {0, 100, 101, 700, kRows};
  auto merged = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(merged.ok());
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    auto shard = GramAccumulator::Create(kFeatures, kTargets);
    ASSERT_TRUE(shard.ok());
    const int64_t n = bounds[s + 1] - bounds[s];
    ASSERT_TRUE(shard->Add(n, data.phi.row(bounds[s]), data.y.row(bounds[s])).ok());
    // A shard survives the trip through its file buffer bit for bit.
    auto reloaded = GramAccumulator::Deserialize(shard->Serialize());
    ASSERT_TRUE(reloaded.ok()) << reloaded.status();
    ASSERT_TRUE(merged->Merge(*reloaded).ok());
  }
  ExpectSameSums(*merged, *whole, 1e-12);
}

TEST(GramAccumulatorTest, SerializeRoundTripIsExact) {
  const Data data = MakeData(4);
  auto acc = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(acc.ok());
  ASSERT_TRUE(acc->Add(kRows, data.phi.data(), data.y.data()).ok());
  const std::vector<double> buffer = acc->Serialize();
  EXPECT_EQ(static_cast<int64_t>(buffer.size()),
            GramAccumulator::SerializedSize(kFeatures, kTargets));
  auto back = GramAccumulator::Deserialize(buffer);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->feature_dim(), kFeatures);
  EXPECT_EQ(back->target_dim(), kTargets);
  EXPECT_EQ(back->count(), kRows);
  EXPECT_EQ(back->phi_t_phi_lower(), acc->phi_t_phi_lower());
  EXPECT_EQ(back->phi_t_y(), acc->phi_t_y());
  EXPECT_EQ(back->phi_sum(), acc->phi_sum());
  EXPECT_EQ(back->y_sum(), acc->y_sum());
  EXPECT_EQ(back->y_squared_sum(), acc->y_squared_sum());
  EXPECT_EQ(back->Serialize(), buffer);
}

TEST(GramAccumulatorTest, DeserializeRejectsCorruptBuffers) {
  auto acc = GramAccumulator::Create(3, 2);
  ASSERT_TRUE(acc.ok());
  const std::vector<double> good = acc->Serialize();

  std::vector<double> truncated(good.begin(), good.end() - 1);
  EXPECT_EQ(GramAccumulator::Deserialize(truncated).status().code(), absl::StatusCode::kDataLoss);
  std::vector<double> bad_magic = good;
  bad_magic[0] = 1.0;
  EXPECT_EQ(GramAccumulator::Deserialize(bad_magic).status().code(), absl::StatusCode::kDataLoss);
  std::vector<double> bad_version = good;
  bad_version[1] = 2.0;
  EXPECT_EQ(GramAccumulator::Deserialize(bad_version).status().code(), absl::StatusCode::kDataLoss);
  std::vector<double> bad_dim = good;
  bad_dim[2] = 2.5;
  EXPECT_EQ(GramAccumulator::Deserialize(bad_dim).status().code(), absl::StatusCode::kDataLoss);
  std::vector<double> huge_dim = good;
  huge_dim[2] = 1e12;
  EXPECT_EQ(GramAccumulator::Deserialize(huge_dim).status().code(), absl::StatusCode::kDataLoss);
  std::vector<double> negative_count = good;
  negative_count[4] = -1.0;
  EXPECT_EQ(GramAccumulator::Deserialize(negative_count).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(GramAccumulator::Deserialize({}).status().code(), absl::StatusCode::kDataLoss);
}

// A reader over a buffer, n values at a time, as a shard file is read.
struct BufferReader {
  const std::vector<double>* buffer;
  size_t at = 0;
  bool operator()(double* values, int64_t n) {
    if (at + static_cast<size_t>(n) > buffer->size()) return false;
    std::copy(buffer->begin() + static_cast<std::ptrdiff_t>(at),
              buffer->begin() + static_cast<std::ptrdiff_t>(at) + n, values);
    at += static_cast<size_t>(n);
    return true;
  }
};

TEST(GramAccumulatorTest, StreamedSerializeAndMergeEqualTheBufferForms) {
  const Data data = MakeData(5);
  auto acc = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(acc.ok());
  ASSERT_TRUE(acc->Add(kRows, data.phi.data(), data.y.data()).ok());
  std::vector<double> streamed;
  int64_t largest_piece = 0;
  EXPECT_TRUE(acc->SerializeTo([&](const double* v, int64_t n) {
    streamed.insert(streamed.end(), v, v + n);
    largest_piece = std::max(largest_piece, n);
    return true;
  }));
  EXPECT_EQ(streamed, acc->Serialize());
  EXPECT_LE(largest_piece, kFeatures * kTargets);  // never the whole Gram at once
  // A writer that fails stops the stream.
  int calls = 0;
  EXPECT_FALSE(acc->SerializeTo([&](const double*, int64_t) { return ++calls < 3; }));
  EXPECT_EQ(calls, 3);
  // Merging the stream twice into an empty accumulator is Merge twice.
  auto total = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(total.ok());
  for (int k = 0; k < 2; ++k) {
    BufferReader read{&streamed};
    ASSERT_TRUE(total->MergeSerialized(read).ok());
  }
  auto twice = GramAccumulator::Create(kFeatures, kTargets);
  ASSERT_TRUE(twice->Merge(*acc).ok() && twice->Merge(*acc).ok());
  ExpectSameSums(*total, *twice, 1e-15);
}

TEST(GramAccumulatorTest, MergeSerializedRefusesOtherShapesAndShortInput) {
  auto acc = GramAccumulator::Create(3, 2);
  ASSERT_TRUE(acc.ok());
  const std::vector<double> good = acc->Serialize();
  auto other = GramAccumulator::Create(4, 2);
  BufferReader read{&good};
  const absl::Status shape = other->MergeSerialized(read);
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(shape.message().find("feature_dim 4"), std::string::npos) << shape;
  for (size_t cut : {size_t{2}, size_t{7}, good.size() - 1}) {
    std::vector<double> short_input(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    BufferReader r{&short_input};
    auto target = GramAccumulator::Create(3, 2);
    EXPECT_EQ(target->MergeSerialized(r).code(), absl::StatusCode::kDataLoss) << "cut " << cut;
  }
  std::vector<double> bad_magic = good;
  bad_magic[0] = 1.0;
  BufferReader r{&bad_magic};
  EXPECT_EQ(acc->MergeSerialized(r).code(), absl::StatusCode::kDataLoss);
}

TEST(GramAccumulatorTest, RejectsBadInputAndLeavesSumsUnchanged) {
  auto acc = GramAccumulator::Create(4, 1);
  ASSERT_TRUE(acc.ok());
  std::vector<float> phi(3 * 4, 1.0f);
  std::vector<float> y(3, 1.0f);
  phi[2 * 4 + 3] = std::numeric_limits<float>::quiet_NaN();
  const absl::Status nan = acc->Add(3, phi.data(), y.data());
  EXPECT_EQ(nan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(nan.message().find("phi[2, 3]"), std::string::npos) << nan.message();
  EXPECT_EQ(acc->count(), 0);
  EXPECT_EQ(acc->phi_sum().norm(), 0.0);

  EXPECT_EQ(acc->Add(-1, phi.data(), y.data()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(acc->Add(2, nullptr, y.data()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(acc->Add(0, nullptr, nullptr).ok());

  auto other = GramAccumulator::Create(5, 1);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(acc->Merge(*other).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GramAccumulator::Create(0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GramAccumulator::Create(3, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace invariant
