#include "core/rls/ridge.h"

#include <cmath>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/ridge_band.h"
#include "core/rls/ridge_cg.h"
#include "core/rls/rls_internal.h"

namespace invariant {
namespace {

using rls_internal::CheckLambda;

// W = basis · diag(1 / (e + λ)) · projected, the shared core of both solvers.
Eigen::MatrixXd SpectralSolve(const Eigen::MatrixXd& basis, const Eigen::VectorXd& eigenvalues,
                              const Eigen::MatrixXd& projected, double lambda) {
  const Eigen::VectorXd shrink = (eigenvalues.array() + lambda).inverse().matrix();
  return basis * (shrink.asDiagonal() * projected);
}

class PrimalRidgeSolver final : public RidgeSolver {
 public:
  PrimalRidgeSolver(int64_t n, Eigen::MatrixXd eigenvectors, Eigen::VectorXd eigenvalues,
                    Eigen::MatrixXd projected, Eigen::VectorXd mean_phi, Eigen::RowVectorXd mean_y)
      : n_(n),
        eigenvectors_(std::move(eigenvectors)),
        eigenvalues_(std::move(eigenvalues)),
        projected_(std::move(projected)),
        mean_phi_(std::move(mean_phi)),
        mean_y_(std::move(mean_y)) {}

  int64_t feature_dim() const override { return eigenvectors_.rows(); }
  int64_t target_dim() const override { return projected_.cols(); }
  int64_t num_examples() const override { return n_; }
  const Eigen::VectorXd& eigenvalues() const override { return eigenvalues_; }

  absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const override {
    RETURN_IF_ERROR(CheckLambda(lambda));
    RidgeWeights out;
    out.weights = SpectralSolve(eigenvectors_, eigenvalues_, projected_, lambda);
    out.bias = mean_y_ - mean_phi_.transpose() * out.weights;
    out.lambda = lambda;
    return out;
  }

 private:
  int64_t n_;
  Eigen::MatrixXd eigenvectors_;  // V, D × D
  Eigen::VectorXd eigenvalues_;   // e, D
  Eigen::MatrixXd projected_;     // Vᵀ Φcᵀ Yc / N, D × T
  Eigen::VectorXd mean_phi_;      // μ, D (zero without fit_bias)
  Eigen::RowVectorXd mean_y_;     // ȳ, 1 × T (zero without fit_bias)
};

class DualRidgeSolver final : public RidgeSolver {
 public:
  DualRidgeSolver(Eigen::MatrixXd centred_phi, Eigen::MatrixXd eigenvectors,
                  Eigen::VectorXd eigenvalues, Eigen::MatrixXd projected, Eigen::VectorXd mean_phi,
                  Eigen::RowVectorXd mean_y)
      : centred_phi_(std::move(centred_phi)),
        eigenvectors_(std::move(eigenvectors)),
        eigenvalues_(std::move(eigenvalues)),
        projected_(std::move(projected)),
        mean_phi_(std::move(mean_phi)),
        mean_y_(std::move(mean_y)) {}

  int64_t feature_dim() const override { return centred_phi_.cols(); }
  int64_t target_dim() const override { return projected_.cols(); }
  int64_t num_examples() const override { return centred_phi_.rows(); }
  const Eigen::VectorXd& eigenvalues() const override { return eigenvalues_; }

  absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const override {
    RETURN_IF_ERROR(CheckLambda(lambda));
    const Eigen::MatrixXd alpha = SpectralSolve(eigenvectors_, eigenvalues_, projected_, lambda);
    RidgeWeights out;
    out.weights.noalias() = centred_phi_.transpose() * alpha;
    out.bias = mean_y_ - mean_phi_.transpose() * out.weights;
    out.lambda = lambda;
    return out;
  }

 private:
  Eigen::MatrixXd centred_phi_;   // Φc, N × D
  Eigen::MatrixXd eigenvectors_;  // U, N × N
  Eigen::VectorXd eigenvalues_;   // e, N
  Eigen::MatrixXd projected_;     // Uᵀ Yc / N, N × T
  Eigen::VectorXd mean_phi_;
  Eigen::RowVectorXd mean_y_;
};

using rls_internal::Moments;

absl::StatusOr<std::unique_ptr<RidgeSolver>> PrimalFromMoments(Moments m);

// One Cholesky factorisation of Φcᵀ Φc / N + λ I per λ (LAPACK dpotrf, all
// threads). Where it fails (λ below the Gram's rounding level, so the matrix
// is not numerically positive definite), that λ is solved by the
// eigendecomposition path, built once on first need.
class CholeskyRidgeSolver final : public RidgeSolver {
 public:
  explicit CholeskyRidgeSolver(Moments m) : m_(std::move(m)) {}

  int64_t feature_dim() const override { return m_.covariance.rows(); }
  int64_t target_dim() const override { return m_.cross.cols(); }
  int64_t num_examples() const override { return m_.n; }
  const Eigen::VectorXd& eigenvalues() const override { return no_eigenvalues_; }

  absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const override {
    RETURN_IF_ERROR(CheckLambda(lambda));
    Eigen::MatrixXd factor = m_.covariance;
    factor.diagonal().array() += lambda;
    RidgeWeights out;
    out.weights = m_.cross;
    absl::Status solved = rls_internal::CholeskySolve(factor, out.weights);
    if (absl::IsFailedPrecondition(solved)) {
      std::call_once(fallback_once_, [this] { fallback_ = PrimalFromMoments(m_); });
      if (!fallback_.ok()) return fallback_.status();
      return (*fallback_)->SolveWeights(lambda);
    }
    RETURN_IF_ERROR(solved);
    out.bias = m_.mean_y - m_.mean_phi.transpose() * out.weights;
    out.lambda = lambda;
    return out;
  }

 private:
  Moments m_;
  const Eigen::VectorXd no_eigenvalues_;
  mutable std::once_flag fallback_once_;
  mutable absl::StatusOr<std::unique_ptr<RidgeSolver>> fallback_;
};

absl::Status CheckRows(const FloatMatrix& phi, const FloatMatrix& y) {
  if (phi.rows() < 1 || phi.cols() < 1 || y.cols() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ridge: expected phi N x D and y N x T with N, D, T >= 1, got phi ",
                     phi.rows(), " x ", phi.cols(), " and y ", y.rows(), " x ", y.cols()));
  }
  if (phi.rows() != y.rows()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ridge: expected y with ", phi.rows(), " rows (as phi), got ", y.rows()));
  }
  RETURN_IF_ERROR(rls_internal::CheckFinite("ridge", "phi", phi.rows(), phi.cols(), phi.data()));
  RETURN_IF_ERROR(rls_internal::CheckFinite("ridge", "y", y.rows(), y.cols(), y.data()));
  return absl::OkStatus();
}

}  // namespace

LinearModel ToLinearModel(const RidgeWeights& solution) {
  LinearModel model;
  model.weights = FloatMatrix::FromEigen(solution.weights);
  model.bias = FloatMatrix::FromEigen(solution.bias);
  model.lambda = solution.lambda;
  return model;
}

absl::StatusOr<LinearModel> RidgeSolver::Solve(double lambda) const {
  ASSIGN_OR_RETURN(RidgeWeights weights, SolveWeights(lambda));
  return ToLinearModel(weights);
}

absl::StatusOr<LinearModel> RidgeSolver::SolveFinal(double lambda) const {
  ASSIGN_OR_RETURN(RidgeWeights weights, FinalWeights(lambda));
  return ToLinearModel(weights);
}

namespace {

absl::StatusOr<std::unique_ptr<RidgeSolver>> PrimalFromMoments(Moments m) {
  Eigen::VectorXd eigenvalues;
  RETURN_IF_ERROR(rls_internal::SymmetricEigen(m.covariance, eigenvalues));
  eigenvalues = eigenvalues.cwiseMax(0.0);
  Eigen::MatrixXd projected = m.covariance.transpose() * m.cross;
  return std::unique_ptr<RidgeSolver>(
      new PrimalRidgeSolver(m.n, std::move(m.covariance), std::move(eigenvalues),
                            std::move(projected), std::move(m.mean_phi), std::move(m.mean_y)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakePrimalRidgeSolver(const GramAccumulator& sums,
                                                                   const RidgeOptions& options) {
  return MakePrimalRidgeSolver(GramAccumulator(sums), options);
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakePrimalRidgeSolver(GramAccumulator&& sums,
                                                                   const RidgeOptions& options) {
  ASSIGN_OR_RETURN(Moments m, rls_internal::CentredMoments(std::move(sums), options.fit_bias,
                                                           "MakePrimalRidgeSolver"));
  return PrimalFromMoments(std::move(m));
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeCholeskyRidgeSolver(const GramAccumulator& sums,
                                                                     const RidgeOptions& options) {
  return MakeCholeskyRidgeSolver(GramAccumulator(sums), options);
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeCholeskyRidgeSolver(GramAccumulator&& sums,
                                                                     const RidgeOptions& options) {
  ASSIGN_OR_RETURN(Moments m, rls_internal::CentredMoments(std::move(sums), options.fit_bias,
                                                           "MakeCholeskyRidgeSolver"));
  return std::unique_ptr<RidgeSolver>(new CholeskyRidgeSolver(std::move(m)));
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeGramRidgeSolver(const GramAccumulator& sums,
                                                                 RidgeSolverKind kind,
                                                                 const RidgeOptions& options) {
  if (kind == RidgeSolverKind::kAuto) {
    kind = sums.feature_dim() > kCholeskyAboveFeatures ? RidgeSolverKind::kCholesky
                                                       : RidgeSolverKind::kEigen;
  }
  switch (kind) {
    case RidgeSolverKind::kCholesky:
      return MakeCholeskyRidgeSolver(sums, options);
    case RidgeSolverKind::kConjugateGradient:
      return MakeConjugateGradientRidgeSolver(sums, options);
    case RidgeSolverKind::kBand:
      return MakeBandRidgeSolver(sums, options);
    default:
      return MakePrimalRidgeSolver(sums, options);
  }
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeDualRidgeSolver(const FloatMatrix& phi,
                                                                 const FloatMatrix& y,
                                                                 const RidgeOptions& options) {
  RETURN_IF_ERROR(CheckRows(phi, y));
  const int64_t n = phi.rows();
  const double inv_n = 1.0 / static_cast<double>(n);
  Eigen::MatrixXd centred_phi = phi.map().cast<double>();
  Eigen::MatrixXd centred_y = y.map().cast<double>();
  Eigen::VectorXd mean_phi = Eigen::VectorXd::Zero(phi.cols());
  Eigen::RowVectorXd mean_y = Eigen::RowVectorXd::Zero(y.cols());
  if (options.fit_bias) {
    mean_phi = centred_phi.colwise().mean().transpose();
    mean_y = centred_y.colwise().mean();
    centred_phi.rowwise() -= mean_phi.transpose();
    centred_y.rowwise() -= mean_y;
  }
  // K / N = Φc Φcᵀ / N, lower triangle.
  Eigen::MatrixXd kernel = Eigen::MatrixXd::Zero(n, n);
  rls_internal::SymmetricRankKUpdate(n, centred_phi.cols(), centred_phi.data(), n, kernel.data());
  kernel *= inv_n;
  Eigen::VectorXd eigenvalues;
  RETURN_IF_ERROR(rls_internal::SymmetricEigen(kernel, eigenvalues));
  eigenvalues = eigenvalues.cwiseMax(0.0);
  Eigen::MatrixXd projected = kernel.transpose() * centred_y * inv_n;
  return std::unique_ptr<RidgeSolver>(
      new DualRidgeSolver(std::move(centred_phi), std::move(kernel), std::move(eigenvalues),
                          std::move(projected), std::move(mean_phi), std::move(mean_y)));
}

absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeRidgeSolver(const FloatMatrix& phi,
                                                             const FloatMatrix& y,
                                                             const RidgeOptions& options) {
  RETURN_IF_ERROR(CheckRows(phi, y));
  if (phi.rows() < phi.cols()) return MakeDualRidgeSolver(phi, y, options);
  ASSIGN_OR_RETURN(GramAccumulator sums, GramAccumulator::Create(phi.cols(), y.cols()));
  RETURN_IF_ERROR(sums.Add(phi.rows(), phi.data(), y.data()));
  return MakePrimalRidgeSolver(sums, options);
}

}  // namespace invariant
