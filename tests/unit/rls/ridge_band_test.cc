// The band-reduction λ path (ridge_band.h) gives the per-λ Cholesky solve's
// weights to 1e-6 relative, on a well-conditioned and an ill-conditioned
// (rank-deficient, N < D, decaying feature scales) problem, at the default
// bandwidth and at narrow ones that make many reflector panels.
#include "core/rls/ridge_band.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/rls/test_data.h"

namespace invariant {
namespace {

using rls_test::RandomNormal;
using rls_test::RelativeError;
using rls_test::ToDouble;

RidgeOptions Options(bool fit_bias) {
  RidgeOptions options;
  options.fit_bias = fit_bias;
  return options;
}

GramAccumulator Sums(const FloatMatrix& phi, const FloatMatrix& y) {
  auto sums = GramAccumulator::Create(phi.cols(), y.cols());
  EXPECT_TRUE(sums.ok());
  EXPECT_TRUE(sums->Add(phi.rows(), phi.data(), y.data()).ok());
  return *std::move(sums);
}

// Targets y = Φ W* + 3 + noise.
FloatMatrix Targets(Rng& rng, const FloatMatrix& phi, int64_t t) {
  const Eigen::MatrixXd w = ToDouble(RandomNormal(rng, phi.cols(), t));
  Eigen::MatrixXd y = ToDouble(phi) * w + ToDouble(RandomNormal(rng, phi.rows(), t, 0.0, 0.3));
  y.array() += 3.0;
  return FloatMatrix::FromEigen(y);
}

void ExpectSameAsCholesky(const GramAccumulator& sums, int64_t bandwidth,
                          const std::vector<double>& lambdas) {
  for (bool fit_bias : {false, true}) {
    auto cholesky = MakeCholeskyRidgeSolver(sums, Options(fit_bias));
    auto band = MakeBandRidgeSolver(sums, Options(fit_bias), bandwidth);
    ASSERT_TRUE(cholesky.ok() && band.ok()) << band.status();
    EXPECT_EQ((*band)->feature_dim(), sums.feature_dim());
    EXPECT_EQ((*band)->target_dim(), sums.target_dim());
    EXPECT_EQ((*band)->num_examples(), sums.count());
    for (double lambda : lambdas) {
      SCOPED_TRACE(testing::Message() << "fit_bias " << fit_bias << " bandwidth " << bandwidth
                                      << " lambda " << lambda);
      auto want = (*cholesky)->SolveWeights(lambda);
      auto got = (*band)->SolveWeights(lambda);
      ASSERT_TRUE(want.ok() && got.ok()) << got.status();
      EXPECT_LT(RelativeError(got->weights, want->weights), 1e-6);
      if (fit_bias) {
        EXPECT_LT(RelativeError(got->bias, want->bias), 1e-6);
      }
      EXPECT_EQ(got->lambda, lambda);
    }
  }
}

const std::vector<double> kGrid = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 100.0};

TEST(RidgeBandTest, WellConditionedEqualsPerLambdaCholesky) {
  Rng rng(31);
  const FloatMatrix phi = RandomNormal(rng, 900, 300, 0.5, 1.0);
  const GramAccumulator sums = Sums(phi, Targets(rng, phi, 4));
  for (int64_t bandwidth : {kBandRidgeBandwidth, int64_t{16}, int64_t{1}}) {
    ExpectSameAsCholesky(sums, bandwidth, kGrid);
  }
}

TEST(RidgeBandTest, IllConditionedEqualsPerLambdaCholesky) {
  // N = 150 < D = 260: the centred Gram has rank ≤ 149; feature scales decay
  // over four decades (like a random-feature spectrum) and two columns repeat
  // column 0.
  Rng rng(32);
  FloatMatrix phi = RandomNormal(rng, 150, 260, 0.5, 1.0);
  for (int64_t i = 0; i < phi.rows(); ++i) {
    float* row = phi.mutable_row(i);
    for (int64_t j = 0; j < phi.cols(); ++j) {
      row[j] *= static_cast<float>(std::pow(10.0, -4.0 * j / 260.0) / std::sqrt(260.0));
    }
    row[258] = row[0];
    row[259] = row[0];
  }
  const GramAccumulator sums = Sums(phi, Targets(rng, phi, 3));
  for (int64_t bandwidth : {kBandRidgeBandwidth, int64_t{7}}) {
    ExpectSameAsCholesky(sums, bandwidth, kGrid);
  }
}

TEST(RidgeBandTest, LambdaTooSmallToFactorIsSolvedByTheBandEigendecomposition) {
  // A singular Gram and λ = 1e-30: neither Cholesky nor the band factors;
  // both fall back to an eigendecomposition with eigenvalues clamped at 0.
  // In the span of the data (the predictions on the training rows) they agree.
  Rng rng(33);
  FloatMatrix phi = RandomNormal(rng, 60, 90, 0.5, 1.0);
  const FloatMatrix y = Targets(rng, phi, 2);
  const GramAccumulator sums = Sums(phi, y);
  auto band = MakeBandRidgeSolver(sums, Options(true), 8);
  auto eigen = MakePrimalRidgeSolver(sums, Options(true));
  ASSERT_TRUE(band.ok() && eigen.ok());
  auto got = (*band)->SolveWeights(1e-30);
  auto want = (*eigen)->SolveWeights(1e-30);
  ASSERT_TRUE(got.ok() && want.ok()) << got.status();
  EXPECT_TRUE(got->weights.allFinite());
  // Afterwards an ordinary λ still takes the band solve and is right.
  auto cholesky = MakeCholeskyRidgeSolver(sums, Options(true));
  ASSERT_TRUE(cholesky.ok());
  auto a = (*band)->SolveWeights(1e-3);
  auto b = (*cholesky)->SolveWeights(1e-3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(RelativeError(a->weights, b->weights), 1e-6);
}

TEST(RidgeBandTest, SmallShapesAndErrors) {
  Rng rng(34);
  for (int64_t d : {1, 2, 3}) {
    const FloatMatrix phi = RandomNormal(rng, 20, d, 0.5, 1.0);
    const GramAccumulator sums = Sums(phi, Targets(rng, phi, 2));
    ExpectSameAsCholesky(sums, kBandRidgeBandwidth, {1e-4, 1.0});
  }
  auto empty = GramAccumulator::Create(5, 1);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(MakeBandRidgeSolver(*empty).status().code(), absl::StatusCode::kFailedPrecondition);
  const FloatMatrix phi = RandomNormal(rng, 20, 4, 0.5, 1.0);
  const GramAccumulator sums = Sums(phi, Targets(rng, phi, 1));
  EXPECT_EQ(MakeBandRidgeSolver(sums, {}, 0).status().code(), absl::StatusCode::kInvalidArgument);
  auto band = MakeBandRidgeSolver(sums);
  ASSERT_TRUE(band.ok());
  EXPECT_EQ((*band)->SolveWeights(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*band)->SolveWeights(NAN).status().code(), absl::StatusCode::kInvalidArgument);
  auto chosen = MakeGramRidgeSolver(sums, RidgeSolverKind::kBand);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ((*chosen)->eigenvalues().size(), 0);
}

}  // namespace
}  // namespace invariant
