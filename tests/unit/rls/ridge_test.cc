#include "core/rls/ridge.h"

#include <cmath>
#include <limits>

#include "Eigen/Cholesky"
#include "gtest/gtest.h"
#include "tests/unit/rls/test_data.h"

namespace invariant {
namespace {

using rls_test::RandomNormal;
using rls_test::RelativeError;
using rls_test::ToDouble;

// The textbook solution: W = (ΦcᵀΦc/N + λI)⁻¹ ΦcᵀYc/N by a direct Cholesky
// solve, b = ȳ − Wᵀμ (centring only with fit_bias).
RidgeWeights ClosedForm(const FloatMatrix& phi_f, const FloatMatrix& y_f, double lambda,
                        bool fit_bias) {
  Eigen::MatrixXd phi = ToDouble(phi_f);
  Eigen::MatrixXd y = ToDouble(y_f);
  const double n = static_cast<double>(phi.rows());
  Eigen::RowVectorXd mu = Eigen::RowVectorXd::Zero(phi.cols());
  Eigen::RowVectorXd y_mean = Eigen::RowVectorXd::Zero(y.cols());
  if (fit_bias) {
    mu = phi.colwise().mean();
    y_mean = y.colwise().mean();
    phi.rowwise() -= mu;
    y.rowwise() -= y_mean;
  }
  Eigen::MatrixXd a = phi.transpose() * phi / n;
  a.diagonal().array() += lambda;
  RidgeWeights out;
  out.weights = a.llt().solve(phi.transpose() * y / n);
  out.bias = y_mean - mu * out.weights;
  out.lambda = lambda;
  return out;
}

RidgeOptions Options(bool fit_bias) {
  RidgeOptions options;
  options.fit_bias = fit_bias;
  return options;
}

Eigen::MatrixXd PredictDouble(const RidgeWeights& w, const FloatMatrix& x) {
  Eigen::MatrixXd scores = ToDouble(x) * w.weights;
  scores.rowwise() += w.bias;
  return scores;
}

// y = Φ W* + b* + noise, with features of mean 0.5 so that the bias matters.
struct Problem {
  FloatMatrix phi, y, test_phi;
};
Problem MakeProblem(uint64_t seed, int64_t n, int64_t d, int64_t t, double noise) {
  Rng rng(seed);
  Problem p;
  p.phi = RandomNormal(rng, n, d, 0.5, 1.0);
  p.test_phi = RandomNormal(rng, 50, d, 0.5, 1.0);
  const Eigen::MatrixXd w = ToDouble(RandomNormal(rng, d, t));
  const Eigen::MatrixXd noise_m = ToDouble(RandomNormal(rng, n, t, 0.0, noise));
  Eigen::MatrixXd y = ToDouble(p.phi) * w + noise_m;
  y.array() += 3.0;
  p.y = FloatMatrix::FromEigen(y);
  return p;
}

TEST(RidgeTest, PrimalMatchesClosedFormSolve) {
  const Problem p = MakeProblem(11, 200, 30, 3, 0.5);
  for (bool fit_bias : {false, true}) {
    auto sums = GramAccumulator::Create(30, 3);
    ASSERT_TRUE(sums.ok());
    ASSERT_TRUE(sums->Add(200, p.phi.data(), p.y.data()).ok());
    auto solver = MakePrimalRidgeSolver(*sums, Options(fit_bias));
    ASSERT_TRUE(solver.ok()) << solver.status();
    EXPECT_EQ((*solver)->eigenvalues().size(), 30);
    for (double lambda : {1e-4, 1e-2, 1.0, 10.0}) {
      SCOPED_TRACE(testing::Message() << "fit_bias " << fit_bias << " lambda " << lambda);
      auto got = (*solver)->SolveWeights(lambda);
      ASSERT_TRUE(got.ok()) << got.status();
      const RidgeWeights want = ClosedForm(p.phi, p.y, lambda, fit_bias);
      EXPECT_LT(RelativeError(got->weights, want.weights), 1e-8);
      if (fit_bias) {
        EXPECT_LT(RelativeError(got->bias, want.bias), 1e-8);
      } else {
        EXPECT_EQ(got->bias.norm(), 0.0);
      }
      EXPECT_EQ(got->lambda, lambda);
    }
  }
}

// The Cholesky solver gives the eigendecomposition path's weights to 1e-6
// relative (here far closer) over a λ grid, including a λ so small that the
// factorisation fails on a rank-deficient Gram and the solver falls back.
TEST(RidgeTest, CholeskyEqualsTheEigendecompositionPath) {
  Problem p = MakeProblem(21, 300, 40, 3, 0.5);
  // Columns 38 and 39 repeat column 0: the centred Gram is singular.
  for (int64_t i = 0; i < 300; ++i) {
    p.phi.mutable_row(i)[38] = p.phi.row(i)[0];
    p.phi.mutable_row(i)[39] = p.phi.row(i)[0];
  }
  for (bool fit_bias : {false, true}) {
    auto sums = GramAccumulator::Create(40, 3);
    ASSERT_TRUE(sums.ok());
    ASSERT_TRUE(sums->Add(300, p.phi.data(), p.y.data()).ok());
    auto eigen = MakePrimalRidgeSolver(*sums, Options(fit_bias));
    auto cholesky = MakeCholeskyRidgeSolver(*sums, Options(fit_bias));
    ASSERT_TRUE(eigen.ok() && cholesky.ok());
    EXPECT_EQ((*cholesky)->eigenvalues().size(), 0);
    EXPECT_EQ((*cholesky)->feature_dim(), 40);
    EXPECT_EQ((*cholesky)->num_examples(), 300);
    for (double lambda : {1e-30, 1e-8, 1e-4, 1e-2, 1.0, 100.0}) {
      SCOPED_TRACE(testing::Message() << "fit_bias " << fit_bias << " lambda " << lambda);
      auto want = (*eigen)->SolveWeights(lambda);
      auto got = (*cholesky)->SolveWeights(lambda);
      ASSERT_TRUE(want.ok() && got.ok()) << got.status();
      EXPECT_LT(RelativeError(got->weights, want->weights), 1e-6);
      if (fit_bias) {
        EXPECT_LT(RelativeError(got->bias, want->bias), 1e-6);
      }
      EXPECT_EQ(got->lambda, lambda);
    }
    EXPECT_EQ((*cholesky)->SolveWeights(0).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

// Shards accumulated apart and merged give the single run's sums, so the new
// solver's weights equal the single run's up to summation order.
TEST(RidgeTest, CholeskyOnMergedShardsEqualsOneRun) {
  const Problem p = MakeProblem(22, 400, 25, 2, 0.3);
  auto one = GramAccumulator::Create(25, 2);
  auto first = GramAccumulator::Create(25, 2);
  auto second = GramAccumulator::Create(25, 2);
  ASSERT_TRUE(one.ok() && first.ok() && second.ok());
  ASSERT_TRUE(one->Add(400, p.phi.data(), p.y.data()).ok());
  ASSERT_TRUE(first->Add(150, p.phi.data(), p.y.data()).ok());
  ASSERT_TRUE(second->Add(250, p.phi.row(150), p.y.row(150)).ok());
  ASSERT_TRUE(first->Merge(*second).ok());
  auto a = MakeGramRidgeSolver(*one, RidgeSolverKind::kCholesky);
  auto b = MakeGramRidgeSolver(*first, RidgeSolverKind::kCholesky);
  ASSERT_TRUE(a.ok() && b.ok());
  auto wa = (*a)->SolveWeights(1e-3);
  auto wb = (*b)->SolveWeights(1e-3);
  ASSERT_TRUE(wa.ok() && wb.ok());
  EXPECT_LT(RelativeError(wb->weights, wa->weights), 1e-10);
  // kAuto picks the eigendecomposition at this size.
  auto chosen = MakeGramRidgeSolver(*one, RidgeSolverKind::kAuto);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ((*chosen)->eigenvalues().size(), 25);
}

TEST(RidgeTest, BiasIsNotRegularised) {
  // With a huge λ the weights vanish but the bias still fits the mean target.
  const Problem p = MakeProblem(12, 100, 8, 2, 0.1);
  auto solver = MakeRidgeSolver(p.phi, p.y);
  ASSERT_TRUE(solver.ok());
  auto w = (*solver)->SolveWeights(1e9);
  ASSERT_TRUE(w.ok());
  EXPECT_LT(w->weights.norm(), 1e-6);
  const Eigen::RowVectorXd y_mean = ToDouble(p.y).colwise().mean();
  EXPECT_LT((w->bias - y_mean).norm(), 1e-6);
}

TEST(RidgeTest, DualEqualsPrimalWhenNIsSmallerThanD) {
  const Problem p = MakeProblem(13, 40, 100, 2, 0.3);
  auto dual = MakeDualRidgeSolver(p.phi, p.y);
  auto sums = GramAccumulator::Create(100, 2);
  ASSERT_TRUE(sums.ok());
  ASSERT_TRUE(sums->Add(40, p.phi.data(), p.y.data()).ok());
  auto primal = MakePrimalRidgeSolver(*sums);
  ASSERT_TRUE(dual.ok() && primal.ok());
  for (double lambda : {1e-3, 0.1, 10.0}) {
    auto wd = (*dual)->SolveWeights(lambda);
    auto wp = (*primal)->SolveWeights(lambda);
    ASSERT_TRUE(wd.ok() && wp.ok());
    SCOPED_TRACE(lambda);
    EXPECT_LT(RelativeError(PredictDouble(*wd, p.test_phi), PredictDouble(*wp, p.test_phi)), 1e-8);
    EXPECT_LT(RelativeError(wd->weights, wp->weights), 1e-8);
  }
}

TEST(RidgeTest, DualEqualsPrimalWhenNIsLargerThanD) {
  const Problem p = MakeProblem(14, 150, 60, 3, 0.3);
  for (bool fit_bias : {false, true}) {
    auto dual = MakeDualRidgeSolver(p.phi, p.y, Options(fit_bias));
    auto primal = MakeRidgeSolver(p.phi, p.y, Options(fit_bias));
    ASSERT_TRUE(dual.ok() && primal.ok());
    EXPECT_EQ((*dual)->eigenvalues().size(), 150);
    EXPECT_EQ((*primal)->eigenvalues().size(), 60);  // N ≥ D picks the primal
    for (double lambda : {1e-3, 0.1, 10.0}) {
      auto wd = (*dual)->SolveWeights(lambda);
      auto wp = (*primal)->SolveWeights(lambda);
      ASSERT_TRUE(wd.ok() && wp.ok());
      SCOPED_TRACE(testing::Message() << "fit_bias " << fit_bias << " lambda " << lambda);
      EXPECT_LT(RelativeError(PredictDouble(*wd, p.test_phi), PredictDouble(*wp, p.test_phi)),
                1e-8);
    }
  }
}

TEST(RidgeTest, MakeRidgeSolverPicksDualForWideData) {
  const Problem p = MakeProblem(15, 20, 50, 1, 0.1);
  auto solver = MakeRidgeSolver(p.phi, p.y);
  ASSERT_TRUE(solver.ok());
  EXPECT_EQ((*solver)->eigenvalues().size(), 20);
  EXPECT_EQ((*solver)->feature_dim(), 50);
  EXPECT_EQ((*solver)->target_dim(), 1);
  EXPECT_EQ((*solver)->num_examples(), 20);
  const Eigen::VectorXd& e = (*solver)->eigenvalues();
  for (int64_t i = 0; i < e.size(); ++i) {
    EXPECT_GE(e[i], 0.0);
    if (i > 0) {
      EXPECT_LE(e[i - 1], e[i]);
    }
  }
}

TEST(RidgeTest, SolveRoundsTheDoubleSolutionToFloat) {
  const Problem p = MakeProblem(16, 60, 10, 2, 0.1);
  auto solver = MakeRidgeSolver(p.phi, p.y);
  ASSERT_TRUE(solver.ok());
  auto weights = (*solver)->SolveWeights(0.5);
  auto model = (*solver)->Solve(0.5);
  ASSERT_TRUE(weights.ok() && model.ok());
  EXPECT_EQ(model->weights.rows(), 10);
  EXPECT_EQ(model->weights.cols(), 2);
  EXPECT_EQ(model->bias.rows(), 1);
  EXPECT_EQ(model->lambda, 0.5);
  EXPECT_TRUE(model->weights.map().isApprox(weights->weights.cast<float>()));
  EXPECT_TRUE(model->bias.map().isApprox(weights->bias.cast<float>()));
}

TEST(RidgeTest, OneVsAllRecoversALinearlySeparableProblem) {
  // Three well-separated Gaussian blobs in 6 dimensions.
  Rng rng(17);
  const int64_t per_class = 60;
  const int32_t classes = 3;
  Eigen::MatrixXd centres = 4.0 * ToDouble(RandomNormal(rng, classes, 6));
  auto sample = [&](int64_t n, FloatMatrix& x, std::vector<int32_t>& labels) {
    x = FloatMatrix::Zeros(n * classes, 6);
    labels.clear();
    for (int64_t i = 0; i < n * classes; ++i) {
      const int32_t c = static_cast<int32_t>(i % classes);
      labels.push_back(c);
      for (int64_t j = 0; j < 6; ++j) {
        x.mutable_row(i)[j] = static_cast<float>(centres(c, j) + 0.3 * rng.Normal());
      }
    }
  };
  FloatMatrix train, test;
  std::vector<int32_t> train_labels, test_labels;
  sample(per_class, train, train_labels);
  sample(40, test, test_labels);
  auto y = OneVsAllTargets(train_labels, classes);
  ASSERT_TRUE(y.ok());
  auto solver = MakeRidgeSolver(train, *y);
  ASSERT_TRUE(solver.ok());
  auto model = (*solver)->Solve(1e-3);
  ASSERT_TRUE(model.ok());
  auto scores = ApplyLinearModel(*model, test);
  ASSERT_TRUE(scores.ok());
  EXPECT_EQ(ArgmaxRows(*scores), test_labels);
}

TEST(RidgeTest, RejectsBadArguments) {
  const Problem p = MakeProblem(18, 30, 5, 1, 0.1);
  auto solver = MakeRidgeSolver(p.phi, p.y);
  ASSERT_TRUE(solver.ok());
  for (double lambda : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ((*solver)->SolveWeights(lambda).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ((*solver)->Solve(lambda).status().code(), absl::StatusCode::kInvalidArgument);
  }
  auto empty = GramAccumulator::Create(5, 1);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(MakePrimalRidgeSolver(*empty).status().code(), absl::StatusCode::kFailedPrecondition);
  const FloatMatrix short_y = FloatMatrix::Zeros(29, 1);
  EXPECT_EQ(MakeDualRidgeSolver(p.phi, short_y).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeRidgeSolver(p.phi, short_y).status().code(), absl::StatusCode::kInvalidArgument);
  FloatMatrix bad = FloatMatrix::Zeros(30, 5);
  bad.mutable_row(4)[1] = std::numeric_limits<float>::infinity();
  const absl::Status inf = MakeRidgeSolver(bad, p.y).status();
  EXPECT_EQ(inf.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(inf.message().find("phi[4, 1]"), std::string::npos) << inf.message();
}

}  // namespace
}  // namespace invariant
