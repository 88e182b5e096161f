// packed_dot.h: the batch-independent product P = X · Bᵀ over a packed bank.
//
// The encoders promise that a row's features never depend on the other rows
// of the batch, bit for bit (encoder.h): the server batches requests and its
// answers must equal in-process Encode. OpenBLAS sgemm does not keep that
// promise (its summation order changes with the shape and the thread split).
// This kernel computes every output with ONE order, whatever the batch size,
// the row's position, the tile, the thread or the instruction set:
//
//   acc = 0;  for k = 0 … d−1:  acc = fma(x[i][k], b[c][k], acc);  P[i][c] = acc
//
// so every path below gives the same bits. There is no k-blocking: each
// accumulator stays in a register for the whole of k.
//
// Layout: the bank B (cols × d, row-major: one template per row) is packed
// ONCE, when a bank or encoder is built, into column panels of
// kPanelWidth columns, each panel d × kPanelWidth (k-major, the last panel
// zero-padded), so a micro-kernel reads kPanelWidth consecutive floats per
// k. x is n × d with row stride ldx; p has row stride ldp.
//
// Paths (outer-product micro-kernels, register tiles of rows × panels), one
// per KernelPath (kernel_path.h: the CPU's best, INVARIANT_KERNEL,
// SetKernelPath):
//   kAvx512  AVX-512F, 8 rows × 2 panels of 16 lanes
//   kAvx2    AVX2 + FMA, 6 rows × 1 panel (2 × 8 lanes)
//   kScalar  std::fma, 4 rows × 1 panel: any CPU (also aarch64), and the
//            only one built with INVARIANT_PORTABLE_KERNELS
//
// Storage: float32, or bf16 (BankDtype::kBfloat16: each bank value rounded
// once at packing to nearest-even bfloat16, bf16.h; half the bytes read per
// request). bf16 values are widened to float exactly (a 16-bit shift) inside
// the micro-kernel, so the fma order and the bit-identity across paths are
// unchanged: a bf16 bank gives exactly the float result of the rounded bank.
// Every path, the scalar one included, reads bf16 (no bf16 instructions
// are needed).
//
// Thread-safety: PackedBank is immutable after Pack; the functions are
// thread-safe. PackedDot runs on the calling thread; ParallelPackedDot
// splits rows and columns over the default thread pool (thread_pool.h).
#ifndef INVARIANT_CORE_ENCODERS_PACKED_DOT_H_
#define INVARIANT_CORE_ENCODERS_PACKED_DOT_H_

#include <cstdint>

#include "core/base/tensor.h"

namespace invariant {

enum class BankDtype { kFloat32 = 0, kBfloat16 = 1 };

// "float32" or "bf16".
const char* BankDtypeName(BankDtype dtype);

class PackedBank {
 public:
  static constexpr int64_t kPanelWidth = 16;

  PackedBank() = default;
  // Packs the cols × d row-major matrix b (cols = b.rows(), d = b.cols()),
  // stored as `dtype`.
  static PackedBank Pack(const FloatMatrix& b, BankDtype dtype = BankDtype::kFloat32);
  // Packs a bank already stored as bfloat16 bits (a bf16 bundle tensor); the
  // result is kBfloat16 and equals Pack(widened b, kBfloat16) bit for bit.
  static PackedBank Pack(const Bf16Matrix& b);

  int64_t cols() const { return cols_; }
  int64_t dim() const { return dim_; }
  BankDtype dtype() const { return dtype_; }
  int64_t num_panels() const { return (cols_ + kPanelWidth - 1) / kPanelWidth; }
  // Panel q: d × kPanelWidth values, element (k, c) at k·kPanelWidth + c;
  // panel() for float32 banks, panel_bf16() for bf16 banks.
  const float* panel(int64_t q) const { return panels_.row(q); }
  const uint16_t* panel_bf16(int64_t q) const { return panels16_.row(q); }
  const void* panel_data(int64_t q) const {
    return dtype_ == BankDtype::kBfloat16 ? static_cast<const void*>(panel_bf16(q))
                                          : static_cast<const void*>(panel(q));
  }
  size_t bytes() const { return panels_.bytes() + panels16_.bytes(); }

 private:
  // num_panels × (d·kPanelWidth), 64-byte aligned; one of them is used.
  FloatMatrix panels_;
  Array2D<uint16_t> panels16_;
  BankDtype dtype_ = BankDtype::kFloat32;
  int64_t cols_ = 0;
  int64_t dim_ = 0;
};

// p[i·ldp + (c − col_begin)] = Σ_k x[i·ldx + k] · b[c][k] for i < n and
// col_begin ≤ c < col_end, in the order stated above; on the calling thread.
void PackedDot(const PackedBank& bank, int64_t n, const float* x, int64_t ldx, int64_t col_begin,
               int64_t col_end, float* p, int64_t ldp);

// All columns: p[i·ldp + c] for c < bank.cols(); x has row stride bank.dim().
void PackedDot(const PackedBank& bank, int64_t n, const float* x, float* p, int64_t ldp);

// As the all-columns PackedDot, split over the default thread pool. Same bits.
void ParallelPackedDot(const PackedBank& bank, int64_t n, const float* x, float* p, int64_t ldp);

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_PACKED_DOT_H_
