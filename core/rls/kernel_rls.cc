#include "core/rls/kernel_rls.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/rls_internal.h"

namespace invariant {

absl::StatusOr<KernelRidgeSolver> KernelRidgeSolver::Create(const DoubleMatrix& kernel,
                                                            const FloatMatrix& y) {
  const int64_t n = kernel.rows();
  if (n < 1 || kernel.cols() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("KernelRidgeSolver: expected a square N x N kernel with N >= 1, got ",
                     kernel.rows(), " x ", kernel.cols()));
  }
  if (y.rows() != n || y.cols() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KernelRidgeSolver: expected y ", n, " x T with T >= 1, got ", y.rows(), " x ", y.cols()));
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      if (!std::isfinite(kernel.row(i)[j])) {
        return absl::InvalidArgumentError(absl::StrCat("KernelRidgeSolver: kernel[", i, ", ", j,
                                                       "] is ", kernel.row(i)[j],
                                                       ", expected a finite value"));
      }
    }
  }
  RETURN_IF_ERROR(
      rls_internal::CheckFinite("KernelRidgeSolver", "y", y.rows(), y.cols(), y.data()));
  const double inv_n = 1.0 / static_cast<double>(n);
  KernelRidgeSolver solver;
  // Column-major copy; dsyevd reads its lower triangle (checked finite above).
  solver.eigenvectors_ = kernel.map() * inv_n;
  RETURN_IF_ERROR(rls_internal::SymmetricEigen(solver.eigenvectors_, solver.eigenvalues_));
  solver.eigenvalues_ = solver.eigenvalues_.cwiseMax(0.0);
  solver.projected_ = solver.eigenvectors_.transpose() * y.map().cast<double>() * inv_n;
  return solver;
}

absl::StatusOr<KernelRidgeModel> KernelRidgeSolver::Solve(double lambda) const {
  if (!(std::isfinite(lambda) && lambda > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("KernelRidgeSolver: expected a finite lambda > 0, got ", lambda));
  }
  const Eigen::VectorXd shrink = (eigenvalues_.array() + lambda).inverse().matrix();
  KernelRidgeModel model;
  model.coefficients = eigenvectors_ * (shrink.asDiagonal() * projected_);
  model.lambda = lambda;
  return model;
}

absl::StatusOr<FloatMatrix> PredictKernelRidge(const KernelRidgeModel& model,
                                               const DoubleMatrix& test_kernel) {
  if (test_kernel.cols() != model.coefficients.rows()) {
    return absl::InvalidArgumentError(
        absl::StrCat("PredictKernelRidge: expected test_kernel with ", model.coefficients.rows(),
                     " columns (training points), got ", test_kernel.cols()));
  }
  const Eigen::MatrixXd scores = test_kernel.map() * model.coefficients;
  return FloatMatrix::FromEigen(scores);
}

}  // namespace invariant
