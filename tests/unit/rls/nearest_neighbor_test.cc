#include "core/rls/nearest_neighbor.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/rls/test_data.h"

namespace invariant {
namespace {

using rls_test::RandomNormal;

std::vector<int64_t> BruteForce(const FloatMatrix& queries, const FloatMatrix& references) {
  std::vector<int64_t> out;
  for (int64_t q = 0; q < queries.rows(); ++q) {
    double best = std::numeric_limits<double>::infinity();
    int64_t index = -1;
    for (int64_t r = 0; r < references.rows(); ++r) {
      double distance = 0;
      for (int64_t j = 0; j < queries.cols(); ++j) {
        const double diff = static_cast<double>(queries.row(q)[j]) - references.row(r)[j];
        distance += diff * diff;
      }
      if (distance < best) {
        best = distance;
        index = r;
      }
    }
    out.push_back(index);
  }
  return out;
}

TEST(NearestNeighborTest, MatchesBruteForceAcrossBlocks) {
  // 300 queries and 5,000 references cross both block sizes (256, 4096).
  Rng rng(41);
  const FloatMatrix references = RandomNormal(rng, 5000, 13);
  const FloatMatrix queries = RandomNormal(rng, 300, 13);
  auto got = NearestNeighborIndices(queries, references);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, BruteForce(queries, references));
}

TEST(NearestNeighborTest, MatchesBruteForceInHighDimension) {
  // D = 2,000 shrinks the reference block to 2,097 rows: 2,200 cross it.
  Rng rng(42);
  const FloatMatrix references = RandomNormal(rng, 2200, 2000);
  const FloatMatrix queries = RandomNormal(rng, 20, 2000);
  auto got = NearestNeighborIndices(queries, references);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, BruteForce(queries, references));
}

TEST(NearestNeighborTest, TiesGoToTheSmallestIndexAndLabelsFollow) {
  // One-hot style integer data with exact duplicates.
  FloatMatrix references = FloatMatrix::Zeros(4, 3);
  references.mutable_map() << 1, 0, 0,  //
      0, 1, 0,                          //
      1, 0, 0,                          // duplicate of row 0
      0, 0, 1;
  FloatMatrix queries = FloatMatrix::Zeros(3, 3);
  queries.mutable_map() << 1, 0, 0,  // exact match of rows 0 and 2
      0, 1, 1,                       // equidistant to rows 1 and 3
      0, 0, 1;
  auto indices = NearestNeighborIndices(queries, references);
  ASSERT_TRUE(indices.ok());
  EXPECT_EQ(*indices, (std::vector<int64_t>{0, 1, 3}));
  const std::vector<int32_t> labels = {7, 8, 9, 10};
  auto classes = NearestNeighborClassify(queries, references, labels);
  ASSERT_TRUE(classes.ok());
  EXPECT_EQ(*classes, (std::vector<int32_t>{7, 8, 10}));
}

TEST(NearestNeighborTest, RejectsBadArguments) {
  const FloatMatrix references = FloatMatrix::Zeros(4, 3);
  EXPECT_EQ(
      NearestNeighborIndices(FloatMatrix::Zeros(2, 3), FloatMatrix::Zeros(0, 3)).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NearestNeighborIndices(FloatMatrix::Zeros(2, 2), references).status().code(),
            absl::StatusCode::kInvalidArgument);
  FloatMatrix nan_queries = FloatMatrix::Zeros(2, 3);
  nan_queries.mutable_row(1)[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(NearestNeighborIndices(nan_queries, references).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<int32_t> three_labels = {0, 1, 2};
  EXPECT_EQ(
      NearestNeighborClassify(FloatMatrix::Zeros(2, 3), references, three_labels).status().code(),
      absl::StatusCode::kInvalidArgument);
  auto none = NearestNeighborIndices(FloatMatrix::Zeros(0, 3), references);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace invariant
