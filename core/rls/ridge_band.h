// ridge_band.h: a λ path that costs one factorisation. The centred Gram is
// reduced once to a symmetric band matrix by orthogonal similarity (LAPACK
// dsytrd_sy2sb, the BLAS-3 first stage of the two-stage tridiagonal
// reduction), and every λ is then a banded Cholesky solve.
//
// Problem: as ridge.h (W = (A + λI)⁻¹ C with A = Φcᵀ Φc / N, C = Φcᵀ Yc / N,
// bias by centring). Method: A = Q B Qᵀ once, B symmetric with bandwidth
// b = kBandRidgeBandwidth (Q a product of D − b Householder reflectors kept in
// A's storage), then for each λ
//   W(λ) = Q (B + λI)⁻¹ Qᵀ C,
// with Qᵀ C computed once; a λ costs a band Cholesky (LAPACK dpbtrf/dpbtrs,
// O(D b²)) and one application of Q (dormqr, O(D² T)). The reduction costs
// (4/3) D³ flops, 2.8–4.7 Cholesky factorisations (dpotrf) as measured on this
// machine, against one per λ for MakeCholeskyRidgeSolver: from five λ on the
// band path is the cheaper one (docs/benchmarks/performance.md, "The λ path").
// Orthogonal reduction is backward stable, so W(λ) agrees with the dense
// Cholesky solve and the eigendecomposition to the conditioning of A + λI.
// A λ so small that B + λI does not factor (not numerically positive
// definite) is solved by an eigendecomposition of B (LAPACK dsbevd, built
// once on first need, eigenvalues clamped at 0 as the primal solver does),
// so every λ > 0 gets the exact minimiser.
//
// Memory: the centred Gram (D × D doubles, overwritten by the reflectors; a
// copy of the accumulator's unless the accumulator is consumed, below),
// the band ((b + 1) × D) and a D × T right-hand side; the fallback adds one
// D × D eigenvector matrix, and while it is built dsbevd's workspace of about
// two more (1 + 5D + 2D² doubles; refused as INVALID_ARGUMENT from D =
// 32,768, beyond LAPACK's int).
//
// Errors: FAILED_PRECONDITION when the accumulator holds no rows;
// INVALID_ARGUMENT when D ≥ 2³¹ (LAPACK's int); INTERNAL when LAPACK reports
// a failure (the message names the routine and its info). SolveWeights:
// INVALID_ARGUMENT for a λ that is not finite and > 0.
//
// Dual (MakeDualBandRidgeSolver, from the rows; cheaper when N < D): the
// same reduction applied to the N × N kernel instead of the D × D Gram.
// With Φc (N × D) and Yc the centred rows and targets (fit_bias; else
// uncentred), K = Φc Φcᵀ (dsyrk, N² D flops), and
//   W(λ) = Φcᵀ (K/N + λI)⁻¹ Yc/N = Φcᵀ (K + NλI)⁻¹ Yc,   b = ȳ − Wᵀ μ,
// which is the primal W(λ) above (push-through identity), so both scale λ
// alike. K/N = Q B Qᵀ costs (4/3) N³; a λ costs a band solve of size N,
// one application of Q (O(N² T)) and Φcᵀ X (O(N D T)). No D × D matrix is
// ever formed, so the caller need not accumulate the Gram (N D² flops) at
// all. Memory: a centred double copy of the rows (N × D), K (N × N,
// overwritten by the reflectors), the band; the fallback adds N × N (and
// about 2 N × N of workspace while it is built). At
// N ≤ 0.8 D this is at most the primal band's two D × D doubles (the
// accumulator's Gram and its centred copy). Errors: INVALID_ARGUMENT for no
// blocks, mismatched block shapes, N, D or T = 0, N ≥ 2³¹, a non-finite
// value (names the block, array, row and column) or bandwidth < 1;
// INTERNAL from LAPACK as above.
//
// Thread-safety: the solver is immutable after creation (the fallback is
// built under std::call_once); SolveWeights may be called from many threads
// (the application of Q, whose LAPACK routine writes into the reflectors and
// restores them, is serialised by a mutex).
// LAPACK/BLAS calls use OpenBLAS's threads. Portable: plain LAPACK, no
// architecture-specific code.
#ifndef INVARIANT_CORE_RLS_RIDGE_BAND_H_
#define INVARIANT_CORE_RLS_RIDGE_BAND_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/ridge.h"

namespace invariant {

// The band's half-width b: wide enough for BLAS-3 speed in the reduction
// (64 is 40 % slower at D = 3,000; 256 no faster at 6,000), narrow enough
// that a λ's band solve (D b²) is negligible.
inline constexpr int64_t kBandRidgeBandwidth = 128;

// The band solver from accumulated sums. `bandwidth` ≥ 1 (clamped to D − 1).
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeBandRidgeSolver(
    const GramAccumulator& sums, const RidgeOptions& options = {},
    int64_t bandwidth = kBandRidgeBandwidth);

// The same, consuming `sums` (moved from; see GramAccumulator::
// TakePhiTPhiLower): the Gram's own storage is centred and reduced in place,
// so the peak is one D × D matrix of doubles instead of two (16 GB holds
// one at D = 45,000, or two at 32,000). The same weights, bit for bit. On
// an error from LAPACK `sums` has been consumed.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeBandRidgeSolver(
    GramAccumulator&& sums, const RidgeOptions& options = {},
    int64_t bandwidth = kBandRidgeBandwidth);

// The dual band solver from row blocks: phi_blocks[b] is N_b × D,
// y_blocks[b] N_b × T (row-major floats, as the trainer keeps them; the
// blocks together are the N rows). The solver keeps its own centred double
// copy: the caller may free the blocks afterwards. `bandwidth` ≥ 1 (clamped
// to N − 1).
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeDualBandRidgeSolver(
    absl::Span<const FloatMatrix> phi_blocks, absl::Span<const FloatMatrix> y_blocks,
    const RidgeOptions& options = {}, int64_t bandwidth = kBandRidgeBandwidth);

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_RIDGE_BAND_H_
