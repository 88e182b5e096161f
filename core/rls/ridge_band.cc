#include "core/rls/ridge_band.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/rls_internal.h"

extern "C" {
// LAPACK (Fortran ABI, LP64; trailing sizes are gfortran's hidden
// character-argument lengths).
void dsytrd_sy2sb_(const char* uplo, const int* n, const int* kd, double* a, const int* lda,
                   double* ab, const int* ldab, double* tau, double* work, const int* lwork,
                   int* info, size_t uplo_len);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const double* a, const int* lda, const double* tau, double* c, const int* ldc,
             double* work, const int* lwork, int* info, size_t side_len, size_t trans_len);
void dpbtrf_(const char* uplo, const int* n, const int* kd, double* ab, const int* ldab, int* info,
             size_t uplo_len);
void dpbtrs_(const char* uplo, const int* n, const int* kd, const int* nrhs, const double* ab,
             const int* ldab, double* b, const int* ldb, int* info, size_t uplo_len);
void dsbevd_(const char* jobz, const char* uplo, const int* n, const int* kd, double* ab,
             const int* ldab, double* w, double* z, const int* ldz, double* work, const int* lwork,
             int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
}

namespace invariant {
namespace {

// c (D × T, column-major) ← Q c (trans 'N') or Qᵀ c (trans 'T'), Q being the
// reflectors sy2sb left below the b-th subdiagonal of `reflectors`: reflector
// j has its unit at row j + b, so they are dgeqrf's layout for the
// (D − b) × (D − b) block at (b, 0), acting on rows b.. of c.
absl::Status ApplyQ(char trans, const Eigen::MatrixXd& reflectors, const Eigen::VectorXd& tau,
                    int kd, Eigen::MatrixXd& c) {
  const int d = static_cast<int>(reflectors.rows());
  const int m = d - kd;
  const int t = static_cast<int>(c.cols());
  if (m <= 1 || t == 0) return absl::OkStatus();  // one row: no reflection
  const char side = 'L';
  int info = 0;
  int lwork = -1;
  double query = 0;
  dormqr_(&side, &trans, &m, &t, &m, reflectors.data() + kd, &d, tau.data(), c.data() + kd, &d,
          &query, &lwork, &info, 1, 1);
  if (info != 0) return absl::InternalError(absl::StrCat("dormqr (query): info = ", info));
  lwork = std::max(1, static_cast<int>(query));
  std::vector<double> work(static_cast<size_t>(lwork));
  dormqr_(&side, &trans, &m, &t, &m, reflectors.data() + kd, &d, tau.data(), c.data() + kd, &d,
          work.data(), &lwork, &info, 1, 1);
  if (info != 0) return absl::InternalError(absl::StrCat("dormqr: info = ", info));
  return absl::OkStatus();
}

// B = Z diag(e) Zᵀ of the band, for the λ that B + λI cannot factor.
struct BandEigen {
  Eigen::MatrixXd z;          // D × D
  Eigen::VectorXd values;     // ascending, clamped at 0
  Eigen::MatrixXd projected;  // Zᵀ Qᵀ C, D × T
};

class BandRidgeSolver final : public RidgeSolver {
 public:
  BandRidgeSolver(rls_internal::Moments m, int kd, Eigen::MatrixXd band, Eigen::VectorXd tau,
                  Eigen::MatrixXd rotated)
      : m_(std::move(m)),
        kd_(kd),
        band_(std::move(band)),
        tau_(std::move(tau)),
        rotated_(std::move(rotated)) {}

  int64_t feature_dim() const override { return m_.covariance.rows(); }
  int64_t target_dim() const override { return rotated_.cols(); }
  int64_t num_examples() const override { return m_.n; }
  const Eigen::VectorXd& eigenvalues() const override { return no_eigenvalues_; }

  absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const override {
    RETURN_IF_ERROR(rls_internal::CheckLambda(lambda));
    const int d = static_cast<int>(band_.cols());
    const int ldab = static_cast<int>(band_.rows());
    const int t = static_cast<int>(rotated_.cols());
    const char uplo = 'L';
    Eigen::MatrixXd factor = band_;
    factor.row(0).array() += lambda;  // 'L' band storage: row 0 is the diagonal
    int info = 0;
    dpbtrf_(&uplo, &d, &kd_, factor.data(), &ldab, &info, 1);
    if (info < 0) return absl::InternalError(absl::StrCat("dpbtrf: info = ", info));
    RidgeWeights out;
    if (info > 0) {
      // Not numerically positive definite: the band's eigendecomposition.
      std::call_once(fallback_once_, [this] { fallback_ = BuildFallback(); });
      if (!fallback_.ok()) return fallback_.status();
      const BandEigen& e = *fallback_;
      const Eigen::VectorXd shrink = (e.values.array() + lambda).inverse().matrix();
      out.weights = e.z * (shrink.asDiagonal() * e.projected);
    } else {
      out.weights = rotated_;
      dpbtrs_(&uplo, &d, &kd_, &t, factor.data(), &ldab, out.weights.data(), &d, &info, 1);
      if (info != 0) return absl::InternalError(absl::StrCat("dpbtrs: info = ", info));
    }
    RETURN_IF_ERROR(ApplyQ('N', m_.covariance, tau_, kd_, out.weights));
    out.bias = m_.mean_y - m_.mean_phi.transpose() * out.weights;
    out.lambda = lambda;
    return out;
  }

 private:
  absl::StatusOr<BandEigen> BuildFallback() const {
    const int d = static_cast<int>(band_.cols());
    const int ldab = static_cast<int>(band_.rows());
    Eigen::MatrixXd ab = band_;
    BandEigen e;
    e.z.resize(d, d);
    e.values.resize(d);
    const char jobz = 'V';
    const char uplo = 'L';
    int info = 0;
    int lwork = -1;
    int liwork = -1;
    double work_query = 0;
    int iwork_query = 0;
    dsbevd_(&jobz, &uplo, &d, &kd_, ab.data(), &ldab, e.values.data(), e.z.data(), &d, &work_query,
            &lwork, &iwork_query, &liwork, &info, 1, 1);
    if (info != 0) return absl::InternalError(absl::StrCat("dsbevd (query): info = ", info));
    lwork = std::max(1, static_cast<int>(work_query));
    liwork = std::max(1, iwork_query);
    std::vector<double> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    dsbevd_(&jobz, &uplo, &d, &kd_, ab.data(), &ldab, e.values.data(), e.z.data(), &d, work.data(),
            &lwork, iwork.data(), &liwork, &info, 1, 1);
    if (info != 0) return absl::InternalError(absl::StrCat("dsbevd: info = ", info));
    e.values = e.values.cwiseMax(0.0);
    e.projected = e.z.transpose() * rotated_;
    return e;
  }

  rls_internal::Moments m_;  // covariance: the reflectors below the band
  int kd_;                   // b
  Eigen::MatrixXd band_;     // B, LAPACK 'L' band storage, (b + 1) × D
  Eigen::VectorXd tau_;      // reflector scalars, D − b (at least 1)
  Eigen::MatrixXd rotated_;  // Qᵀ C, D × T
  const Eigen::VectorXd no_eigenvalues_;
  mutable std::once_flag fallback_once_;
  mutable absl::StatusOr<BandEigen> fallback_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeBandRidgeSolver(const GramAccumulator& sums,
                                                                 const RidgeOptions& options,
                                                                 int64_t bandwidth) {
  if (bandwidth < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MakeBandRidgeSolver: expected bandwidth >= 1, got ", bandwidth));
  }
  if (sums.feature_dim() >= std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("MakeBandRidgeSolver: ", sums.feature_dim(),
                                                   " features exceed LAPACK's int range"));
  }
  ASSIGN_OR_RETURN(rls_internal::Moments m,
                   rls_internal::CentredMoments(sums, options.fit_bias, "MakeBandRidgeSolver"));
  const int d = static_cast<int>(m.covariance.rows());
  const int kd = static_cast<int>(std::min<int64_t>(bandwidth, d - 1));
  const int ldab = kd + 1;
  Eigen::MatrixXd band = Eigen::MatrixXd::Zero(ldab, d);
  Eigen::VectorXd tau = Eigen::VectorXd::Zero(std::max(1, d - kd));
  const char uplo = 'L';
  int info = 0;
  int lwork = -1;
  double query = 0;
  dsytrd_sy2sb_(&uplo, &d, &kd, m.covariance.data(), &d, band.data(), &ldab, tau.data(), &query,
                &lwork, &info, 1);
  if (info != 0) return absl::InternalError(absl::StrCat("dsytrd_sy2sb (query): info = ", info));
  lwork = std::max(1, static_cast<int>(query));
  {
    std::vector<double> work(static_cast<size_t>(lwork));
    dsytrd_sy2sb_(&uplo, &d, &kd, m.covariance.data(), &d, band.data(), &ldab, tau.data(),
                  work.data(), &lwork, &info, 1);
  }
  if (info != 0) return absl::InternalError(absl::StrCat("dsytrd_sy2sb: info = ", info));
  Eigen::MatrixXd rotated = m.cross;
  RETURN_IF_ERROR(ApplyQ('T', m.covariance, tau, kd, rotated));
  return std::unique_ptr<RidgeSolver>(
      new BandRidgeSolver(std::move(m), kd, std::move(band), std::move(tau), std::move(rotated)));
}

}  // namespace invariant
