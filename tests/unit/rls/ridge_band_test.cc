// The band-reduction λ path (ridge_band.h) gives the per-λ Cholesky solve's
// weights to 1e-6 relative, on a well-conditioned and an ill-conditioned
// (rank-deficient, N < D, decaying feature scales) problem, at the default
// bandwidth and at narrow ones that make many reflector panels; and so
// does the dual band path on the rows (MakeDualBandRidgeSolver) for N < D.
#include "core/rls/ridge_band.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
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

// The consuming overload centres and reduces the accumulator's own Gram: the
// same weights and biases, bit for bit, as from a const accumulator, and
// the accumulator's Gram is gone (its other sums stay; Add refuses).
TEST(RidgeBandTest, ConsumedSumsGiveTheSameBits) {
  Rng rng(35);
  const FloatMatrix phi = RandomNormal(rng, 150, 40, 0.5, 1.0);
  const FloatMatrix y = Targets(rng, phi, 3);
  for (bool fit_bias : {false, true}) {
    SCOPED_TRACE(testing::Message() << "fit_bias " << fit_bias);
    GramAccumulator sums = Sums(phi, y);
    auto kept = MakeBandRidgeSolver(sums, Options(fit_bias), 8);
    auto consumed = MakeBandRidgeSolver(std::move(sums), Options(fit_bias), 8);
    ASSERT_TRUE(kept.ok() && consumed.ok()) << consumed.status();
    EXPECT_EQ(sums.phi_t_phi_lower().size(), 0);                  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(sums.count(), 150);                                 // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(sums.Add(phi.rows(), phi.data(), y.data()).code(),  // NOLINT(bugprone-use-after-move)
              absl::StatusCode::kFailedPrecondition);
    for (double lambda : {1e-4, 1e-1}) {
      auto a = (*kept)->SolveWeights(lambda);
      auto b = (*consumed)->SolveWeights(lambda);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->weights, b->weights);
      EXPECT_EQ(a->bias, b->bias);
    }
  }
  auto empty = GramAccumulator::Create(5, 1);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(MakeBandRidgeSolver(*std::move(empty)).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// The dual band path (MakeDualBandRidgeSolver, the N × N kernel of the rows
// in blocks) against the primal per-λ Cholesky of the same rows' sums.
void ExpectDualSameAsCholesky(const FloatMatrix& phi, const FloatMatrix& y, int64_t block_rows,
                              int64_t bandwidth, const std::vector<double>& lambdas) {
  std::vector<FloatMatrix> phi_blocks, y_blocks;
  for (int64_t start = 0; start < phi.rows(); start += block_rows) {
    const int64_t n = std::min(block_rows, phi.rows() - start);
    phi_blocks.push_back(FloatMatrix::FromEigen(ToDouble(phi).middleRows(start, n)));
    y_blocks.push_back(FloatMatrix::FromEigen(ToDouble(y).middleRows(start, n)));
  }
  const GramAccumulator sums = Sums(phi, y);
  for (bool fit_bias : {false, true}) {
    auto cholesky = MakeCholeskyRidgeSolver(sums, Options(fit_bias));
    auto dual = MakeDualBandRidgeSolver(phi_blocks, y_blocks, Options(fit_bias), bandwidth);
    ASSERT_TRUE(cholesky.ok() && dual.ok()) << dual.status();
    EXPECT_EQ((*dual)->feature_dim(), phi.cols());
    EXPECT_EQ((*dual)->target_dim(), y.cols());
    EXPECT_EQ((*dual)->num_examples(), phi.rows());
    EXPECT_EQ((*dual)->eigenvalues().size(), 0);
    for (double lambda : lambdas) {
      SCOPED_TRACE(testing::Message() << "fit_bias " << fit_bias << " bandwidth " << bandwidth
                                      << " lambda " << lambda);
      auto want = (*cholesky)->SolveWeights(lambda);
      auto got = (*dual)->SolveWeights(lambda);
      ASSERT_TRUE(want.ok() && got.ok()) << got.status();
      EXPECT_LT(RelativeError(got->weights, want->weights), 1e-6);
      if (fit_bias) {
        EXPECT_LT(RelativeError(got->bias, want->bias), 1e-6);
      }
      EXPECT_EQ(got->lambda, lambda);
    }
  }
}

TEST(RidgeBandTest, DualWellConditionedEqualsPerLambdaCholesky) {
  // N = 200 < D = 500, features of one scale.
  Rng rng(35);
  const FloatMatrix phi = RandomNormal(rng, 200, 500, 0.5, 1.0);
  const FloatMatrix y = Targets(rng, phi, 4);
  ExpectDualSameAsCholesky(phi, y, 200, kBandRidgeBandwidth, kGrid);
  ExpectDualSameAsCholesky(phi, y, 64, 16, kGrid);  // several blocks, many panels
  ExpectDualSameAsCholesky(phi, y, 7, 1, {1e-4, 1.0});
}

TEST(RidgeBandTest, DualIllConditionedEqualsPerLambdaCholesky) {
  // As IllConditionedEqualsPerLambdaCholesky: N = 150 < D = 260, feature
  // scales over four decades, repeated columns, a large mean (3 + ...).
  Rng rng(36);
  FloatMatrix phi = RandomNormal(rng, 150, 260, 0.5, 1.0);
  for (int64_t i = 0; i < phi.rows(); ++i) {
    float* row = phi.mutable_row(i);
    for (int64_t j = 0; j < phi.cols(); ++j) {
      row[j] *= static_cast<float>(std::pow(10.0, -4.0 * j / 260.0) / std::sqrt(260.0));
    }
    row[258] = row[0];
    row[259] = row[0];
  }
  const FloatMatrix y = Targets(rng, phi, 3);
  for (int64_t bandwidth : {kBandRidgeBandwidth, int64_t{7}}) {
    ExpectDualSameAsCholesky(phi, y, 40, bandwidth, kGrid);
  }
}

TEST(RidgeBandTest, DualEqualsPrimalBandAndHandlesSmallShapesAndErrors) {
  Rng rng(37);
  // A λ too small to factor: the dual's band eigendecomposition; the
  // predictions on the training rows agree with the primal band's.
  {
    const FloatMatrix phi = RandomNormal(rng, 30, 80, 0.5, 1.0);
    const FloatMatrix y = Targets(rng, phi, 2);
    auto dual = MakeDualBandRidgeSolver({phi}, {y}, Options(true), 8);
    ASSERT_TRUE(dual.ok()) << dual.status();
    auto tiny = (*dual)->SolveWeights(1e-30);
    ASSERT_TRUE(tiny.ok()) << tiny.status();
    EXPECT_TRUE(tiny->weights.allFinite());
    auto band = MakeBandRidgeSolver(Sums(phi, y), Options(true));
    ASSERT_TRUE(band.ok());
    auto a = (*dual)->SolveWeights(1e-3);
    auto b = (*band)->SolveWeights(1e-3);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_LT(RelativeError(a->weights, b->weights), 1e-6);
  }
  for (int64_t n : {1, 2, 3}) {
    const FloatMatrix phi = RandomNormal(rng, n, 5, 0.5, 1.0);
    const FloatMatrix y = Targets(rng, phi, 2);
    auto dual = MakeDualBandRidgeSolver({phi}, {y}, Options(false));
    ASSERT_TRUE(dual.ok()) << n << dual.status();
    auto cholesky = MakeCholeskyRidgeSolver(Sums(phi, y), Options(false));
    ASSERT_TRUE(cholesky.ok());
    for (double lambda : {1e-4, 1.0}) {
      auto got = (*dual)->SolveWeights(lambda);
      auto want = (*cholesky)->SolveWeights(lambda);
      ASSERT_TRUE(got.ok() && want.ok());
      EXPECT_LT(RelativeError(got->weights, want->weights), 1e-6) << n << " " << lambda;
    }
  }
  const FloatMatrix phi = RandomNormal(rng, 10, 4, 0.5, 1.0);
  const FloatMatrix y = Targets(rng, phi, 1);
  EXPECT_EQ(MakeDualBandRidgeSolver({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeDualBandRidgeSolver({phi}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeDualBandRidgeSolver({phi}, {y}, {}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  const FloatMatrix short_y = Targets(rng, RandomNormal(rng, 9, 4, 0.5, 1.0), 1);
  EXPECT_EQ(MakeDualBandRidgeSolver({phi}, {short_y}).status().code(),
            absl::StatusCode::kInvalidArgument);
  FloatMatrix bad = FloatMatrix::FromEigen(ToDouble(phi));  // an owned copy
  bad.mutable_row(3)[2] = NAN;
  auto refused = MakeDualBandRidgeSolver({bad}, {y});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(refused.status().message()).find("phi[3, 2]"), std::string::npos)
      << refused.status();
  auto dual = MakeDualBandRidgeSolver({phi}, {y});
  ASSERT_TRUE(dual.ok());
  EXPECT_EQ((*dual)->SolveWeights(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*dual)->SolveWeights(NAN).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace invariant
