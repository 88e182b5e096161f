#include "core/rls/ridge_band.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
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

// B = Z diag(e) Zᵀ of the band, for the shifts that B + σI cannot factor.
struct BandEigen {
  Eigen::MatrixXd z;          // n × n
  Eigen::VectorXd values;     // ascending, clamped at 0
  Eigen::MatrixXd projected;  // Zᵀ Qᵀ R, n × T
};

// The band path of one symmetric n × n matrix S and right-hand side R
// (n × T): S = Q B Qᵀ once, then X(σ) = (S + σI)⁻¹ R = Q (B + σI)⁻¹ Qᵀ R for
// every shift σ > 0. The primal solver takes S = ΦcᵀΦc/N, R = ΦcᵀYc/N; the
// dual S = ΦcΦcᵀ/N, R = Yc/N. Immutable after Reduce; Solve is thread-safe
// (the eigendecomposition fallback is built under std::call_once).
class BandPath {
 public:
  // `s` (lower triangle read) becomes the reflectors' storage.
  static absl::StatusOr<std::unique_ptr<BandPath>> Reduce(Eigen::MatrixXd s, Eigen::MatrixXd rhs,
                                                          int64_t bandwidth) {
    const int n = static_cast<int>(s.rows());
    const int kd = static_cast<int>(std::min<int64_t>(bandwidth, n - 1));
    const int ldab = kd + 1;
    Eigen::MatrixXd band = Eigen::MatrixXd::Zero(ldab, n);
    Eigen::VectorXd tau = Eigen::VectorXd::Zero(std::max(1, n - kd));
    const char uplo = 'L';
    int info = 0;
    int lwork = -1;
    double query = 0;
    dsytrd_sy2sb_(&uplo, &n, &kd, s.data(), &n, band.data(), &ldab, tau.data(), &query, &lwork,
                  &info, 1);
    if (info != 0) return absl::InternalError(absl::StrCat("dsytrd_sy2sb (query): info = ", info));
    lwork = std::max(1, static_cast<int>(query));
    {
      std::vector<double> work(static_cast<size_t>(lwork));
      dsytrd_sy2sb_(&uplo, &n, &kd, s.data(), &n, band.data(), &ldab, tau.data(), work.data(),
                    &lwork, &info, 1);
    }
    if (info != 0) return absl::InternalError(absl::StrCat("dsytrd_sy2sb: info = ", info));
    RETURN_IF_ERROR(ApplyQ('T', s, tau, kd, rhs));
    return std::unique_ptr<BandPath>(
        new BandPath(kd, std::move(s), std::move(band), std::move(tau), std::move(rhs)));
  }

  int64_t size() const { return band_.cols(); }
  int64_t rhs_cols() const { return rotated_.cols(); }

  // X = (S + shift I)⁻¹ R, shift > 0 (checked by the caller).
  absl::StatusOr<Eigen::MatrixXd> Solve(double shift) const {
    const int n = static_cast<int>(band_.cols());
    const int ldab = static_cast<int>(band_.rows());
    const int t = static_cast<int>(rotated_.cols());
    const char uplo = 'L';
    Eigen::MatrixXd factor = band_;
    factor.row(0).array() += shift;  // 'L' band storage: row 0 is the diagonal
    int info = 0;
    dpbtrf_(&uplo, &n, &kd_, factor.data(), &ldab, &info, 1);
    if (info < 0) return absl::InternalError(absl::StrCat("dpbtrf: info = ", info));
    Eigen::MatrixXd x;
    if (info > 0) {
      // Not numerically positive definite: the band's eigendecomposition.
      std::call_once(fallback_once_, [this] { fallback_ = BuildFallback(); });
      if (!fallback_.ok()) return fallback_.status();
      const BandEigen& e = *fallback_;
      const Eigen::VectorXd shrink = (e.values.array() + shift).inverse().matrix();
      x = e.z * (shrink.asDiagonal() * e.projected);
    } else {
      x = rotated_;
      dpbtrs_(&uplo, &n, &kd_, &t, factor.data(), &ldab, x.data(), &n, &info, 1);
      if (info != 0) return absl::InternalError(absl::StrCat("dpbtrs: info = ", info));
    }
    {
      // dormqr passes short reflector blocks to dorm2r, which writes into
      // them (A(i,i) = 1, then restores it): one application at a time.
      absl::MutexLock lock(&apply_mu_);
      RETURN_IF_ERROR(ApplyQ('N', reflectors_, tau_, kd_, x));
    }
    return x;
  }

 private:
  BandPath(int kd, Eigen::MatrixXd reflectors, Eigen::MatrixXd band, Eigen::VectorXd tau,
           Eigen::MatrixXd rotated)
      : kd_(kd),
        reflectors_(std::move(reflectors)),
        band_(std::move(band)),
        tau_(std::move(tau)),
        rotated_(std::move(rotated)) {}

  absl::StatusOr<BandEigen> BuildFallback() const {
    const int n = static_cast<int>(band_.cols());
    const int ldab = static_cast<int>(band_.rows());
    Eigen::MatrixXd ab = band_;
    BandEigen e;
    e.z.resize(n, n);
    e.values.resize(n);
    const char jobz = 'V';
    const char uplo = 'L';
    int info = 0;
    int lwork = -1;
    int liwork = -1;
    double work_query = 0;
    int iwork_query = 0;
    dsbevd_(&jobz, &uplo, &n, &kd_, ab.data(), &ldab, e.values.data(), e.z.data(), &n, &work_query,
            &lwork, &iwork_query, &liwork, &info, 1, 1);
    if (info != 0) return absl::InternalError(absl::StrCat("dsbevd (query): info = ", info));
    // 1 + 5n + 2n² doubles: beyond LAPACK's int for n ≥ 32,768.
    if (work_query >= static_cast<double>(std::numeric_limits<int>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("dsbevd: the eigendecomposition of a band of order ", n,
                       " needs a workspace beyond LAPACK's int range; use a larger lambda"));
    }
    lwork = std::max(1, static_cast<int>(work_query));
    liwork = std::max(1, iwork_query);
    std::vector<double> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    dsbevd_(&jobz, &uplo, &n, &kd_, ab.data(), &ldab, e.values.data(), e.z.data(), &n, work.data(),
            &lwork, iwork.data(), &liwork, &info, 1, 1);
    if (info != 0) return absl::InternalError(absl::StrCat("dsbevd: info = ", info));
    e.values = e.values.cwiseMax(0.0);
    e.projected = e.z.transpose() * rotated_;
    return e;
  }

  int kd_;                        // b
  Eigen::MatrixXd reflectors_;    // Q's reflectors below the band, n × n
  Eigen::MatrixXd band_;          // B, LAPACK 'L' band storage, (b + 1) × n
  Eigen::VectorXd tau_;           // reflector scalars, n − b (at least 1)
  Eigen::MatrixXd rotated_;       // Qᵀ R, n × T
  mutable absl::Mutex apply_mu_;  // serialises ApplyQ over reflectors_
  mutable std::once_flag fallback_once_;
  mutable absl::StatusOr<BandEigen> fallback_;
};

class BandRidgeSolver final : public RidgeSolver {
 public:
  BandRidgeSolver(int64_t n, Eigen::VectorXd mean_phi, Eigen::RowVectorXd mean_y,
                  std::unique_ptr<BandPath> path)
      : n_(n), mean_phi_(std::move(mean_phi)), mean_y_(std::move(mean_y)), path_(std::move(path)) {}

  int64_t feature_dim() const override { return path_->size(); }
  int64_t target_dim() const override { return path_->rhs_cols(); }
  int64_t num_examples() const override { return n_; }
  const Eigen::VectorXd& eigenvalues() const override { return no_eigenvalues_; }

  absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const override {
    RETURN_IF_ERROR(rls_internal::CheckLambda(lambda));
    RidgeWeights out;
    ASSIGN_OR_RETURN(out.weights, path_->Solve(lambda));
    out.bias = mean_y_ - mean_phi_.transpose() * out.weights;
    out.lambda = lambda;
    return out;
  }

 private:
  int64_t n_;
  Eigen::VectorXd mean_phi_;
  Eigen::RowVectorXd mean_y_;
  std::unique_ptr<BandPath> path_;  // S = ΦcᵀΦc/N, R = ΦcᵀYc/N
  const Eigen::VectorXd no_eigenvalues_;
};

// The dual: X(λ) = (K/N + λI)⁻¹ Yc/N = (K + NλI)⁻¹ Yc, W = Φcᵀ X.
class DualBandRidgeSolver final : public RidgeSolver {
 public:
  DualBandRidgeSolver(Eigen::MatrixXd centred_phi, Eigen::VectorXd mean_phi,
                      Eigen::RowVectorXd mean_y, std::unique_ptr<BandPath> path)
      : centred_phi_(std::move(centred_phi)),
        mean_phi_(std::move(mean_phi)),
        mean_y_(std::move(mean_y)),
        path_(std::move(path)) {}

  int64_t feature_dim() const override { return centred_phi_.cols(); }
  int64_t target_dim() const override { return path_->rhs_cols(); }
  int64_t num_examples() const override { return centred_phi_.rows(); }
  const Eigen::VectorXd& eigenvalues() const override { return no_eigenvalues_; }

  absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const override {
    RETURN_IF_ERROR(rls_internal::CheckLambda(lambda));
    ASSIGN_OR_RETURN(const Eigen::MatrixXd x, path_->Solve(lambda));
    const int64_t n = centred_phi_.rows(), d = centred_phi_.cols(), t = x.cols();
    RidgeWeights out;
    out.weights.resize(d, t);
    rls_internal::GemmTN(d, t, n, 1.0, centred_phi_.data(), n, x.data(), n, 0.0, out.weights.data(),
                         d);
    out.bias = mean_y_ - mean_phi_.transpose() * out.weights;
    out.lambda = lambda;
    return out;
  }

 private:
  Eigen::MatrixXd centred_phi_;  // Φc, N × D, column-major
  Eigen::VectorXd mean_phi_;
  Eigen::RowVectorXd mean_y_;
  std::unique_ptr<BandPath> path_;  // S = ΦcΦcᵀ/N, R = Yc/N
  const Eigen::VectorXd no_eigenvalues_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeBandRidgeSolver(const GramAccumulator& sums,
                                                                 const RidgeOptions& options,
                                                                 int64_t bandwidth) {
  return MakeBandRidgeSolver(GramAccumulator(sums), options, bandwidth);
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeBandRidgeSolver(GramAccumulator&& sums,
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
  ASSIGN_OR_RETURN(
      rls_internal::Moments m,
      rls_internal::CentredMoments(std::move(sums), options.fit_bias, "MakeBandRidgeSolver"));
  ASSIGN_OR_RETURN(std::unique_ptr<BandPath> path,
                   BandPath::Reduce(std::move(m.covariance), std::move(m.cross), bandwidth));
  return std::unique_ptr<RidgeSolver>(
      new BandRidgeSolver(m.n, std::move(m.mean_phi), std::move(m.mean_y), std::move(path)));
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeDualBandRidgeSolver(
    absl::Span<const FloatMatrix> phi_blocks, absl::Span<const FloatMatrix> y_blocks,
    const RidgeOptions& options, int64_t bandwidth) {
  constexpr char kWho[] = "MakeDualBandRidgeSolver";
  if (bandwidth < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWho, ": expected bandwidth >= 1, got ", bandwidth));
  }
  ASSIGN_OR_RETURN(const rls_internal::RowBlocksShape shape,
                   rls_internal::CheckRowBlocks(phi_blocks, y_blocks, kWho));
  const int64_t n = shape.n, d = shape.d, t = shape.t;
  if (n >= std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWho, ": ", n, " rows exceed LAPACK's int range"));
  }
  // Φc and Yc, N × D and N × T column-major doubles.
  Eigen::MatrixXd centred_phi(n, d);
  Eigen::MatrixXd centred_y(n, t);
  for (size_t b = 0, row = 0; b < phi_blocks.size(); row += phi_blocks[b].rows(), ++b) {
    const int64_t rows = phi_blocks[b].rows();
    centred_phi.middleRows(static_cast<Eigen::Index>(row), rows) =
        phi_blocks[b].map().cast<double>();
    centred_y.middleRows(static_cast<Eigen::Index>(row), rows) = y_blocks[b].map().cast<double>();
  }
  Eigen::VectorXd mean_phi = Eigen::VectorXd::Zero(d);
  Eigen::RowVectorXd mean_y = Eigen::RowVectorXd::Zero(t);
  if (options.fit_bias) {
    mean_phi = centred_phi.colwise().mean().transpose();
    mean_y = centred_y.colwise().mean();
    centred_phi.rowwise() -= mean_phi.transpose();
    centred_y.rowwise() -= mean_y;
  }
  const double inv_n = 1.0 / static_cast<double>(n);
  // K/N = ΦcΦcᵀ/N, lower triangle (dsyrk: N²D flops).
  Eigen::MatrixXd kernel = Eigen::MatrixXd::Zero(n, n);
  rls_internal::SymmetricRankKUpdate(n, d, centred_phi.data(), n, kernel.data());
  kernel *= inv_n;
  centred_y *= inv_n;
  ASSIGN_OR_RETURN(std::unique_ptr<BandPath> path,
                   BandPath::Reduce(std::move(kernel), std::move(centred_y), bandwidth));
  return std::unique_ptr<RidgeSolver>(new DualBandRidgeSolver(
      std::move(centred_phi), std::move(mean_phi), std::move(mean_y), std::move(path)));
}

}  // namespace invariant
