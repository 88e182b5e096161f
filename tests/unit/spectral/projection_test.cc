// The projection of Spec-Avg is the least-squares closest invariant vector,
// and the production fit (mean of y·features) equals Algorithm 1 computed
// literally: empirical coefficients of every eigenfunction, then
// f̂_λ = f̃_λ − Bᵀ(BBᵀ)⁺Bf̃_λ with B the stacked D^λ(g) − I.
#include <cmath>
#include <map>
#include <vector>

#include "Eigen/Core"
#include "Eigen/QR"
#include "Eigen/SVD"
#include "core/base/random.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

// B = [D^λ(g) − I]_g stacked over the generators, for eigenspace e.
Eigen::MatrixXd StackedConstraints(const TorusBasis& basis, int e,
                                   const std::vector<TorusGeneratorSpec>& gens) {
  const int64_t m = basis.eigenspaces[e].size();
  Eigen::MatrixXd b(static_cast<int64_t>(gens.size()) * m, m);
  for (size_t g = 0; g < gens.size(); ++g) {
    auto d = GeneratorMatrixOnEigenspace(basis, e, gens[g]);
    EXPECT_TRUE(d.ok()) << d.status();
    b.middleRows(g * m, m) = *d - Eigen::MatrixXd::Identity(m, m);
  }
  return b;
}

// f̃ − Bᵀ(BBᵀ)⁺Bf̃ (Algorithm 1, step 8).
Eigen::VectorXd ProjectByFormula(const Eigen::MatrixXd& b, const Eigen::VectorXd& ft) {
  const Eigen::MatrixXd bbt = b * b.transpose();
  return ft - b.transpose() * (bbt.completeOrthogonalDecomposition().pseudoInverse() * (b * ft));
}

TEST(ProjectionTest, ProjectionIsTheClosestInvariantVector) {
  // Compare with three independent computations: the null space of B from a
  // full SVD, Alg. 1's formula, and the KKT system of
  //   min ‖f − f̃‖²  subject to  Bf = 0:   [I Bᵀ; B 0][f; μ] = [f̃; 0].
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
    SCOPED_TRACE(sp.level);
    const int64_t m = sp.size();
    const Eigen::MatrixXd b = StackedConstraints(*basis, e, gens);
    const Eigen::VectorXd ft = tilde.segment(sp.begin, m);
    const Eigen::VectorXd ours = projected.segment(sp.begin, m);
    // Null space from the SVD.
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(b, Eigen::ComputeFullV);
    int64_t rank = 0;
    for (int64_t k = 0; k < svd.singularValues().size(); ++k) {
      rank += svd.singularValues()(k) > 1e-9;
    }
    const Eigen::MatrixXd null = svd.matrixV().rightCols(m - rank);
    EXPECT_LT((ours - null * (null.transpose() * ft)).cwiseAbs().maxCoeff(), 1e-9);
    EXPECT_LT((ours - ProjectByFormula(b, ft)).cwiseAbs().maxCoeff(), 1e-8);
    // KKT (rank-deficient: B's rows are redundant; f is unique, μ is not).
    const int64_t rows = b.rows();
    Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(m + rows, m + rows);
    kkt.topLeftCorner(m, m).setIdentity();
    kkt.topRightCorner(m, rows) = b.transpose();
    kkt.bottomLeftCorner(rows, m) = b;
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(m + rows);
    rhs.head(m) = ft;
    const Eigen::VectorXd sol = kkt.completeOrthogonalDecomposition().solve(rhs);
    EXPECT_LT((ours - sol.head(m)).cwiseAbs().maxCoeff(), 1e-8);
    // Feasible, and no random invariant vector is closer to f̃.
    EXPECT_LT((b * ours).cwiseAbs().maxCoeff(), 1e-10);
    for (int trial = 0; trial < 5 && m - rank > 0; ++trial) {
      Eigen::VectorXd z(m - rank);
      for (int64_t k = 0; k < z.size(); ++k) z(k) = rng.Normal();
      const Eigen::VectorXd other = null * z;
      EXPECT_LE((ours - ft).norm(), (other - ft).norm() + 1e-12);
    }
    EXPECT_EQ(sub->feature_begin[e + 1] - sub->feature_begin[e], m - rank);
    total_invariant += m - rank;
  }
  EXPECT_EQ(sub->combination.num_features, total_invariant);
  EXPECT_GT(total_invariant, 3);
}

// A non-invariant target.
float Target(const float* x, int32_t dim) {
  double s = 0;
  for (int32_t i = 0; i < dim; ++i) s += (i + 1) * x[i] + std::sin(3.0 * x[i]) * x[(i + 1) % dim];
  return static_cast<float>(s);
}

TEST(ProjectionTest, FeatureFitEqualsAlgorithmOneLiterally) {
  constexpr int32_t kDim = 3;
  constexpr int64_t kBudget = 200;
  constexpr int64_t kN = 400;
  // A non-monomial group (the shift by 2/3 uses the dense path) and a
  // monomial one (signed orbits).
  const std::vector<std::vector<TorusGeneratorSpec>> groups = {
      {SignFlipGenerator({0}), ShiftGenerator({1}, 3)},
      {SymmetricGroupGenerators(kDim)[0], SymmetricGroupGenerators(kDim)[1],
       SignFlipGenerator({0})},
  };
  Rng rng(4);
  std::vector<float> x(kN * kDim), y(kN);
  for (float& v : x) v = static_cast<float>(rng.Uniform(-1, 1));
  for (int64_t r = 0; r < kN; ++r) y[r] = Target(&x[r * kDim], kDim);
  std::vector<float> test(20 * kDim);
  for (float& v : test) v = static_cast<float>(rng.Uniform(-1, 1));
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    SCOPED_TRACE(gi);
    auto basis = EnumerateTorusBasis(kDim, kBudget);
    ASSERT_TRUE(basis.ok());
    const int64_t num = basis->num_functions();
    // Steps 1–4: f̃_j = (1/n) Σ_i y_i φ_j(x_i) for every eigenfunction.
    Eigen::VectorXd tilde = Eigen::VectorXd::Zero(num);
    for (int64_t r = 0; r < kN; ++r) {
      for (int64_t j = 0; j < num; ++j) {
        tilde(j) += y[r] * EvaluateTorusFunction(basis->signed_indices.row(j), kDim, &x[r * kDim]);
      }
    }
    tilde /= static_cast<double>(kN);
    // Steps 5–8: project each eigenspace by the formula.
    Eigen::VectorXd hat(num);
    for (int e = 0; e < static_cast<int>(basis->eigenspaces.size()); ++e) {
      const TorusEigenspace& sp = basis->eigenspaces[e];
      hat.segment(sp.begin, sp.size()) = ProjectByFormula(StackedConstraints(*basis, e, groups[gi]),
                                                          tilde.segment(sp.begin, sp.size()));
    }
    EXPECT_GT(hat.tail(num - 1).cwiseAbs().maxCoeff(), 1e-3);  // not just the constant
    // The library's literal version agrees.
    auto sub = ComputeInvariantSubspaces(*basis, groups[gi]);
    ASSERT_TRUE(sub.ok());
    auto library = SpecAvgAlgorithm1(*basis, *sub, kN, x.data(), y.data());
    ASSERT_TRUE(library.ok());
    EXPECT_LT((*library - hat).cwiseAbs().maxCoeff(), 1e-9);
    // The production path: encoder features, mean of y·features.
    SpectralEncoderOptions o;
    o.dim = kDim;
    o.budget = kBudget;
    o.generators = groups[gi];
    auto enc = SpectralEncoder::Build(o);
    ASSERT_TRUE(enc.ok());
    auto coef = FitSpecAvg(**enc, kN, x.data(), y.data());
    ASSERT_TRUE(coef.ok());
    // Same coefficients over the eigenfunctions: the stored ones match, the
    // pruned ones are 0 in the literal result.
    const Eigen::VectorXd stored = (*enc)->ExpandToBasis(*coef);
    const IntMatrix& rows = (*enc)->tensors().basis;
    std::map<std::vector<int32_t>, int64_t> stored_index;
    for (int64_t s = 0; s < rows.rows(); ++s) {
      stored_index.emplace(std::vector<int32_t>(rows.row(s), rows.row(s) + kDim), s);
    }
    for (int64_t j = 0; j < num; ++j) {
      const int32_t* s = basis->signed_indices.row(j);
      auto it = stored_index.find(std::vector<int32_t>(s, s + kDim));
      const double production = it == stored_index.end() ? 0.0 : stored(it->second);
      EXPECT_NEAR(production, hat(j), 1e-9) << "basis function " << j;
    }
    // Same predictions f̂(x) = Σ f̂_j φ_j(x).
    std::vector<float> ours(20);
    PredictSpectral(**enc, *coef, 20, test.data(), ours.data());
    for (int r = 0; r < 20; ++r) {
      double literal = 0;
      for (int64_t j = 0; j < num; ++j) {
        literal +=
            hat(j) * EvaluateTorusFunction(basis->signed_indices.row(j), kDim, &test[r * kDim]);
      }
      EXPECT_NEAR(ours[r], literal, 1e-5 * (1 + std::abs(literal)));
    }
  }
}

}  // namespace
}  // namespace invariant
