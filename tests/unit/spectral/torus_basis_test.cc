#include "core/spectral/torus_basis.h"

#include <cmath>
#include <vector>

#include "Eigen/Core"
#include "core/base/random.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(TorusBasisTest, EigenspaceSizesMatchCounting) {
  // d = 10: level 1 = 10 coords × {cos, sin}; level 2 = C(10,2)·4;
  // level 3 = C(10,3)·8; level 4 = 10·2 (k = 2) + C(10,4)·16.
  EXPECT_EQ(TorusEigenspaceSize(10, 0), 1);
  EXPECT_EQ(TorusEigenspaceSize(10, 1), 20);
  EXPECT_EQ(TorusEigenspaceSize(10, 2), 180);
  EXPECT_EQ(TorusEigenspaceSize(10, 3), 960);
  EXPECT_EQ(TorusEigenspaceSize(10, 4), 20 + 210 * 16);
  EXPECT_EQ(TorusEigenspaceSize(1, 2), 0);  // no k with k² = 2
  auto basis = EnumerateTorusBasisToLevel(4, 6);
  ASSERT_TRUE(basis.ok()) << basis.status();
  for (const TorusEigenspace& e : basis->eigenspaces) {
    EXPECT_EQ(e.size(), TorusEigenspaceSize(4, e.level)) << "level " << e.level;
    for (int64_t j = e.begin; j < e.end; ++j) {
      int32_t sum = 0;
      for (int32_t i = 0; i < 4; ++i)
        sum += basis->signed_indices.row(j)[i] * basis->signed_indices.row(j)[i];
      EXPECT_EQ(sum, e.level);
    }
  }
}

TEST(TorusBasisTest, BudgetKeepsWholeEigenspacesOnly) {
  auto exact = EnumerateTorusBasis(10, 1161);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->num_functions(), 1161);
  EXPECT_EQ(exact->eigenspaces.size(), 4u);
  auto partial = EnumerateTorusBasis(10, 1160);  // level 3 would overflow: dropped
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->num_functions(), 201);
  EXPECT_EQ(partial->eigenspaces.back().level, 2);
  auto one = EnumerateTorusBasis(3, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->num_functions(), 1);
  EXPECT_FALSE(EnumerateTorusBasis(0, 10).ok());
  EXPECT_FALSE(EnumerateTorusBasis(3, 0).ok());
}

TEST(TorusBasisTest, LowDimensionsAndLimits) {
  // d = 2, a budget far above level 16 (the first size table): the whole
  // eigenspaces that fit, and the next non-empty one would not.
  auto two = EnumerateTorusBasis(2, 5000);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_LE(two->num_functions(), 5000);
  EXPECT_GT(two->num_functions(), 4900);
  for (const TorusEigenspace& e : two->eigenspaces) {
    EXPECT_EQ(e.size(), TorusEigenspaceSize(2, e.level));
  }
  int32_t next = two->eigenspaces.back().level + 1;
  while (TorusEigenspaceSize(2, next) == 0) ++next;
  EXPECT_GT(two->num_functions() + TorusEigenspaceSize(2, next), 5000);
  // d = 1: levels are k², capped at kMaxTorusLevel = 2^16, so k ≤ 256.
  auto one = EnumerateTorusBasis(1, 1 << 20);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->num_functions(), 1 + 2 * 256);
  EXPECT_EQ(one->max_frequency(), 256);
  // Limits fail fast instead of exhausting memory.
  EXPECT_FALSE(EnumerateTorusBasis(3, kMaxTorusBudget + 1).ok());
  EXPECT_FALSE(EnumerateTorusBasisToLevel(3, kMaxTorusLevel + 1).ok());
  EXPECT_FALSE(EnumerateTorusBasisToLevel(30, 10).ok());  // C(30,10)·2^10 functions at level 10
}

TEST(TorusBasisTest, OrthonormalOnAFineGrid) {
  // A uniform grid of N points per coordinate integrates trig polynomials of
  // degree < N exactly, so the Gram matrix must be the identity.
  auto basis = EnumerateTorusBasisToLevel(2, 9);
  ASSERT_TRUE(basis.ok());
  const int grid = 16;
  const int64_t num = basis->num_functions();
  TorusFunctionTable table(basis->signed_indices);
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(num, num);
  std::vector<double> phi(num);
  std::vector<double> scratch;
  for (int a = 0; a < grid; ++a) {
    for (int b = 0; b < grid; ++b) {
      const float x[2] = {-1.0f + 2.0f * a / grid, -1.0f + 2.0f * b / grid};
      table.EvaluatePoint(x, scratch, phi.data());
      Eigen::Map<Eigen::VectorXd> v(phi.data(), num);
      gram += v * v.transpose();
    }
  }
  gram /= grid * grid;
  EXPECT_LT((gram - Eigen::MatrixXd::Identity(num, num)).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(TorusBasisTest, TableMatchesDirectEvaluation) {
  auto basis = EnumerateTorusBasis(5, 400);
  ASSERT_TRUE(basis.ok());
  TorusFunctionTable table(basis->signed_indices);
  Rng rng(7);
  std::vector<float> x(3 * 5);
  for (float& v : x) v = static_cast<float>(rng.Uniform(-1, 1));
  std::vector<double> out(3 * basis->num_functions());
  table.EvaluateBatch(3, x.data(), out.data());
  for (int r = 0; r < 3; ++r) {
    for (int64_t j = 0; j < basis->num_functions(); ++j) {
      EXPECT_DOUBLE_EQ(out[r * basis->num_functions() + j],
                       EvaluateTorusFunction(basis->signed_indices.row(j), 5, &x[r * 5]));
    }
  }
}

}  // namespace
}  // namespace invariant
