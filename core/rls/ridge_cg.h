// ridge_cg.h: ridge regression by preconditioned conjugate gradients (PCG),
// for feature counts where factoring the D × D Gram matrix per λ (O(D³)) is
// too slow, or where the Gram itself is too large to form.
//
// Same problem and the same minimiser as ridge.h:
//   W(λ) = (A + λ I)⁻¹ C,   A = Φcᵀ Φc / N,   C = Φcᵀ Yc / N,   b = ȳ − Wᵀ μ,
// solved for the T columns of C together (T independent CG recurrences that
// share each product with A). The operator A is applied either
//   * from accumulated sums (MakeConjugateGradientRidgeSolver): the centred
//     Gram, D × D doubles (one copy, where Cholesky needs two), one
//     symmetric product per iteration, O(D² T) — and so shards + reduce stay
//     exact: the solver reads the merged sums; or
//   * from the rows (MakeRowsConjugateGradientRidgeSolver): Σ_b Φc_bᵀ (Φc_b V) / N
//     over centred double copies of row blocks (N × D doubles; shards are
//     blocks, summed per product), O(N D T) per iteration; the Gram is never
//     formed.
// Every product runs in double through BLAS (OpenBLAS, all threads).
//
// Preconditioner: the randomized Nyström approximation of rank ℓ (Frangella,
// Tropp & Udell, "Randomized Nyström preconditioning", 2023): from
// Y = A Ω (Ω a seeded Gaussian D × ℓ, orthonormalised), A ≈ U Λ̂ Uᵀ, and
//   P⁻¹ = (λ̂_ℓ + λ) U (Λ̂ + λ I)⁻¹ Uᵀ + (I − U Uᵀ),
// built once (ℓ products with A) and reused for every λ. It removes the ℓ
// largest eigenvalues from the condition number, which becomes about
// (λ̂_ℓ + λ) / λ. ℓ ≥ D makes it exact (one iteration).
//
// Warm start along a λ grid: each solve starts from the solution of the
// nearest λ this solver solved before (ChooseLambda walks the grid in the
// order given, so a given call sequence gives the same bits every run; large
// λ first suits CG, since the well-conditioned solves then seed the
// ill-conditioned ones). A λ solved before to the same tolerance or tighter
// is returned from the cache.
//
// Convergence: column t stops when ‖c_t − (A + λI) w_t‖ ≤ tol · ‖c_t‖
// (residual recomputed from scratch at the end and reported in
// RidgeWeights::relative_residual, the largest over columns), with tol =
// selection_tolerance for SolveWeights (scoring a grid on validation rows
// needs no more) and tolerance for FinalWeights (the model; it continues
// from the selection solve). Reaching max_iterations first is not an error:
// the result carries its residual and converged = false, and the caller
// decides (the trainer warns).
//
// Solvers are thread-safe (the warm-start cache is locked); concurrent
// solves see whichever cache entries were there when they started.
#ifndef INVARIANT_CORE_RLS_RIDGE_CG_H_
#define INVARIANT_CORE_RLS_RIDGE_CG_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/ridge.h"

namespace invariant {

struct ConjugateGradientOptions {
  // Relative residual per target column at which CG stops: FinalWeights
  // (the model) and SolveWeights (scoring a grid; at most tolerance).
  double tolerance = 1e-10;
  double selection_tolerance = 1e-6;
  // Iterations per λ at most (≥ 1).
  int64_t max_iterations = 2000;
  // ℓ, the Nyström preconditioner's rank (capped at D); 0 turns it off.
  int64_t preconditioner_rank = 512;
  // Seed of the sketch Ω.
  uint64_t seed = 0x5eedc6;
};

// CG on the centred Gram of `sums`. Errors: FAILED_PRECONDITION when the
// accumulator holds no rows; INVALID_ARGUMENT for options out of range.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeConjugateGradientRidgeSolver(
    const GramAccumulator& sums, const RidgeOptions& options = {},
    const ConjugateGradientOptions& cg = {});
// The same, consuming `sums` (GramAccumulator::TakePhiTPhiLower): the Gram's
// own storage is the operator, so the peak is one D × D matrix, not two.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeConjugateGradientRidgeSolver(
    GramAccumulator&& sums, const RidgeOptions& options = {},
    const ConjugateGradientOptions& cg = {});

// CG on row blocks: phi_blocks[b] is N_b × D, y_blocks[b] N_b × T (row-major
// floats, as FloatMatrix holds them); the blocks together are the N rows,
// e.g. one per shard. The solver keeps centred double copies (N × D × 8
// bytes); the caller may free its blocks afterwards. Errors:
// INVALID_ARGUMENT for no blocks, mismatched counts or shapes, N = 0,
// non-finite values (names the block, array, row and column) or options out
// of range.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeRowsConjugateGradientRidgeSolver(
    absl::Span<const FloatMatrix> phi_blocks, absl::Span<const FloatMatrix> y_blocks,
    const RidgeOptions& options = {}, const ConjugateGradientOptions& cg = {});

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_RIDGE_CG_H_
