#include "core/spectral/von_mises_krr.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/base/math_constants.h"

extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info);
}

namespace invariant {
namespace {

constexpr int64_t kKernelRowsPerBlock = 512;

Eigen::MatrixXd TrigFeatures(int32_t dim, int64_t n, const float* x) {
  Eigen::MatrixXd t(n, 2 * dim);
  for (int64_t r = 0; r < n; ++r) {
    for (int32_t i = 0; i < dim; ++i) {
      const double a = kPi * static_cast<double>(x[r * dim + i]);
      t(r, i) = std::cos(a);
      t(r, dim + i) = std::sin(a);
    }
  }
  return t;
}

// exp(eta · a bᵀ) for a (m × k) and b (n × k), column-major, via BLAS.
Eigen::MatrixXd KernelBlock(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double eta) {
  Eigen::MatrixXd k(a.rows(), b.rows());
  const int m = static_cast<int>(a.rows());
  const int n = static_cast<int>(b.rows());
  const int inner = static_cast<int>(a.cols());
  const double zero = 0.0;
  dgemm_("N", "T", &m, &n, &inner, &eta, a.data(), &m, b.data(), &n, &zero, k.data(), &m);
  k = k.array().exp().matrix();
  return k;
}

}  // namespace

absl::StatusOr<VonMisesKrr> VonMisesKrr::Fit(int32_t dim, int64_t n, const float* x, const float* y,
                                             double eta, const std::vector<double>& lambdas) {
  if (dim < 1 || n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("von Mises KRR: expected dim >= 1 and n >= 1, got dim ", dim, ", n ", n));
  }
  if (!(eta > 0.0)) {
    return absl::InvalidArgumentError(absl::StrCat("von Mises KRR: eta must be > 0, got ", eta));
  }
  if (lambdas.empty()) {
    return absl::InvalidArgumentError("von Mises KRR: lambdas must list at least one value");
  }
  for (double l : lambdas) {
    if (!(l >= 0.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("von Mises KRR: every lambda must be >= 0, got ", l));
    }
  }
  if (n > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrCat("von Mises KRR: n too large, got ", n));
  }
  VonMisesKrr model;
  model.dim_ = dim;
  model.eta_ = eta;
  model.lambdas_ = lambdas;
  model.train_trig_ = TrigFeatures(dim, n, x);
  const Eigen::MatrixXd kernel = KernelBlock(model.train_trig_, model.train_trig_, eta);
  Eigen::VectorXd yv(n);
  for (int64_t r = 0; r < n; ++r) yv(r) = y[r];
  model.alphas_.resize(n, static_cast<int64_t>(lambdas.size()));
  const int ni = static_cast<int>(n);
  const int one = 1;
  Eigen::MatrixXd factor(n, n);
  for (size_t m = 0; m < lambdas.size(); ++m) {
    factor = kernel;
    factor.diagonal().array() += lambdas[m];
    int info = 0;
    dpotrf_("L", &ni, factor.data(), &ni, &info);
    if (info != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("von Mises KRR: K + lambda·I is not positive definite (lambda ", lambdas[m],
                       ", eta ", eta, ", dpotrf info ", info, ")"));
    }
    Eigen::VectorXd alpha = yv;
    dpotrs_("L", &ni, &one, factor.data(), &ni, alpha.data(), &ni, &info);
    model.alphas_.col(m) = alpha;
  }
  return model;
}

void VonMisesKrr::Predict(int64_t n, const float* x, float* out) const {
  const int64_t models = num_models();
  for (int64_t r0 = 0; r0 < n; r0 += kKernelRowsPerBlock) {
    const int64_t rows = std::min(kKernelRowsPerBlock, n - r0);
    const Eigen::MatrixXd t = TrigFeatures(dim_, rows, x + r0 * dim_);
    const Eigen::MatrixXd k = KernelBlock(t, train_trig_, eta_);
    const Eigen::MatrixXd pred = k * alphas_;  // rows × models
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t m = 0; m < models; ++m) {
        out[(r0 + r) * models + m] = static_cast<float>(pred(r, m));
      }
    }
  }
}

}  // namespace invariant
