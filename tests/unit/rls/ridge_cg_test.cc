#include "core/rls/ridge_cg.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/rls/test_data.h"

namespace invariant {
namespace {

using rls_test::RandomNormal;
using rls_test::RelativeError;
using rls_test::ToDouble;

// y = Φ W* + 3 + noise. Feature j has scale decay^j, so the Gram's spectrum
// spans decay^(2(D-1)): a condition number that plain CG feels.
struct Problem {
  FloatMatrix phi, y;
};
Problem MakeProblem(uint64_t seed, int64_t n, int64_t d, int64_t t, double decay) {
  Rng rng(seed);
  Problem p;
  p.phi = RandomNormal(rng, n, d, 0.5, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      p.phi.mutable_row(i)[j] = static_cast<float>(p.phi.row(i)[j] * std::pow(decay, j));
    }
  }
  const Eigen::MatrixXd w = ToDouble(RandomNormal(rng, d, t));
  Eigen::MatrixXd y = ToDouble(p.phi) * w + ToDouble(RandomNormal(rng, n, t, 0.0, 0.3));
  y.array() += 3.0;
  p.y = FloatMatrix::FromEigen(y);
  return p;
}

GramAccumulator Sums(const Problem& p, int64_t first, int64_t count) {
  auto sums = GramAccumulator::Create(p.phi.cols(), p.y.cols());
  EXPECT_TRUE(sums.ok());
  EXPECT_TRUE(sums->Add(count, p.phi.row(first), p.y.row(first)).ok());
  return *std::move(sums);
}

FloatMatrix Rows(const FloatMatrix& m, int64_t first, int64_t count) {
  FloatMatrix out = FloatMatrix::Zeros(count, m.cols());
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t j = 0; j < m.cols(); ++j) out.mutable_row(i)[j] = m.row(first + i)[j];
  }
  return out;
}

RidgeOptions Bias(bool fit_bias) {
  RidgeOptions o;
  o.fit_bias = fit_bias;
  return o;
}

ConjugateGradientOptions Cg(int64_t rank, double tolerance = 1e-12) {
  ConjugateGradientOptions cg;
  cg.preconditioner_rank = rank;
  cg.tolerance = tolerance;  // FinalWeights; SolveWeights stops at 1e-6
  return cg;
}

// CG converges to the direct (eigendecomposition) solve, from the Gram and
// from the rows, with and without the preconditioner and the bias.
TEST(RidgeCgTest, ConvergesToTheDirectSolve) {
  const Problem p = MakeProblem(31, 300, 40, 3, 0.9);
  const GramAccumulator sums = Sums(p, 0, 300);
  for (bool fit_bias : {false, true}) {
    auto direct = MakePrimalRidgeSolver(sums, Bias(fit_bias));
    ASSERT_TRUE(direct.ok());
    for (int64_t rank : {0, 8, 64}) {
      auto gram = MakeConjugateGradientRidgeSolver(sums, Bias(fit_bias), Cg(rank));
      auto rows = MakeRowsConjugateGradientRidgeSolver({p.phi}, {p.y}, Bias(fit_bias), Cg(rank));
      ASSERT_TRUE(gram.ok() && rows.ok()) << gram.status() << rows.status();
      EXPECT_EQ((*rows)->feature_dim(), 40);
      EXPECT_EQ((*rows)->target_dim(), 3);
      EXPECT_EQ((*rows)->num_examples(), 300);
      for (double lambda : {1e-5, 1e-3, 1e-1, 10.0}) {
        SCOPED_TRACE(testing::Message()
                     << "fit_bias " << fit_bias << " rank " << rank << " lambda " << lambda);
        auto want = (*direct)->SolveWeights(lambda);
        ASSERT_TRUE(want.ok());
        for (const auto* solver : {gram->get(), rows->get()}) {
          auto got = solver->FinalWeights(lambda);
          ASSERT_TRUE(got.ok()) << got.status();
          EXPECT_TRUE(got->converged);
          EXPECT_LE(got->relative_residual, 1e-11);
          EXPECT_LT(RelativeError(got->weights, want->weights), 1e-6);
          if (fit_bias) {
            EXPECT_LT(RelativeError(got->bias, want->bias), 1e-6);
          }
          EXPECT_EQ(got->lambda, lambda);
        }
      }
    }
  }
}

// Shards: merged sums (CG on the Gram) and row blocks (CG on the rows)
// give the single run's weights up to summation order.
TEST(RidgeCgTest, ShardsEqualOneRun) {
  const Problem p = MakeProblem(32, 400, 25, 2, 0.95);
  GramAccumulator merged = Sums(p, 0, 150);
  ASSERT_TRUE(merged.Merge(Sums(p, 150, 250)).ok());
  auto one = MakeConjugateGradientRidgeSolver(Sums(p, 0, 400), {}, Cg(8));
  auto sharded = MakeConjugateGradientRidgeSolver(merged, {}, Cg(8));
  const std::vector<FloatMatrix> phi = {Rows(p.phi, 0, 100), Rows(p.phi, 100, 200),
                                        Rows(p.phi, 300, 100)};
  const std::vector<FloatMatrix> y = {Rows(p.y, 0, 100), Rows(p.y, 100, 200), Rows(p.y, 300, 100)};
  auto blocks = MakeRowsConjugateGradientRidgeSolver(phi, y, {}, Cg(8));
  auto single = MakeRowsConjugateGradientRidgeSolver({p.phi}, {p.y}, {}, Cg(8));
  ASSERT_TRUE(one.ok() && sharded.ok() && blocks.ok() && single.ok());
  for (double lambda : {1e-4, 1e-2}) {
    auto a = (*one)->FinalWeights(lambda);
    auto b = (*sharded)->FinalWeights(lambda);
    auto c = (*blocks)->FinalWeights(lambda);
    auto d = (*single)->FinalWeights(lambda);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
    EXPECT_LT(RelativeError(b->weights, a->weights), 1e-9);
    EXPECT_LT(RelativeError(c->weights, d->weights), 1e-9);
    EXPECT_LT(RelativeError(c->weights, a->weights), 1e-9);
    EXPECT_LT(RelativeError(c->bias, a->bias), 1e-9);
  }
}

// The Nyström preconditioner cuts the iterations on an ill-conditioned
// Gram; at full rank it is exact and CG needs one or two iterations.
TEST(RidgeCgTest, PreconditionerCutsIterations) {
  const Problem p = MakeProblem(33, 500, 60, 2, 0.85);
  const GramAccumulator sums = Sums(p, 0, 500);
  auto plain = MakeConjugateGradientRidgeSolver(sums, {}, Cg(0, 1e-10));
  auto low = MakeConjugateGradientRidgeSolver(sums, {}, Cg(20, 1e-10));
  auto full = MakeConjugateGradientRidgeSolver(sums, {}, Cg(60, 1e-10));
  ASSERT_TRUE(plain.ok() && low.ok() && full.ok());
  const double lambda = 1e-6;
  auto a = (*plain)->FinalWeights(lambda);
  auto b = (*low)->FinalWeights(lambda);
  auto c = (*full)->FinalWeights(lambda);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(a->converged && b->converged && c->converged);
  EXPECT_LT(b->iterations, a->iterations / 2) << a->iterations << " vs " << b->iterations;
  EXPECT_LE(c->iterations, 3);
  EXPECT_LT(RelativeError(b->weights, a->weights), 1e-6);
}

// Warm start along the grid: the next λ starts from the nearest solution,
// so it needs fewer iterations than a cold start; a λ solved before comes
// from the cache; the same call sequence gives the same bits.
TEST(RidgeCgTest, WarmStartAlongTheGridIsDeterministic) {
  const Problem p = MakeProblem(34, 400, 50, 3, 0.9);
  const GramAccumulator sums = Sums(p, 0, 400);
  auto walk = MakeConjugateGradientRidgeSolver(sums, {}, Cg(4));
  auto again = MakeConjugateGradientRidgeSolver(sums, {}, Cg(4));
  auto cold = MakeConjugateGradientRidgeSolver(sums, {}, Cg(4));
  ASSERT_TRUE(walk.ok() && again.ok() && cold.ok());
  const std::vector<double> grid = {1e-2, 1.1e-2};
  std::vector<RidgeWeights> first, second;
  for (double lambda : grid) {
    first.push_back(*(*walk)->SolveWeights(lambda));
    second.push_back(*(*again)->SolveWeights(lambda));
  }
  auto cold_second = (*cold)->SolveWeights(grid[1]);
  ASSERT_TRUE(cold_second.ok());
  EXPECT_LT(first[1].iterations, cold_second->iterations);
  for (size_t i = 0; i < grid.size(); ++i) {
    EXPECT_EQ(first[i].weights, second[i].weights);
    EXPECT_EQ(first[i].iterations, second[i].iterations);
  }
  auto cached = (*walk)->SolveWeights(grid[0]);
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(cached->weights, first[0].weights);
}

// Grid solves stop at the selection tolerance; the final solve of the
// chosen λ continues from there to the full tolerance, in fewer iterations
// than from scratch.
TEST(RidgeCgTest, SelectionSolvesAreLooserAndTheFinalSolveContinues) {
  const Problem p = MakeProblem(37, 400, 50, 2, 0.9);
  const GramAccumulator sums = Sums(p, 0, 400);
  ConjugateGradientOptions cg = Cg(4, 1e-12);
  cg.selection_tolerance = 1e-5;
  auto solver = MakeConjugateGradientRidgeSolver(sums, {}, cg);
  auto cold = MakeConjugateGradientRidgeSolver(sums, {}, cg);
  auto direct = MakePrimalRidgeSolver(sums);
  ASSERT_TRUE(solver.ok() && cold.ok() && direct.ok());
  auto loose = (*solver)->SolveWeights(1e-3);
  ASSERT_TRUE(loose.ok());
  EXPECT_LE(loose->relative_residual, 1e-4);
  EXPECT_GT(loose->relative_residual, 1e-12);
  auto final_solve = (*solver)->FinalWeights(1e-3);
  auto from_scratch = (*cold)->FinalWeights(1e-3);
  auto want = (*direct)->SolveWeights(1e-3);
  ASSERT_TRUE(final_solve.ok() && from_scratch.ok() && want.ok());
  EXPECT_LE(final_solve->relative_residual, 1e-11);
  EXPECT_LT(final_solve->iterations, from_scratch->iterations);
  EXPECT_LT(RelativeError(final_solve->weights, want->weights), 1e-8);
  // Now cached at the tighter tolerance, SolveWeights returns the final solve.
  auto again = (*solver)->SolveWeights(1e-3);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->weights, final_solve->weights);
}

// An iteration cap too small to converge is reported, not hidden.
TEST(RidgeCgTest, ReportsNonConvergence) {
  const Problem p = MakeProblem(35, 300, 40, 1, 0.8);
  ConjugateGradientOptions cg = Cg(0, 1e-12);
  cg.max_iterations = 2;
  auto solver = MakeConjugateGradientRidgeSolver(Sums(p, 0, 300), {}, cg);
  ASSERT_TRUE(solver.ok());
  auto got = (*solver)->FinalWeights(1e-6);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->converged);
  EXPECT_EQ(got->iterations, 2);
  EXPECT_GT(got->relative_residual, 1e-6);
}

TEST(RidgeCgTest, RejectsBadArguments) {
  const Problem p = MakeProblem(36, 20, 5, 1, 1.0);
  ConjugateGradientOptions bad;
  bad.tolerance = 0;
  EXPECT_EQ(MakeConjugateGradientRidgeSolver(Sums(p, 0, 20), {}, bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto empty = GramAccumulator::Create(5, 1);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(MakeConjugateGradientRidgeSolver(*empty).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MakeRowsConjugateGradientRidgeSolver({p.phi}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  FloatMatrix nan = FloatMatrix::FromEigen(p.phi.map());  // a deep copy
  nan.mutable_row(3)[2] = std::numeric_limits<float>::quiet_NaN();
  auto status = MakeRowsConjugateGradientRidgeSolver({p.phi, nan}, {p.y, p.y}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("block 1"), std::string::npos) << status;
  EXPECT_NE(status.message().find("phi[3, 2]"), std::string::npos) << status;
  auto solver = MakeRowsConjugateGradientRidgeSolver({p.phi}, {p.y});
  ASSERT_TRUE(solver.ok());
  EXPECT_EQ((*solver)->SolveWeights(-1).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace invariant
