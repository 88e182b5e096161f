// bf16.h: bfloat16 values as stored in banks and bundles (DTYPE_BFLOAT16).
//
// A bfloat16 is the high 16 bits of an IEEE float (sign, 8-bit exponent,
// 7-bit mantissa), held as uint16_t bits (Bf16Matrix in tensor.h). Float →
// bf16 rounds to nearest, ties to even (NaN stays a NaN, ±inf and values
// beyond the largest bf16 become ±inf); bf16 → float is exact (a 16-bit
// shift). These are the portable conversions every path uses; the vector
// kernels widen bf16 inside their loads with the same shift
// (packed_dot.cc), so their results equal these bit for bit.
//
// Errors: none. Thread-safety: pure functions.
#ifndef INVARIANT_CORE_BASE_BF16_H_
#define INVARIANT_CORE_BASE_BF16_H_

#include <cstdint>
#include <cstring>

#include "core/base/tensor.h"

namespace invariant {

// float → bfloat16 bits, round to nearest even (NaN stays NaN).
inline uint16_t FloatToBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>(bits >> 16);
}

// bfloat16 bits → the float they denote (exact: the 16 bits become the high
// half of the float).
inline float Bf16Value(uint16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Every value of `m` rounded by FloatToBf16, same shape (an owned array).
Bf16Matrix RoundToBf16(const FloatMatrix& m);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_BF16_H_
