// rls_internal.h: internal to invariant_rls. Eigendecomposition of a dense
// symmetric matrix through LAPACK dsyevd (OpenBLAS), the BLAS entry points
// the module uses, and input checks shared by its files.
//
// Not part of the module's public API: other modules should not include it.
#ifndef INVARIANT_CORE_RLS_RLS_INTERNAL_H_
#define INVARIANT_CORE_RLS_RLS_INTERNAL_H_

#include <cstdint>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"
#include "core/rls/gram_accumulator.h"

namespace invariant::rls_internal {

// The centred second moments of accumulated sums (ridge.h, "Primal"), shared
// by the Gram-based solvers.
struct Moments {
  int64_t n = 0;
  Eigen::MatrixXd covariance;  // Φcᵀ Φc / N, D × D, lower triangle meaningful
  Eigen::MatrixXd cross;       // Φcᵀ Yc / N, D × T
  Eigen::VectorXd mean_phi;    // μ (zero without fit_bias)
  Eigen::RowVectorXd mean_y;   // ȳ (zero without fit_bias)
};

// Moments of `sums`: with fit_bias, ΦᵀΦ/N − μμᵀ and ΦᵀY/N − μȳ; without it,
// ΦᵀΦ/N and ΦᵀY/N. FAILED_PRECONDITION "<who>: the accumulator holds no rows"
// when N = 0.
absl::StatusOr<Moments> CentredMoments(const GramAccumulator& sums, bool fit_bias, const char* who);
// The same, consuming `sums`: the covariance is ΦᵀΦ's own storage, scaled and
// centred in place (one D × D matrix at the peak instead of two; the const
// overload is this on a copy).
absl::StatusOr<Moments> CentredMoments(GramAccumulator&& sums, bool fit_bias, const char* who);

// On entry `matrix` is n × n and only its lower triangle is read. On success
// `matrix` holds the orthonormal eigenvectors as columns and `values` the
// eigenvalues in ascending order, so matrix_in = V diag(values) Vᵀ.
// Errors: INVALID_ARGUMENT for a non-square matrix or n ≥ 2³¹; INTERNAL when
// LAPACK reports a failure to converge (the message carries LAPACK's info).
absl::Status SymmetricEigen(Eigen::MatrixXd& matrix, Eigen::VectorXd& values);

// Solves matrix · X = rhs for symmetric positive definite `matrix` (n × n,
// lower triangle read) by LAPACK dpotrf + dpotrs (OpenBLAS, all threads). On
// success rhs holds X and matrix its Cholesky factor. FAILED_PRECONDITION
// when the matrix is not numerically positive definite; INVALID_ARGUMENT for
// mismatched shapes.
absl::Status CholeskySolve(Eigen::MatrixXd& matrix, Eigen::MatrixXd& rhs);

// gram (n × n, lower triangle only) += a · aᵀ, where a is column-major
// n × k with leading dimension lda (so a row-major k × n block has lda = n).
void SymmetricRankKUpdate(int64_t n, int64_t k, const double* a, int64_t lda, double* gram);

// c (m × n, column-major, ldc) = alpha · a · b + beta · c, with a
// column-major m × k (lda) and b column-major k × n (ldb).
void GemmNN(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
            const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// c (n × m, column-major) = alpha · s · b + beta · c for symmetric s (n × n,
// column-major, only its lower triangle read) and b column-major n × m.
void SymmetricMultiply(int64_t n, int64_t m, double alpha, const double* s, const double* b,
                       double beta, double* c);

// c (m × n, column-major, ldc = m) = alpha · a · bᵀ + beta · c, with a
// column-major m × k (lda) and b column-major n × k (ldb).
void GemmNT(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
            const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// c (m × n, column-major, ldc) = alpha · aᵀ · b + beta · c, with a
// column-major k × m (lda) and b column-major k × n (ldb).
void GemmTN(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
            const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// OK for a finite λ > 0, else INVALID_ARGUMENT "ridge: expected a finite
// lambda > 0, got <λ>" (every ridge solver's SolveWeights).
absl::Status CheckLambda(double lambda);

// OK when all rows × cols floats at `data` (row-major) are finite, else
// INVALID_ARGUMENT "<context>: <name>[i, j] is <v>, expected a finite value".
absl::Status CheckFinite(const char* context, const char* name, int64_t rows, int64_t cols,
                         const float* data);

// The sizes of row blocks handed to a solver that keeps the rows: phi_b is
// N_b × D and y_b is N_b × T for every block b.
struct RowBlocksShape {
  int64_t n = 0;  // Σ N_b
  int64_t d = 0;
  int64_t t = 0;
};

// Checks the row blocks (as many y blocks as phi blocks, at least one; every
// block N_b × D and N_b × T with D, T ≥ 1; every value finite; N ≥ 1),
// INVALID_ARGUMENT "<who>: ..." naming the block otherwise.
absl::StatusOr<RowBlocksShape> CheckRowBlocks(absl::Span<const FloatMatrix> phi_blocks,
                                              absl::Span<const FloatMatrix> y_blocks,
                                              const char* who);

}  // namespace invariant::rls_internal

#endif  // INVARIANT_CORE_RLS_RLS_INTERNAL_H_
