// Generator matrices D^λ(g): orthogonal, the group relations, and agreement
// with evaluating the basis at the transformed point.
#include <vector>

#include "Eigen/Core"
#include "core/base/random.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/torus_basis.h"
#include "core/spectral/torus_group.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

constexpr int kDim = 4;

TorusBasis Basis() {
  auto b = EnumerateTorusBasisToLevel(kDim, 5);
  EXPECT_TRUE(b.ok());
  return *std::move(b);
}

std::vector<TorusGeneratorSpec> AllKinds() {
  std::vector<TorusGeneratorSpec> g = SymmetricGroupGenerators(kDim);  // swap, cycle
  g.push_back(SignFlipGenerator({1}));
  g.push_back(SignFlipGenerator({0, 2, 3}));
  g.push_back(ShiftGenerator({2}, 5));
  g.push_back(ShiftGenerator({0, 1, 2, 3}, 3));
  return g;
}

Eigen::MatrixXd Power(const Eigen::MatrixXd& m, int k) {
  Eigen::MatrixXd r = Eigen::MatrixXd::Identity(m.rows(), m.cols());
  for (int i = 0; i < k; ++i) r = r * m;
  return r;
}

// The order of each generator in AllKinds(): (0 1)² = 1, (0 1 2 3)⁴ = 1,
// flips² = 1, shift by 2/p: p-th power = 1.
const int kOrders[] = {2, kDim, 2, 2, 5, 3};

TEST(GeneratorMatrixTest, OrthogonalAndSatisfyGroupRelations) {
  const TorusBasis basis = Basis();
  const auto gens = AllKinds();
  for (size_t g = 0; g < gens.size(); ++g) {
    for (int e = 0; e < static_cast<int>(basis.eigenspaces.size()); ++e) {
      auto d = GeneratorMatrixOnEigenspace(basis, e, gens[g]);
      ASSERT_TRUE(d.ok()) << d.status();
      const int64_t m = d->rows();
      const Eigen::MatrixXd id = Eigen::MatrixXd::Identity(m, m);
      EXPECT_LT((d->transpose() * *d - id).cwiseAbs().maxCoeff(), 1e-12)
          << "generator " << g << " eigenspace " << e;
      EXPECT_LT((Power(*d, kOrders[g]) - id).cwiseAbs().maxCoeff(), 1e-12)
          << "generator " << g << " eigenspace " << e;
      if (kOrders[g] > 1 && basis.eigenspaces[e].level > 0) {
        // Not trivially the identity on every eigenspace of positive level.
        bool nontrivial = false;
        for (int k = 1; k < kOrders[g]; ++k) {
          nontrivial |= (Power(*d, k) - id).cwiseAbs().maxCoeff() > 1e-6;
        }
        EXPECT_TRUE(nontrivial) << "generator " << g << " eigenspace " << e;
      }
    }
  }
}

TEST(GeneratorMatrixTest, MatchesEvaluationAtTransformedPoints) {
  // φ_λ(g·x) = D^λ(g) φ_λ(x) at random points, for every generator kind.
  const TorusBasis basis = Basis();
  TorusFunctionTable table(basis.signed_indices);
  const int64_t num = basis.num_functions();
  Rng rng(11);
  for (const TorusGeneratorSpec& spec : AllKinds()) {
    const TorusIsometry g = IsometryFromGenerator(spec, kDim);
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<float> x(kDim), gx(kDim);
      for (float& v : x) v = static_cast<float>(rng.Uniform(-1, 1));
      ApplyIsometry(g, 1, x.data(), gx.data());
      std::vector<double> phi(num), phi_g(num);
      table.EvaluateBatch(1, x.data(), phi.data());
      table.EvaluateBatch(1, gx.data(), phi_g.data());
      for (int e = 0; e < static_cast<int>(basis.eigenspaces.size()); ++e) {
        const TorusEigenspace& sp = basis.eigenspaces[e];
        auto d = GeneratorMatrixOnEigenspace(basis, e, spec);
        ASSERT_TRUE(d.ok());
        const Eigen::VectorXd predicted =
            *d * Eigen::Map<const Eigen::VectorXd>(phi.data() + sp.begin, sp.size());
        const Eigen::VectorXd actual =
            Eigen::Map<const Eigen::VectorXd>(phi_g.data() + sp.begin, sp.size());
        // The transformed point is rounded to float: allow |∇φ|·ulp.
        EXPECT_LT((predicted - actual).cwiseAbs().maxCoeff(), 1e-5)
            << "eigenspace level " << sp.level;
      }
    }
  }
}

TEST(TorusGroupTest, EnumeratesSmallGroupsAndSamplesLargeOnes) {
  auto flips = EnumerateOrSampleTorusGroup(AllSignFlipGenerators(4), 4, 5000, 100, 20, 1);
  ASSERT_TRUE(flips.ok());
  EXPECT_TRUE(flips->exhaustive);
  EXPECT_EQ(flips->elements.size(), 16u);
  auto s4 = EnumerateOrSampleTorusGroup(SymmetricGroupGenerators(4), 4, 5000, 100, 20, 1);
  ASSERT_TRUE(s4.ok());
  EXPECT_TRUE(s4->exhaustive);
  EXPECT_EQ(s4->elements.size(), 24u);
  auto z5 = EnumerateOrSampleTorusGroup({ShiftGenerator({0, 2}, 5)}, 3, 5000, 100, 20, 1);
  ASSERT_TRUE(z5.ok());
  EXPECT_EQ(z5->elements.size(), 5u);
  // Dihedral: a flip and a shift by 2/6 of one coordinate generate 12 elements.
  auto dihedral = EnumerateOrSampleTorusGroup({SignFlipGenerator({0}), ShiftGenerator({0}, 6)}, 1,
                                              5000, 100, 20, 1);
  ASSERT_TRUE(dihedral.ok());
  EXPECT_EQ(dihedral->elements.size(), 12u);
  auto s10 = EnumerateOrSampleTorusGroup(SymmetricGroupGenerators(10), 10, 5000, 100, 30, 1);
  ASSERT_TRUE(s10.ok());
  EXPECT_FALSE(s10->exhaustive);
  EXPECT_EQ(s10->elements.size(), 1u + 2u + 100u);
}

TEST(TorusGroupTest, RejectsMalformedGenerators) {
  EXPECT_FALSE(ValidateTorusGenerator(PermutationGenerator({0, 0, 1}), 3, 0).ok());
  EXPECT_FALSE(ValidateTorusGenerator(PermutationGenerator({0, 1}), 3, 0).ok());
  EXPECT_FALSE(ValidateTorusGenerator(SignFlipGenerator({3}), 3, 0).ok());
  EXPECT_FALSE(ValidateTorusGenerator(SignFlipGenerator({}), 3, 0).ok());
  EXPECT_FALSE(ValidateTorusGenerator(ShiftGenerator({0}, 0), 3, 0).ok());
  const absl::Status st = ValidateTorusGenerator(ShiftGenerator({0}, 0), 3, 4);
  EXPECT_NE(st.message().find("generators[4].p"), absl::string_view::npos) << st;
  EXPECT_TRUE(ValidateTorusGenerator(ShiftGenerator({0, 1}, 7), 3, 0).ok());
}

}  // namespace
}  // namespace invariant
