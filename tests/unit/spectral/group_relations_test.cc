// The generator matrices form a representation of the group: products of
// D(swap) and D(cycle) reach exactly the d! permutations, each product acts as
// direct evaluation of the permuted function, and the defining relations of
// the sign-flip, symmetric and dihedral groups hold for the matrices.
#include <cmath>
#include <map>
#include <vector>

#include "Eigen/Core"
#include "core/base/random.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/torus_basis.h"
#include "core/spectral/torus_group.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

// D(g) on the whole basis (block diagonal over eigenspaces):
// φ(g·x) = D(g) φ(x).
Eigen::MatrixXd FullMatrix(const TorusBasis& basis, const TorusGeneratorSpec& g) {
  auto images = ComputeGeneratorImages(basis.signed_indices, g);
  EXPECT_TRUE(images.ok()) << images.status();
  const int64_t num = basis.num_functions();
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(num, num);
  for (int64_t j = 0; j < num; ++j) {
    for (size_t t = 0; t < (*images)[j].index.size(); ++t) {
      d(j, (*images)[j].index[t]) += (*images)[j].value[t];
    }
  }
  return d;
}

double MaxAbs(const Eigen::MatrixXd& m) { return m.cwiseAbs().maxCoeff(); }

// Smallest k ≥ 1 with m^k = I (0 if none up to max_k).
int Order(const Eigen::MatrixXd& m, int max_k) {
  const Eigen::MatrixXd id = Eigen::MatrixXd::Identity(m.rows(), m.cols());
  Eigen::MatrixXd p = m;
  for (int k = 1; k <= max_k; ++k) {
    if (MaxAbs(p - id) < 1e-12) return k;
    p = p * m;
  }
  return 0;
}

TEST(GroupRelationsTest, SwapAndCycleGenerateAllPermutationsActingAsPermutedFunctions) {
  constexpr int32_t kDim = 4;
  auto basis = EnumerateTorusBasisToLevel(kDim, 3);  // 65 functions, faithful for S_4
  ASSERT_TRUE(basis.ok());
  const int64_t num = basis->num_functions();
  const auto gens = SymmetricGroupGenerators(kDim);
  ASSERT_EQ(gens.size(), 2u);
  std::vector<Eigen::MatrixXd> gen_mats;
  std::vector<TorusIsometry> gen_isos;
  for (const auto& g : gens) {
    gen_mats.push_back(FullMatrix(*basis, g));
    gen_isos.push_back(IsometryFromGenerator(g, kDim));
  }
  // Breadth-first over words: the key is the permutation the word performs.
  std::map<std::vector<int32_t>, Eigen::MatrixXd> reached;
  std::vector<std::pair<TorusIsometry, Eigen::MatrixXd>> frontier = {
      {IdentityIsometry(kDim), Eigen::MatrixXd::Identity(num, num)}};
  reached.emplace(frontier[0].first.source, frontier[0].second);
  while (!frontier.empty()) {
    std::vector<std::pair<TorusIsometry, Eigen::MatrixXd>> next;
    for (const auto& [iso, mat] : frontier) {
      for (size_t g = 0; g < gens.size(); ++g) {
        // D(a∘b) = D(a)·D(b): φ(a·(b·x)) = D(a)φ(b·x) = D(a)D(b)φ(x).
        TorusIsometry w = ComposeIsometries(gen_isos[g], iso);
        if (reached.count(w.source)) continue;
        Eigen::MatrixXd m = gen_mats[g] * mat;
        reached.emplace(w.source, m);
        next.emplace_back(std::move(w), std::move(m));
      }
    }
    frontier = std::move(next);
  }
  ASSERT_EQ(reached.size(), 24u);  // 4! permutations, all reached
  // Every element: orthogonal, a distinct matrix, and f(x∘σ) evaluated
  // directly equals the coefficients cᵀD(σ) applied to φ(x).
  Rng rng(17);
  Eigen::VectorXd c(num);
  for (int64_t j = 0; j < num; ++j) c(j) = rng.Normal();
  std::vector<const Eigen::MatrixXd*> mats;
  for (const auto& [source, m] : reached) {
    EXPECT_LT(MaxAbs(m.transpose() * m - Eigen::MatrixXd::Identity(num, num)), 1e-12);
    for (const Eigen::MatrixXd* other : mats) EXPECT_GT(MaxAbs(m - *other), 0.5);
    mats.push_back(&m);
    for (int trial = 0; trial < 3; ++trial) {
      float x[kDim], permuted[kDim];
      for (float& v : x) v = static_cast<float>(rng.Uniform(-1, 1));
      for (int32_t i = 0; i < kDim; ++i) permuted[i] = x[source[i]];  // (σ·x)_i = x_{σ(i)}
      double direct = 0, phi_x_sum = 0;
      Eigen::VectorXd phi(num);
      for (int64_t j = 0; j < num; ++j) {
        direct += c(j) * EvaluateTorusFunction(basis->signed_indices.row(j), kDim, permuted);
        phi(j) = EvaluateTorusFunction(basis->signed_indices.row(j), kDim, x);
        phi_x_sum += std::abs(c(j) * phi(j));
      }
      const double via_matrix = c.dot(m * phi);
      EXPECT_NEAR(direct, via_matrix, 1e-12 * (1 + phi_x_sum));
    }
  }
}

TEST(GroupRelationsTest, DefiningRelationsHold) {
  auto basis = EnumerateTorusBasisToLevel(4, 5);
  ASSERT_TRUE(basis.ok());
  // {±1}^4: each flip is an involution and flips commute.
  std::vector<Eigen::MatrixXd> flips;
  for (const auto& g : AllSignFlipGenerators(4)) flips.push_back(FullMatrix(*basis, g));
  for (size_t a = 0; a < flips.size(); ++a) {
    EXPECT_EQ(Order(flips[a], 4), 2);
    for (size_t b = 0; b < a; ++b) {
      EXPECT_LT(MaxAbs(flips[a] * flips[b] - flips[b] * flips[a]), 1e-12);
      EXPECT_GT(MaxAbs(flips[a] - flips[b]), 0.5);
    }
  }
  // A multi-coordinate flip is the product of single flips.
  EXPECT_LT(MaxAbs(FullMatrix(*basis, SignFlipGenerator({0, 2})) - flips[0] * flips[2]), 1e-12);
  // S_4: swap² = cycle⁴ = (swap·cycle)³ = I (swap·cycle is a 3-cycle), and
  // swap, cycle do not commute.
  const auto sym = SymmetricGroupGenerators(4);
  const Eigen::MatrixXd s = FullMatrix(*basis, sym[0]);
  const Eigen::MatrixXd c = FullMatrix(*basis, sym[1]);
  EXPECT_EQ(Order(s, 30), 2);
  EXPECT_EQ(Order(c, 30), 4);
  EXPECT_EQ(Order(s * c, 30), 3);
  EXPECT_GT(MaxAbs(s * c - c * s), 0.5);
  // Dihedral group of order 12 on coordinate 1: rotation r by 2/6 and
  // reflection f satisfy r⁶ = f² = (f·r)² = I, i.e. f r f = r⁻¹.
  const Eigen::MatrixXd r = FullMatrix(*basis, ShiftGenerator({1}, 6));
  const Eigen::MatrixXd f = flips[1];
  EXPECT_EQ(Order(r, 30), 6);
  EXPECT_EQ(Order(f * r, 30), 2);
  EXPECT_LT(MaxAbs(f * r * f - r.transpose()), 1e-12);
  // Shifts of different coordinates commute; a shift commutes with a flip of
  // another coordinate but not of its own.
  const Eigen::MatrixXd r0 = FullMatrix(*basis, ShiftGenerator({0}, 3));
  EXPECT_LT(MaxAbs(r0 * r - r * r0), 1e-12);
  EXPECT_LT(MaxAbs(r0 * flips[1] - flips[1] * r0), 1e-12);
  EXPECT_GT(MaxAbs(r0 * flips[0] - flips[0] * r0), 0.1);
}

}  // namespace
}  // namespace invariant
