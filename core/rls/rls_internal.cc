#include "core/rls/rls_internal.h"

#include <cblas.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

extern "C" {
// LAPACK (Fortran ABI, LP64). The trailing lengths are gfortran's hidden
// character-argument lengths.
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info,
             size_t jobz_len, size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info, size_t uplo_len);
}

namespace invariant::rls_internal {

absl::StatusOr<Moments> CentredMoments(const GramAccumulator& sums, bool fit_bias,
                                       const char* who) {
  return CentredMoments(GramAccumulator(sums), fit_bias, who);
}

absl::StatusOr<Moments> CentredMoments(GramAccumulator&& sums, bool fit_bias, const char* who) {
  Moments m;
  m.n = sums.count();
  if (m.n < 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, ": the accumulator holds no rows (count = 0)"));
  }
  const double inv_n = 1.0 / static_cast<double>(m.n);
  m.mean_phi = Eigen::VectorXd::Zero(sums.feature_dim());
  m.mean_y = Eigen::RowVectorXd::Zero(sums.target_dim());
  if (fit_bias) {
    m.mean_phi = sums.phi_sum() * inv_n;
    m.mean_y = sums.y_sum().transpose() * inv_n;
  }
  m.cross = sums.phi_t_y() * inv_n - m.mean_phi * m.mean_y;
  // ΦᵀΦ's own storage, scaled and centred in place; only the lower triangle
  // is read (by dsyevd, dpotrf and dsymm alike).
  m.covariance = std::move(sums).TakePhiTPhiLower();
  m.covariance *= inv_n;
  m.covariance.triangularView<Eigen::Lower>() -= m.mean_phi * m.mean_phi.transpose();
  return m;
}

absl::Status SymmetricEigen(Eigen::MatrixXd& matrix, Eigen::VectorXd& values) {
  if (matrix.rows() != matrix.cols()) {
    return absl::InvalidArgumentError(absl::StrCat("SymmetricEigen: expected a square matrix, got ",
                                                   matrix.rows(), " x ", matrix.cols()));
  }
  if (matrix.rows() >= std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SymmetricEigen: dimension ", matrix.rows(), " exceeds LAPACK's int range"));
  }
  const int n = static_cast<int>(matrix.rows());
  values.resize(n);
  if (n == 0) return absl::OkStatus();
  const char jobz = 'V';
  const char uplo = 'L';
  int info = 0;
  int lwork = -1;
  int liwork = -1;
  double work_query = 0.0;
  int iwork_query = 0;
  dsyevd_(&jobz, &uplo, &n, matrix.data(), &n, values.data(), &work_query, &lwork, &iwork_query,
          &liwork, &info, 1, 1);
  if (info != 0) {
    return absl::InternalError(absl::StrCat("dsyevd workspace query failed, info = ", info));
  }
  lwork = static_cast<int>(work_query) + 1;
  liwork = iwork_query;
  std::vector<double> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  dsyevd_(&jobz, &uplo, &n, matrix.data(), &n, values.data(), work.data(), &lwork, iwork.data(),
          &liwork, &info, 1, 1);
  if (info != 0) {
    return absl::InternalError(
        absl::StrCat("dsyevd failed on a ", n, " x ", n, " matrix, info = ", info));
  }
  return absl::OkStatus();
}

absl::Status CholeskySolve(Eigen::MatrixXd& matrix, Eigen::MatrixXd& rhs) {
  if (matrix.rows() != matrix.cols() || rhs.rows() != matrix.rows()) {
    return absl::InvalidArgumentError(absl::StrCat("CholeskySolve: expected n x n and n x k, got ",
                                                   matrix.rows(), " x ", matrix.cols(), " and ",
                                                   rhs.rows(), " x ", rhs.cols()));
  }
  if (matrix.rows() >= std::numeric_limits<int>::max() ||
      rhs.cols() >= std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError("CholeskySolve: dimensions exceed LAPACK's int range");
  }
  const int n = static_cast<int>(matrix.rows());
  const int k = static_cast<int>(rhs.cols());
  if (n == 0 || k == 0) return absl::OkStatus();
  const char uplo = 'L';
  int info = 0;
  dpotrf_(&uplo, &n, matrix.data(), &n, &info, 1);
  if (info > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CholeskySolve: the matrix is not positive definite (leading minor ", info, ")"));
  }
  if (info < 0) return absl::InternalError(absl::StrCat("dpotrf: info = ", info));
  dpotrs_(&uplo, &n, &k, matrix.data(), &n, rhs.data(), &n, &info, 1);
  if (info != 0) return absl::InternalError(absl::StrCat("dpotrs: info = ", info));
  return absl::OkStatus();
}

void SymmetricRankKUpdate(int64_t n, int64_t k, const double* a, int64_t lda, double* gram) {
  if (n == 0 || k == 0) return;
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0, a, static_cast<blasint>(lda), 1.0, gram,
              static_cast<blasint>(n));
}

void GemmNT(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
            const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void GemmNN(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
            const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void SymmetricMultiply(int64_t n, int64_t m, double alpha, const double* s, const double* b,
                       double beta, double* c) {
  if (n == 0 || m == 0) return;
  cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, static_cast<blasint>(n),
              static_cast<blasint>(m), alpha, s, static_cast<blasint>(n), b,
              static_cast<blasint>(n), beta, c, static_cast<blasint>(n));
}

void GemmTN(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
            const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

absl::Status CheckLambda(double lambda) {
  if (!(std::isfinite(lambda) && lambda > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ridge: expected a finite lambda > 0, got ", lambda));
  }
  return absl::OkStatus();
}

absl::Status CheckFinite(const char* context, const char* name, int64_t rows, int64_t cols,
                         const float* data) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const float v = data[i * cols + j];
      if (!std::isfinite(v)) {
        return absl::InvalidArgumentError(absl::StrCat(context, ": ", name, "[", i, ", ", j,
                                                       "] is ", v, ", expected a finite value"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RowBlocksShape> CheckRowBlocks(absl::Span<const FloatMatrix> phi_blocks,
                                              absl::Span<const FloatMatrix> y_blocks,
                                              const char* who) {
  if (phi_blocks.empty() || phi_blocks.size() != y_blocks.size()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": expected as many y blocks as phi ",
                                                   "blocks (at least one), got ", phi_blocks.size(),
                                                   " and ", y_blocks.size()));
  }
  RowBlocksShape shape;
  shape.d = phi_blocks[0].cols();
  shape.t = y_blocks[0].cols();
  for (size_t b = 0; b < phi_blocks.size(); ++b) {
    const FloatMatrix& phi = phi_blocks[b];
    const FloatMatrix& y = y_blocks[b];
    if (phi.cols() != shape.d || y.cols() != shape.t || phi.rows() != y.rows() || shape.d < 1 ||
        shape.t < 1) {
      return absl::InvalidArgumentError(absl::StrCat(who, ": block ", b, " has phi ", phi.rows(),
                                                     " x ", phi.cols(), " and y ", y.rows(), " x ",
                                                     y.cols(), ", expected N_b x ", shape.d,
                                                     " and N_b x ", shape.t, " with D, T >= 1"));
    }
    const std::string context = absl::StrCat(who, " block ", b);
    RETURN_IF_ERROR(CheckFinite(context.c_str(), "phi", phi.rows(), phi.cols(), phi.data()));
    RETURN_IF_ERROR(CheckFinite(context.c_str(), "y", y.rows(), y.cols(), y.data()));
    shape.n += phi.rows();
  }
  if (shape.n < 1)
    return absl::InvalidArgumentError(absl::StrCat(who, ": the blocks hold no rows"));
  return shape;
}

}  // namespace invariant::rls_internal
