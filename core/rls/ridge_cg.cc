#include "core/rls/ridge_cg.h"

#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "Eigen/Cholesky"
#include "Eigen/Eigenvalues"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/rls/rls_internal.h"

namespace invariant {
namespace {

// A = Φcᵀ Φc / N applied to a D × k block.
class CovarianceOperator {
 public:
  virtual ~CovarianceOperator() = default;
  virtual int64_t dim() const = 0;
  // out = A v (out is resized to D × k).
  virtual void Apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& out) const = 0;
};

// From the centred Gram (lower triangle), one dsymm per product.
class GramOperator final : public CovarianceOperator {
 public:
  explicit GramOperator(Eigen::MatrixXd covariance) : covariance_(std::move(covariance)) {}
  int64_t dim() const override { return covariance_.rows(); }
  void Apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& out) const override {
    out.resize(dim(), v.cols());
    rls_internal::SymmetricMultiply(dim(), v.cols(), 1.0, covariance_.data(), v.data(), 0.0,
                                    out.data());
  }

 private:
  Eigen::MatrixXd covariance_;
};

// From centred row blocks: Σ_b Φc_bᵀ (Φc_b v) / N, two dgemm per block.
class RowsOperator final : public CovarianceOperator {
 public:
  RowsOperator(std::vector<Eigen::MatrixXd> blocks, int64_t n, int64_t dim)
      : blocks_(std::move(blocks)), inv_n_(1.0 / static_cast<double>(n)), dim_(dim) {}
  int64_t dim() const override { return dim_; }
  void Apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& out) const override {
    out.setZero(dim_, v.cols());
    Eigen::MatrixXd z;
    for (const Eigen::MatrixXd& b : blocks_) {
      z.resize(b.rows(), v.cols());
      rls_internal::GemmNN(b.rows(), v.cols(), dim_, 1.0, b.data(), b.rows(), v.data(), dim_, 0.0,
                           z.data(), b.rows());
      rls_internal::GemmTN(dim_, v.cols(), b.rows(), inv_n_, b.data(), b.rows(), z.data(), b.rows(),
                           1.0, out.data(), dim_);
    }
  }

 private:
  std::vector<Eigen::MatrixXd> blocks_;  // Φc_b, N_b × D, column-major
  double inv_n_;
  int64_t dim_;
};

// Orthonormalises the columns of a (D × ℓ, D ≥ ℓ, full column rank) by two
// passes of Cholesky QR (a = q r, r from chol(aᵀa)); false if a pass fails.
bool Orthonormalise(Eigen::MatrixXd& a) {
  for (int pass = 0; pass < 2; ++pass) {
    Eigen::MatrixXd g(a.cols(), a.cols());
    rls_internal::GemmTN(a.cols(), a.cols(), a.rows(), 1.0, a.data(), a.rows(), a.data(), a.rows(),
                         0.0, g.data(), a.cols());
    Eigen::LLT<Eigen::MatrixXd> llt(g);
    if (llt.info() != Eigen::Success) return false;
    // a ← a · L⁻ᵀ, i.e. solve L · Xᵀ = aᵀ.
    a = llt.matrixL().solve(a.transpose()).transpose();
  }
  return true;
}

// The randomized Nyström preconditioner (ridge_cg.h). Empty (u has no
// columns) when ℓ = 0 or the sketch is degenerate: then P⁻¹ = I.
struct NystromPreconditioner {
  Eigen::MatrixXd u;       // D × ℓ, orthonormal
  Eigen::VectorXd values;  // Λ̂, ℓ
  double smallest = 0;     // λ̂_ℓ

  // z = P⁻¹ r for this λ.
  void Apply(double lambda, const Eigen::MatrixXd& r, Eigen::MatrixXd& z) const {
    z = r;
    if (u.cols() == 0) return;
    Eigen::MatrixXd p(u.cols(), r.cols());
    rls_internal::GemmTN(u.cols(), r.cols(), u.rows(), 1.0, u.data(), u.rows(), r.data(), r.rows(),
                         0.0, p.data(), u.cols());
    const Eigen::VectorXd scale = ((smallest + lambda) / (values.array() + lambda) - 1.0).matrix();
    p = scale.asDiagonal() * p;
    rls_internal::GemmNN(u.rows(), r.cols(), u.cols(), 1.0, u.data(), u.rows(), p.data(), u.cols(),
                         1.0, z.data(), z.rows());
  }
};

NystromPreconditioner BuildNystrom(const CovarianceOperator& a, int64_t rank, uint64_t seed) {
  NystromPreconditioner pre;
  const int64_t d = a.dim();
  const int64_t l = std::min(rank, d);
  if (l < 1) return pre;
  Rng rng(seed);
  Eigen::MatrixXd omega(d, l);
  for (int64_t j = 0; j < l; ++j) {
    for (int64_t i = 0; i < d; ++i) omega(i, j) = rng.Normal();
  }
  if (!Orthonormalise(omega)) return pre;
  Eigen::MatrixXd y;
  a.Apply(omega, y);
  // The shift ν keeps Ωᵀ Y numerically positive definite (A may be singular).
  const double nu =
      std::sqrt(static_cast<double>(d)) * std::numeric_limits<double>::epsilon() * y.norm();
  if (!(nu > 0)) return pre;  // A = 0: nothing to precondition
  y += nu * omega;
  Eigen::MatrixXd m(l, l);
  rls_internal::GemmTN(l, l, d, 1.0, omega.data(), d, y.data(), d, 0.0, m.data(), l);
  m = 0.5 * (m + m.transpose()).eval();
  Eigen::LLT<Eigen::MatrixXd> llt(m);
  if (llt.info() != Eigen::Success) return pre;
  const Eigen::MatrixXd b = llt.matrixL().solve(y.transpose()).transpose();  // Y L⁻ᵀ, D × ℓ
  // B = U Σ Vᵀ through the ℓ × ℓ eigendecomposition of Bᵀ B = V Σ² Vᵀ.
  Eigen::MatrixXd btb(l, l);
  rls_internal::GemmTN(l, l, d, 1.0, b.data(), d, b.data(), d, 0.0, btb.data(), l);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(btb);
  if (eig.info() != Eigen::Success) return pre;
  const Eigen::VectorXd sigma2 = eig.eigenvalues().cwiseMax(0.0);
  const double floor = sigma2.maxCoeff() * 1e-14;
  std::vector<int64_t> kept;
  for (int64_t i = l - 1; i >= 0; --i) {
    if (sigma2(i) > floor) kept.push_back(i);  // descending
  }
  if (kept.empty()) return pre;
  Eigen::MatrixXd v(l, static_cast<int64_t>(kept.size()));
  pre.values.resize(static_cast<int64_t>(kept.size()));
  for (size_t k = 0; k < kept.size(); ++k) {
    const int64_t i = kept[k];
    v.col(static_cast<int64_t>(k)) = eig.eigenvectors().col(i) / std::sqrt(sigma2(i));
    pre.values(static_cast<int64_t>(k)) = std::max(0.0, sigma2(i) - nu);
  }
  pre.u.resize(d, v.cols());
  rls_internal::GemmNN(d, v.cols(), l, 1.0, b.data(), d, v.data(), l, 0.0, pre.u.data(), d);
  pre.smallest = pre.values(pre.values.size() - 1);
  return pre;
}

absl::Status CheckOptions(const ConjugateGradientOptions& cg) {
  if (!(cg.tolerance > 0 && cg.tolerance <= cg.selection_tolerance && cg.selection_tolerance < 1) ||
      cg.max_iterations < 1 || cg.preconditioner_rank < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("conjugate gradient: expected 0 < tolerance <= selection_tolerance < 1, "
                     "max_iterations >= 1 and preconditioner_rank >= 0, got ",
                     cg.tolerance, ", ", cg.selection_tolerance, ", ", cg.max_iterations, ", ",
                     cg.preconditioner_rank));
  }
  return absl::OkStatus();
}

class ConjugateGradientRidgeSolver final : public RidgeSolver {
 public:
  ConjugateGradientRidgeSolver(std::unique_ptr<CovarianceOperator> a, int64_t n,
                               Eigen::MatrixXd cross, Eigen::VectorXd mean_phi,
                               Eigen::RowVectorXd mean_y, const ConjugateGradientOptions& cg)
      : a_(std::move(a)),
        n_(n),
        cross_(std::move(cross)),
        mean_phi_(std::move(mean_phi)),
        mean_y_(std::move(mean_y)),
        cg_(cg),
        pre_(BuildNystrom(*a_, cg.preconditioner_rank, cg.seed)) {}

  int64_t feature_dim() const override { return a_->dim(); }
  int64_t target_dim() const override { return cross_.cols(); }
  int64_t num_examples() const override { return n_; }
  const Eigen::VectorXd& eigenvalues() const override { return no_eigenvalues_; }

  absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const override {
    return SolveTo(lambda, cg_.selection_tolerance);
  }
  absl::StatusOr<RidgeWeights> FinalWeights(double lambda) const override {
    return SolveTo(lambda, cg_.tolerance);
  }

 private:
  // (A + λI) v.
  void Shifted(double lambda, const Eigen::MatrixXd& v, Eigen::MatrixXd& out) const {
    a_->Apply(v, out);
    out += lambda * v;
  }

  // Solves λ to relative residual `tol`: a cached solve at least as tight
  // is returned as is; otherwise CG starts from the cached solve of λ, or
  // else of the nearest λ on a log scale.
  absl::StatusOr<RidgeWeights> SolveTo(double lambda, double tol) const {
    RETURN_IF_ERROR(rls_internal::CheckLambda(lambda));
    Eigen::MatrixXd x = Eigen::MatrixXd::Zero(feature_dim(), target_dim());
    {
      absl::MutexLock lock(&mu_);
      auto same = solved_.find(lambda);
      if (same != solved_.end() && same->second.tolerance <= tol) return same->second.weights;
      double best = std::numeric_limits<double>::infinity();
      for (const auto& [l, entry] : solved_) {
        const double gap = std::abs(std::log(l / lambda));
        if (gap < best) {
          best = gap;
          x = entry.weights.weights;
        }
      }
    }
    RidgeWeights out = Run(lambda, tol, std::move(x));
    out.bias = mean_y_ - mean_phi_.transpose() * out.weights;
    out.lambda = lambda;
    absl::MutexLock lock(&mu_);
    solved_[lambda] = Solved{out, tol};
    return out;
  }

  // Block PCG from x: T independent recurrences sharing each product.
  RidgeWeights Run(double lambda, double tol, Eigen::MatrixXd x) const {
    const int64_t t = target_dim();
    const Eigen::RowVectorXd target = cross_.colwise().norm() * tol;
    Eigen::MatrixXd r, q, z;
    Shifted(lambda, x, q);
    r = cross_ - q;
    pre_.Apply(lambda, r, z);
    Eigen::MatrixXd p = z;
    Eigen::RowVectorXd rz = r.cwiseProduct(z).colwise().sum();
    std::vector<bool> active(static_cast<size_t>(t), true);
    int64_t iterations = 0;
    for (; iterations < cg_.max_iterations; ++iterations) {
      const Eigen::RowVectorXd rnorm = r.colwise().norm();
      bool any = false;
      for (int64_t j = 0; j < t; ++j) {
        if (active[static_cast<size_t>(j)] && rnorm(j) <= target(j)) {
          active[static_cast<size_t>(j)] = false;
          p.col(j).setZero();
        }
        any = any || active[static_cast<size_t>(j)];
      }
      if (!any) break;
      Shifted(lambda, p, q);
      const Eigen::RowVectorXd pq = p.cwiseProduct(q).colwise().sum();
      Eigen::RowVectorXd alpha = Eigen::RowVectorXd::Zero(t);
      for (int64_t j = 0; j < t; ++j) {
        if (active[static_cast<size_t>(j)] && pq(j) > 0) alpha(j) = rz(j) / pq(j);
      }
      x += p * alpha.asDiagonal();
      r -= q * alpha.asDiagonal();
      pre_.Apply(lambda, r, z);
      const Eigen::RowVectorXd rz_next = r.cwiseProduct(z).colwise().sum();
      Eigen::RowVectorXd beta = Eigen::RowVectorXd::Zero(t);
      for (int64_t j = 0; j < t; ++j) {
        if (active[static_cast<size_t>(j)] && rz(j) > 0) beta(j) = rz_next(j) / rz(j);
      }
      p = z + p * beta.asDiagonal();
      for (int64_t j = 0; j < t; ++j) {
        if (!active[static_cast<size_t>(j)]) p.col(j).setZero();
      }
      rz = rz_next;
    }
    // The true residual, not the recurrence's.
    Shifted(lambda, x, q);
    const Eigen::RowVectorXd residual = (cross_ - q).colwise().norm();
    const Eigen::RowVectorXd scale = cross_.colwise().norm();
    RidgeWeights out;
    out.iterations = iterations;
    for (int64_t j = 0; j < t; ++j) {
      if (scale(j) > 0) {
        out.relative_residual = std::max(out.relative_residual, residual(j) / scale(j));
      }
    }
    out.converged = out.relative_residual <= 10 * tol;
    out.weights = std::move(x);
    return out;
  }

  std::unique_ptr<CovarianceOperator> a_;
  int64_t n_;
  Eigen::MatrixXd cross_;  // C = Φcᵀ Yc / N, D × T
  Eigen::VectorXd mean_phi_;
  Eigen::RowVectorXd mean_y_;
  ConjugateGradientOptions cg_;
  NystromPreconditioner pre_;
  const Eigen::VectorXd no_eigenvalues_;
  struct Solved {
    RidgeWeights weights;
    double tolerance = 0;  // the relative residual it was solved to
  };
  mutable absl::Mutex mu_;
  mutable std::map<double, Solved> solved_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeConjugateGradientRidgeSolver(
    const GramAccumulator& sums, const RidgeOptions& options, const ConjugateGradientOptions& cg) {
  RETURN_IF_ERROR(CheckOptions(cg));
  return MakeConjugateGradientRidgeSolver(GramAccumulator(sums), options, cg);
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeConjugateGradientRidgeSolver(
    GramAccumulator&& sums, const RidgeOptions& options, const ConjugateGradientOptions& cg) {
  RETURN_IF_ERROR(CheckOptions(cg));
  ASSIGN_OR_RETURN(rls_internal::Moments m,
                   rls_internal::CentredMoments(std::move(sums), options.fit_bias,
                                                "MakeConjugateGradientRidgeSolver"));
  auto a = std::make_unique<GramOperator>(std::move(m.covariance));
  return std::unique_ptr<RidgeSolver>(new ConjugateGradientRidgeSolver(
      std::move(a), m.n, std::move(m.cross), std::move(m.mean_phi), std::move(m.mean_y), cg));
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeRowsConjugateGradientRidgeSolver(
    absl::Span<const FloatMatrix> phi_blocks, absl::Span<const FloatMatrix> y_blocks,
    const RidgeOptions& options, const ConjugateGradientOptions& cg) {
  RETURN_IF_ERROR(CheckOptions(cg));
  ASSIGN_OR_RETURN(
      const rls_internal::RowBlocksShape shape,
      rls_internal::CheckRowBlocks(phi_blocks, y_blocks, "MakeRowsConjugateGradientRidgeSolver"));
  const int64_t n = shape.n, d = shape.d, t = shape.t;
  const double inv_n = 1.0 / static_cast<double>(n);
  Eigen::VectorXd mean_phi = Eigen::VectorXd::Zero(d);
  Eigen::RowVectorXd mean_y = Eigen::RowVectorXd::Zero(t);
  if (options.fit_bias) {
    for (size_t b = 0; b < phi_blocks.size(); ++b) {
      mean_phi += phi_blocks[b].map().cast<double>().colwise().sum().transpose() * inv_n;
      mean_y += y_blocks[b].map().cast<double>().colwise().sum() * inv_n;
    }
  }
  std::vector<Eigen::MatrixXd> centred;
  Eigen::MatrixXd cross = Eigen::MatrixXd::Zero(d, t);
  for (size_t b = 0; b < phi_blocks.size(); ++b) {
    Eigen::MatrixXd phi = phi_blocks[b].map().cast<double>();
    phi.rowwise() -= mean_phi.transpose();
    Eigen::MatrixXd y = y_blocks[b].map().cast<double>();
    y.rowwise() -= mean_y;
    rls_internal::GemmTN(d, t, phi.rows(), inv_n, phi.data(), phi.rows(), y.data(), y.rows(), 1.0,
                         cross.data(), d);
    centred.push_back(std::move(phi));
  }
  auto a = std::make_unique<RowsOperator>(std::move(centred), n, d);
  return std::unique_ptr<RidgeSolver>(new ConjugateGradientRidgeSolver(
      std::move(a), n, std::move(cross), std::move(mean_phi), std::move(mean_y), cg));
}

}  // namespace invariant
