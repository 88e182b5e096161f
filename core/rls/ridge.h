// ridge.h: ridge regression (regularised least squares, docs/math.md §6) with one
// eigendecomposition serving a whole grid of λ, as GURLS does.
//
// Problem, for features Φ (N × D), targets Y (N × T):
//   min_{W, b} (1/N) ‖Y − Φ W − 1 bᵀ‖²_F + λ ‖W‖²_F,   λ > 0.
// With fit_bias the bias b is not regularised; it is removed by centring:
// with μ = mean row of Φ and ȳ = mean row of Y, Φc = Φ − 1μᵀ, Yc = Y − 1ȳᵀ,
//   W = (Φcᵀ Φc / N + λ I)⁻¹ Φcᵀ Yc / N,   b = ȳ − Wᵀ μ.
// Without fit_bias, μ = ȳ = 0 and b = 0 (the classic GURLS problem).
//
// Primal (from a GramAccumulator, D × D): Φcᵀ Φc / N = V diag(e) Vᵀ once,
//   W(λ) = V diag(1 / (e + λ)) Vᵀ Φcᵀ Yc / N          (O(D² T) per λ).
// Dual (from the rows, N × N; cheaper when N < D): Φc Φcᵀ / N = U diag(e) Uᵀ,
//   W(λ) = Φcᵀ U diag(1 / (e + λ)) Uᵀ Yc / N           (= Φcᵀ (K + NλI)⁻¹ Yc).
// Both give the same W up to rounding. Centring from sums (primal) is
// ΦᵀΦ/N − μμᵀ: it loses digits when |μ| ≫ the feature spread (features
// with means 1e4 times their standard deviation lose ~8 digits); the dual
// centres the rows themselves. Eigenvalues are clamped at 0 (rounding can
// make the smallest slightly negative).
//
// Solvers are immutable after creation and thread-safe.
#ifndef INVARIANT_CORE_RLS_RIDGE_H_
#define INVARIANT_CORE_RLS_RIDGE_H_

#include <cstdint>
#include <memory>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/linear_model.h"

namespace invariant {

struct RidgeOptions {
  // Fit an unregularised bias by centring features and targets.
  bool fit_bias = true;
};

// A double-precision solution, before rounding to the served float model.
struct RidgeWeights {
  Eigen::MatrixXd weights;  // D × T
  Eigen::RowVectorXd bias;  // 1 × T (zero without fit_bias)
  double lambda = 0.0;
  // Iterative solvers (ridge_cg.h) only; direct solvers leave these as is:
  // CG iterations for this λ, the largest relative residual over the target
  // columns, and whether it met the solver's tolerance.
  int64_t iterations = 0;
  double relative_residual = 0.0;
  bool converged = true;
};

// Rounds a double solution to the served LinearModel.
LinearModel ToLinearModel(const RidgeWeights& solution);

class RidgeSolver {
 public:
  virtual ~RidgeSolver() = default;

  virtual int64_t feature_dim() const = 0;   // D
  virtual int64_t target_dim() const = 0;    // T
  virtual int64_t num_examples() const = 0;  // N
  // The eigenvalues e of the centred Gram matrix divided by N (primal: D of
  // them, dual: N), ascending, clamped at 0. W(λ) divides by e + λ, so
  // they set the scale of a sensible λ grid (GurlsLambdaGrid). Empty for the
  // Cholesky solver, which never computes them.
  virtual const Eigen::VectorXd& eigenvalues() const = 0;

  // The exact minimiser for this λ, in double. Errors: INVALID_ARGUMENT when
  // λ is not finite and > 0. An iterative solver may stop these at a looser
  // selection tolerance (enough to score λ on validation rows);
  // FinalWeights gives its full precision.
  virtual absl::StatusOr<RidgeWeights> SolveWeights(double lambda) const = 0;

  // The minimiser to the solver's full precision: what a served model is
  // built from. Direct solvers: SolveWeights.
  virtual absl::StatusOr<RidgeWeights> FinalWeights(double lambda) const {
    return SolveWeights(lambda);
  }

  // SolveWeights rounded to float: the model the server would apply.
  absl::StatusOr<LinearModel> Solve(double lambda) const;
  // FinalWeights rounded to float.
  absl::StatusOr<LinearModel> SolveFinal(double lambda) const;
};

// Primal solver from accumulated sums: one D × D eigendecomposition
// (LAPACK dsyevd, O(D³): seconds for D = 2,000, minutes for D = 10,000).
// Errors: FAILED_PRECONDITION when the accumulator holds no rows; INTERNAL
// if the eigendecomposition fails.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakePrimalRidgeSolver(
    const GramAccumulator& sums, const RidgeOptions& options = {});
// The same, consuming `sums` (GramAccumulator::TakePhiTPhiLower): the Gram's
// own storage becomes the eigenvectors, one D × D matrix fewer at the peak.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakePrimalRidgeSolver(
    GramAccumulator&& sums, const RidgeOptions& options = {});

// Cholesky solver from accumulated sums: keeps the centred D × D Gram and
// factors Φcᵀ Φc / N + λ I per λ (LAPACK dpotrf/dpotrs, O(D³/3) per λ, BLAS-3
// on all threads: 23 s against the eigendecomposition's 62 s at D = 8,000
// for a 9-value grid, with less memory; docs/benchmarks/performance.md). Memory: two D × D doubles
// (the Gram and one factor). A λ so small that the factorisation fails
// (not numerically positive definite) is solved by the eigendecomposition,
// built once on first need, so every λ > 0 gets the exact minimiser.
// Errors: FAILED_PRECONDITION when the accumulator holds no rows.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeCholeskyRidgeSolver(
    const GramAccumulator& sums, const RidgeOptions& options = {});
// The same, consuming `sums`: the Gram's storage is the kept centred Gram, so
// the peak is the two D × D matrices above, not three.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeCholeskyRidgeSolver(
    GramAccumulator&& sums, const RidgeOptions& options = {});

// kConjugateGradient: preconditioned CG on the centred Gram (ridge_cg.h),
// one D × D matrix and no O(D³) factorisation. kBand: one reduction to a
// band matrix for the whole grid, a band solve per λ (ridge_band.h).
enum class RidgeSolverKind { kAuto, kEigen, kCholesky, kConjugateGradient, kBand };

// kAuto: the eigendecomposition (one factorisation for the whole λ grid)
// up to kCholeskyAboveFeatures features, Cholesky per λ above. (CG is never
// chosen automatically from sums: the trainer picks CG on the rows, without
// the Gram, above its own threshold.)
inline constexpr int64_t kCholeskyAboveFeatures = 4096;
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeGramRidgeSolver(const GramAccumulator& sums,
                                                                 RidgeSolverKind kind,
                                                                 const RidgeOptions& options = {});

// Dual solver from the rows: phi is N × D, y is N × T. Keeps a centred
// double copy of phi (N × D) and one N × N eigendecomposition.
// Errors: INVALID_ARGUMENT for N = 0, mismatched row counts or non-finite
// values (names the array, row and column).
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeDualRidgeSolver(const FloatMatrix& phi,
                                                                 const FloatMatrix& y,
                                                                 const RidgeOptions& options = {});

// The cheaper of the two for these shapes: dual when N < D, else primal
// (accumulating the rows into a GramAccumulator). Same errors as above.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeRidgeSolver(const FloatMatrix& phi,
                                                             const FloatMatrix& y,
                                                             const RidgeOptions& options = {});

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_RIDGE_H_
