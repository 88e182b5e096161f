// Exact invariance of Spec-Avg, the projection it uses, and the two paths
// (signed orbits, eigendecomposition) that compute the invariant subspaces.
#include <cmath>
#include <vector>

#include "Eigen/Core"
#include "Eigen/QR"
#include "Eigen/SVD"
#include "core/base/random.h"
#include "core/spectral/invariance_discrepancy.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

std::vector<float> UniformPoints(int64_t n, int32_t dim, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n * dim));
  for (float& v : x) v = static_cast<float>(rng.Uniform(-1, 1));
  return x;
}

// A non-invariant target, so any invariance of the fit comes from Spec-Avg.
std::vector<float> RoughTargets(const std::vector<float>& x, int32_t dim) {
  std::vector<float> y(x.size() / dim);
  for (size_t r = 0; r < y.size(); ++r) {
    double s = 0;
    for (int32_t i = 0; i < dim; ++i)
      s += (i + 1) * x[r * dim + i] + std::sin(3.0 * x[r * dim + i]);
    y[r] = static_cast<float>(s);
  }
  return y;
}

struct Case {
  const char* name;
  int32_t dim;
  int64_t budget;
  std::vector<TorusGeneratorSpec> generators;
  size_t group_size;  // 0: too large to enumerate
};

std::vector<Case> Cases() {
  return {
      {"sign_flips_4", 4, 700, AllSignFlipGenerators(4), 16},
      {"permutations_4", 4, 700, SymmetricGroupGenerators(4), 24},
      {"shift_z5", 3, 300, {ShiftGenerator({1}, 5)}, 5},
      {"diagonal_shift_z3", 3, 300, {ShiftGenerator({0, 1, 2}, 3)}, 3},
      {"flip_shift_permute",
       3,
       300,
       {SignFlipGenerator({0}), ShiftGenerator({0}, 4), PermutationGenerator({1, 2, 0})},
       0},
      {"sign_flips_10", 10, 1161, AllSignFlipGenerators(10), 0},
  };
}

TEST(SpecAvgInvarianceTest, FitIsInvariantUnderEveryElement) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    SpectralEncoderOptions o;
    o.dim = c.dim;
    o.budget = c.budget;
    o.generators = c.generators;
    auto enc = SpectralEncoder::Build(o);
    ASSERT_TRUE(enc.ok()) << enc.status();
    ASSERT_GT((*enc)->d_out(), 1);
    const auto x = UniformPoints(300, c.dim, 3);
    const auto y = RoughTargets(x, c.dim);
    auto coef = FitSpecAvg(**enc, 300, x.data(), y.data());
    ASSERT_TRUE(coef.ok());
    ASSERT_GT(coef->cwiseAbs().maxCoeff(), 1e-3);
    // All elements of the small groups; for {±1}^10 the cap of 1000 forces
    // 200 random words of 40 generators.
    auto elements = EnumerateOrSampleTorusGroup(c.generators, c.dim, 1000, 200, 40, 5);
    ASSERT_TRUE(elements.ok());
    if (c.group_size > 0) {
      EXPECT_TRUE(elements->exhaustive);
      EXPECT_EQ(elements->elements.size(), c.group_size);
    } else if (c.dim == 10) {
      EXPECT_FALSE(elements->exhaustive);
      EXPECT_EQ(elements->elements.size(), 1u + 10u + 200u);
    }
    const auto test = UniformPoints(50, c.dim, 9);
    const SpectralEncoder& e = **enc;
    const Eigen::VectorXd w = *coef;
    auto id = MeasureInvarianceDiscrepancy(
        [&](int64_t n, const float* px, float* py) { PredictSpectral(e, w, n, px, py); }, c.dim, 50,
        test.data(), *elements);
    ASSERT_TRUE(id.ok());
    EXPECT_GT(id->scale, 1e-2);
    // Float rounding of the output and of shifted inputs, nothing more.
    EXPECT_LT(id->relative_max, 2e-6) << id->max_abs;
    // And the generator residual of the expanded coefficients is ~0.
    auto residual = GeneratorResidual(e.tensors().basis, c.generators, e.ExpandToBasis(w));
    ASSERT_TRUE(residual.ok()) << residual.status();
    EXPECT_LT(*residual, 1e-12);
  }
}

TEST(SpecAvgInvarianceTest, ProjectionIsTheClosestInvariantVector) {
  // Compare with an independent constrained least-squares solve: the null
  // space of B = [D(g) − I]_g from a full SVD, and Alg. 1's formula
  // f̃ − Bᵀ(BBᵀ)⁺Bf̃ with a complete orthogonal decomposition.
  auto basis = EnumerateTorusBasisToLevel(3, 9);
  ASSERT_TRUE(basis.ok());
  const std::vector<TorusGeneratorSpec> gens = {
      SymmetricGroupGenerators(3)[0], SymmetricGroupGenerators(3)[1], ShiftGenerator({0, 1, 2}, 3)};
  auto sub = ComputeInvariantSubspaces(*basis, gens);
  ASSERT_TRUE(sub.ok());
  Rng rng(21);
  Eigen::VectorXd tilde(basis->num_functions());
  for (int64_t j = 0; j < tilde.size(); ++j) tilde(j) = rng.Normal();
  const Eigen::VectorXd projected = ProjectToInvariant(*sub, tilde);
  int64_t total_invariant = 0;
  for (int e = 0; e < static_cast<int>(basis->eigenspaces.size()); ++e) {
    const TorusEigenspace& sp = basis->eigenspaces[e];
    const int64_t m = sp.size();
    Eigen::MatrixXd b(gens.size() * m, m);
    for (size_t g = 0; g < gens.size(); ++g) {
      auto d = GeneratorMatrixOnEigenspace(*basis, e, gens[g]);
      ASSERT_TRUE(d.ok());
      b.middleRows(g * m, m) = *d - Eigen::MatrixXd::Identity(m, m);
    }
    const Eigen::VectorXd ft = tilde.segment(sp.begin, m);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(b, Eigen::ComputeFullV);
    int64_t rank = 0;
    for (int64_t k = 0; k < svd.singularValues().size(); ++k)
      rank += svd.singularValues()(k) > 1e-9;
    const Eigen::MatrixXd null = svd.matrixV().rightCols(m - rank);
    const Eigen::VectorXd by_null_space = null * (null.transpose() * ft);
    const Eigen::MatrixXd bbt = b * b.transpose();
    const Eigen::VectorXd by_formula =
        ft - b.transpose() * (bbt.completeOrthogonalDecomposition().pseudoInverse() * (b * ft));
    const Eigen::VectorXd ours = projected.segment(sp.begin, m);
    EXPECT_LT((ours - by_null_space).cwiseAbs().maxCoeff(), 1e-9) << "level " << sp.level;
    EXPECT_LT((ours - by_formula).cwiseAbs().maxCoeff(), 1e-8) << "level " << sp.level;
    EXPECT_EQ(sub->feature_begin[e + 1] - sub->feature_begin[e], m - rank);
    total_invariant += m - rank;
  }
  EXPECT_EQ(sub->combination.num_features, total_invariant);
  EXPECT_GT(total_invariant, 3);
}

TEST(SpecAvgInvarianceTest, MonomialPathEqualsEigendecomposition) {
  auto basis = EnumerateTorusBasisToLevel(4, 4);
  ASSERT_TRUE(basis.ok());
  std::vector<TorusGeneratorSpec> gens = SymmetricGroupGenerators(4);
  gens.push_back(SignFlipGenerator({2}));
  gens.push_back(ShiftGenerator({0, 1, 2, 3}, 2));  // p = 2: still a signed permutation
  InvariantSubspaceOptions dense;
  dense.monomial_fast_path = false;
  auto fast = ComputeInvariantSubspaces(*basis, gens);
  auto slow = ComputeInvariantSubspaces(*basis, gens, dense);
  ASSERT_TRUE(fast.ok() && slow.ok());
  EXPECT_EQ(fast->feature_begin, slow->feature_begin);
  Rng rng(2);
  for (int trial = 0; trial < 3; ++trial) {
    Eigen::VectorXd v(basis->num_functions());
    for (int64_t j = 0; j < v.size(); ++j) v(j) = rng.Normal();
    EXPECT_LT((ProjectToInvariant(*fast, v) - ProjectToInvariant(*slow, v)).cwiseAbs().maxCoeff(),
              1e-10);
  }
}

TEST(SpecAvgInvarianceTest, SignFlipFeaturesAreTheCosineProducts) {
  // Paper §6: under {±1}^d the invariant eigenfunctions are Π cos(π ℓ_i x_i).
  SpectralEncoderOptions o;
  o.dim = 10;
  o.budget = 1161;
  o.generators = AllSignFlipGenerators(10);
  auto enc = SpectralEncoder::Build(o);
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ((*enc)->d_out(), 176);  // 1 + 10 + 45 + 120: the paper's D = 176
  EXPECT_EQ((*enc)->info().num_basis_enumerated, 1161);
  const IntMatrix& b = (*enc)->tensors().basis;
  EXPECT_EQ(b.rows(), 176);
  for (int64_t e = 0; e < b.size(); ++e) EXPECT_GE(b.data()[e], 0);
}

TEST(SpecAvgInvarianceTest, LiteralAlgorithmOneAgreesWithFeatureFit) {
  SpectralEncoderOptions o;
  o.dim = 3;
  o.budget = 200;
  o.generators = {SignFlipGenerator({0}), ShiftGenerator({1}, 3)};
  auto enc = SpectralEncoder::Build(o);
  ASSERT_TRUE(enc.ok());
  auto basis = EnumerateTorusBasis(3, 200);
  auto sub = ComputeInvariantSubspaces(*basis, o.generators);
  ASSERT_TRUE(basis.ok() && sub.ok());
  const auto x = UniformPoints(400, 3, 4);
  const auto y = RoughTargets(x, 3);
  auto full = SpecAvgAlgorithm1(*basis, *sub, 400, x.data(), y.data());
  auto coef = FitSpecAvg(**enc, 400, x.data(), y.data());
  ASSERT_TRUE(full.ok() && coef.ok());
  const auto test = UniformPoints(20, 3, 8);
  std::vector<float> ours(20);
  PredictSpectral(**enc, *coef, 20, test.data(), ours.data());
  TorusFunctionTable table(basis->signed_indices);
  std::vector<double> phi(20 * basis->num_functions());
  table.EvaluateBatch(20, test.data(), phi.data());
  for (int r = 0; r < 20; ++r) {
    const double literal = Eigen::Map<const Eigen::VectorXd>(
                               phi.data() + r * basis->num_functions(), basis->num_functions())
                               .dot(*full);
    EXPECT_NEAR(ours[r], literal, 1e-5 * (1 + std::abs(literal)));
  }
}

}  // namespace
}  // namespace invariant
