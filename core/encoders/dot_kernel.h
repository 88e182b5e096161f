// dot_kernel.h: a batch-independent matrix product P = X · Bᵀ.
//
// The encoders promise that a row's features never depend on the other rows
// of the batch (encoder.h), bit for bit, because the server batches requests
// and its answers must equal in-process Encode. OpenBLAS sgemm does not keep
// that promise: its micro-kernels and thread splits change the summation
// order of an output with M and N (measured on OpenBLAS 0.3.21 Haswell: rows
// differ in the last bits between batch sizes). This kernel computes every
// output P[i][c] = ⟨x_i, b_c⟩ with one fixed order that depends only on d:
// 8 (AVX2+FMA) or 4 (SSE2) lane-wise fused/unfused multiply-adds over k in
// ascending order, a fixed horizontal reduction, then the d mod lanes tail
// in order — never on n, on the number of columns, or on the position of
// the row or column in the tile. The instruction set is chosen once per
// process at run time (AVX2+FMA when the CPU has it), so results are
// identical within a process and across processes on one machine.
//
// Layout: x is n × d (row stride d), b is cols × d (row stride d), p is
// n × cols with row stride ldp ≥ cols. Register tiles of 4 rows × 3 columns,
// columns blocked so a block of b stays in L2 while the rows stream past it.
// Single-threaded; thread-safe (no state).
#ifndef INVARIANT_CORE_ENCODERS_DOT_KERNEL_H_
#define INVARIANT_CORE_ENCODERS_DOT_KERNEL_H_

#include <cstdint>

namespace invariant {

void BatchIndependentDot(int64_t n, const float* x, int64_t d, int64_t cols, const float* b,
                         float* p, int64_t ldp);

// "avx2_fma" or "sse2": the instruction set BatchIndependentDot uses.
const char* BatchIndependentDotIsa();

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_DOT_KERNEL_H_
