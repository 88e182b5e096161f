#include "core/rls/kernel_rls.h"

#include <limits>

#include "core/rls/ridge.h"
#include "gtest/gtest.h"
#include "tests/unit/rls/test_data.h"

namespace invariant {
namespace {

using rls_test::RandomNormal;
using rls_test::RelativeError;
using rls_test::ToDouble;

DoubleMatrix LinearKernel(const FloatMatrix& a, const FloatMatrix& b) {
  return DoubleMatrix::FromEigen(ToDouble(a) * ToDouble(b).transpose());
}

void ExpectLinearKernelEqualsPrimal(uint64_t seed, int64_t n, int64_t d) {
  Rng rng(seed);
  const FloatMatrix x = RandomNormal(rng, n, d);
  const FloatMatrix y = RandomNormal(rng, n, 2);
  const FloatMatrix test = RandomNormal(rng, 30, d);
  auto kernel_solver = KernelRidgeSolver::Create(LinearKernel(x, x), y);
  ASSERT_TRUE(kernel_solver.ok()) << kernel_solver.status();
  EXPECT_EQ(kernel_solver->num_examples(), n);
  EXPECT_EQ(kernel_solver->target_dim(), 2);
  RidgeOptions no_bias;
  no_bias.fit_bias = false;
  auto sums = GramAccumulator::Create(d, 2);
  ASSERT_TRUE(sums.ok());
  ASSERT_TRUE(sums->Add(n, x.data(), y.data()).ok());
  auto primal = MakePrimalRidgeSolver(*sums, no_bias);
  ASSERT_TRUE(primal.ok());
  const DoubleMatrix test_kernel = LinearKernel(test, x);
  for (double lambda : {1e-3, 0.1, 10.0}) {
    SCOPED_TRACE(lambda);
    auto alpha = kernel_solver->Solve(lambda);
    auto w = (*primal)->SolveWeights(lambda);
    ASSERT_TRUE(alpha.ok() && w.ok());
    EXPECT_EQ(alpha->lambda, lambda);
    // Predictions in double: K_test α against X_test W.
    const Eigen::MatrixXd kernel_scores = test_kernel.map() * alpha->coefficients;
    const Eigen::MatrixXd primal_scores = ToDouble(test) * w->weights;
    EXPECT_LT(RelativeError(kernel_scores, primal_scores), 1e-8);
    // The float predictions round those.
    auto predicted = PredictKernelRidge(*alpha, test_kernel);
    ASSERT_TRUE(predicted.ok());
    EXPECT_LT(RelativeError(predicted->map().cast<double>(), primal_scores), 1e-6);
  }
}

TEST(KernelRlsTest, LinearKernelEqualsPrimalRidgeTallData) {
  ExpectLinearKernelEqualsPrimal(31, 80, 20);
}

TEST(KernelRlsTest, LinearKernelEqualsPrimalRidgeWideData) {
  ExpectLinearKernelEqualsPrimal(32, 30, 50);
}

TEST(KernelRlsTest, EigenvaluesAreThoseOfKernelOverN) {
  DoubleMatrix k = DoubleMatrix::Zeros(2, 2);
  k.mutable_map() << 2.0, 1.0, 1.0, 2.0;  // eigenvalues 1 and 3
  const FloatMatrix y = FloatMatrix::Zeros(2, 1);
  auto solver = KernelRidgeSolver::Create(k, y);
  ASSERT_TRUE(solver.ok());
  EXPECT_NEAR(solver->eigenvalues()[0], 0.5, 1e-15);
  EXPECT_NEAR(solver->eigenvalues()[1], 1.5, 1e-15);
}

TEST(KernelRlsTest, RejectsBadArguments) {
  const FloatMatrix y = FloatMatrix::Zeros(3, 1);
  EXPECT_EQ(KernelRidgeSolver::Create(DoubleMatrix::Zeros(3, 2), y).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KernelRidgeSolver::Create(DoubleMatrix::Zeros(0, 0), FloatMatrix::Zeros(0, 1))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KernelRidgeSolver::Create(DoubleMatrix::Zeros(4, 4), y).status().code(),
            absl::StatusCode::kInvalidArgument);
  DoubleMatrix nan_kernel = DoubleMatrix::Zeros(3, 3);
  nan_kernel.mutable_row(2)[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(KernelRidgeSolver::Create(nan_kernel, y).status().code(),
            absl::StatusCode::kInvalidArgument);

  DoubleMatrix identity = DoubleMatrix::Zeros(3, 3);
  identity.mutable_map().setIdentity();
  auto solver = KernelRidgeSolver::Create(identity, y);
  ASSERT_TRUE(solver.ok());
  EXPECT_EQ(solver->Solve(0.0).status().code(), absl::StatusCode::kInvalidArgument);
  auto model = solver->Solve(1.0);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(PredictKernelRidge(*model, DoubleMatrix::Zeros(5, 2)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace invariant
