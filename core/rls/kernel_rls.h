// kernel_rls.h: kernel regularised least squares on a precomputed kernel
// matrix (the Haar-integration kernel baseline, docs/math.md §5, Mroueh Fig. 1).
//
// For a training kernel K (N × N, symmetric positive semi-definite) and
// targets Y (N × T), the coefficients are
//   α(λ) = (K + NλI)⁻¹ Y = U diag(1 / (e + λ)) Uᵀ Y / N,   K / N = U diag(e) Uᵀ,
// so one N × N eigendecomposition serves every λ; predictions for M test
// points are K_test α with K_test[i, j] = k(x_test_i, x_train_j) (M × N).
// This is the minimiser of (1/N)‖Y − Kα‖² + λ αᵀKα; there is no separate
// bias (add a constant to the kernel for one). With K = X Xᵀ it equals
// primal ridge on X without fit_bias.
//
// The solver is immutable after creation and thread-safe.
#ifndef INVARIANT_CORE_RLS_KERNEL_RLS_H_
#define INVARIANT_CORE_RLS_KERNEL_RLS_H_

#include <cstdint>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "core/base/tensor.h"

namespace invariant {

struct KernelRidgeModel {
  Eigen::MatrixXd coefficients;  // α, N × T
  double lambda = 0.0;
};

class KernelRidgeSolver {
 public:
  // Reads the lower triangle of `kernel` (N × N). y is N × T.
  // Errors: INVALID_ARGUMENT for a non-square or empty kernel, a row-count
  // mismatch, or non-finite values; INTERNAL if the eigendecomposition fails.
  static absl::StatusOr<KernelRidgeSolver> Create(const DoubleMatrix& kernel, const FloatMatrix& y);

  int64_t num_examples() const { return eigenvectors_.rows(); }
  int64_t target_dim() const { return projected_.cols(); }
  // Eigenvalues of K / N, ascending, clamped at 0.
  const Eigen::VectorXd& eigenvalues() const { return eigenvalues_; }

  // α(λ). Errors: INVALID_ARGUMENT unless λ is finite and > 0.
  absl::StatusOr<KernelRidgeModel> Solve(double lambda) const;

 private:
  KernelRidgeSolver() = default;
  Eigen::MatrixXd eigenvectors_;  // U, N × N
  Eigen::VectorXd eigenvalues_;   // e, N
  Eigen::MatrixXd projected_;     // Uᵀ Y / N, N × T
};

// Scores (M × T) = test_kernel (M × N) · α. Errors: INVALID_ARGUMENT when
// test_kernel does not have N columns.
absl::StatusOr<FloatMatrix> PredictKernelRidge(const KernelRidgeModel& model,
                                               const DoubleMatrix& test_kernel);

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_KERNEL_RLS_H_
