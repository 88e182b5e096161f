// Exact invariance of Spec-Avg under every element of small groups and under
// uniformly random elements of large ones, and the agreement of the two paths
// (signed orbits, eigendecomposition) that compute the invariant subspaces.
#include <cmath>
#include <utility>
#include <vector>

#include "Eigen/Core"
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

TEST(SpecAvgInvarianceTest, InvariantUnderUniformlyRandomElementsOfLargeGroups) {
  // Elements drawn uniformly (not as words in the generators): 500 random
  // sign vectors of {±1}^10 and 500 random permutations of S_10.
  struct Large {
    const char* name;
    int64_t budget;
    std::vector<TorusGeneratorSpec> generators;
    bool permutations;
  };
  const std::vector<Large> cases = {
      {"sign_flips_10", 1161, AllSignFlipGenerators(10), false},
      {"permutations_10", 1161, SymmetricGroupGenerators(10), true},
  };
  constexpr int32_t kDim = 10;
  for (const Large& c : cases) {
    SCOPED_TRACE(c.name);
    SpectralEncoderOptions o;
    o.dim = kDim;
    o.budget = c.budget;
    o.generators = c.generators;
    auto enc = SpectralEncoder::Build(o);
    ASSERT_TRUE(enc.ok()) << enc.status();
    const auto x = UniformPoints(400, kDim, 31);
    const auto y = RoughTargets(x, kDim);
    auto coef = FitSpecAvg(**enc, 400, x.data(), y.data());
    ASSERT_TRUE(coef.ok());
    Rng rng(41);
    TorusGroupElements random;
    random.method = "uniform";
    for (int k = 0; k < 500; ++k) {
      TorusIsometry g = IdentityIsometry(kDim);
      if (c.permutations) {
        for (int32_t i = kDim - 1; i > 0; --i) {  // Fisher–Yates
          std::swap(g.source[i], g.source[rng.UniformInt(i + 1)]);
        }
      } else {
        for (int8_t& s : g.sign) s = rng.UniformInt(2) ? 1 : -1;
      }
      random.elements.push_back(std::move(g));
    }
    const auto test = UniformPoints(40, kDim, 43);
    const SpectralEncoder& e = **enc;
    const Eigen::VectorXd w = *coef;
    auto id = MeasureInvarianceDiscrepancy(
        [&](int64_t n, const float* px, float* py) { PredictSpectral(e, w, n, px, py); }, kDim, 40,
        test.data(), random);
    ASSERT_TRUE(id.ok());
    EXPECT_GT(id->scale, 1e-2);
    EXPECT_LT(id->relative_max, 2e-6) << id->max_abs;
    // The same fit without the projection (every eigenfunction, no group)
    // is clearly not invariant under these elements: the check can fail.
    SpectralEncoderOptions free_options = o;
    free_options.generators.clear();
    auto free_enc = SpectralEncoder::Build(free_options);
    ASSERT_TRUE(free_enc.ok());
    auto free_coef = FitSpecAvg(**free_enc, 400, x.data(), y.data());
    ASSERT_TRUE(free_coef.ok());
    const SpectralEncoder& fe = **free_enc;
    const Eigen::VectorXd fw = *free_coef;
    auto free_id = MeasureInvarianceDiscrepancy(
        [&](int64_t n, const float* px, float* py) { PredictSpectral(fe, fw, n, px, py); }, kDim,
        40, test.data(), random);
    ASSERT_TRUE(free_id.ok());
    EXPECT_GT(free_id->relative_max, 1e-2);
  }
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

}  // namespace
}  // namespace invariant
