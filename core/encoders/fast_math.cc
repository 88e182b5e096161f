#include "core/encoders/fast_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/base/kernel_path.h"  // INVARIANT_X86_SIMD, ActiveKernelPath
#include "core/encoders/fast_math_kernels.h"

namespace invariant {
namespace fast_math_internal {

#if INVARIANT_X86_SIMD
// fast_math_avx2.cc (compiled with -mavx2 -mfma): 8 lanes.
void SinCosAvx2(int64_t n, const float* x, float* sin_out, float* cos_out);
void ExpAvx2(int64_t n, const float* x, float* out);
#endif

namespace {

// One lane: the portable path (any CPU, aarch64 included). Bit operations on
// floats go through their 32-bit patterns.
struct PortableOps {
  using F = float;
  using I = int32_t;
  static constexpr int kLanes = 1;

  static uint32_t Bits(F v) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof(b));
    return b;
  }
  static F FromBits(uint32_t b) {
    F v;
    std::memcpy(&v, &b, sizeof(v));
    return v;
  }
  static F Load(const float* p) { return *p; }
  static void Store(float* p, F v) { *p = v; }
  static F Set(float v) { return v; }
  static I SetI(int32_t v) { return v; }
  static F Add(F a, F b) { return a + b; }
  static F Sub(F a, F b) { return a - b; }
  static F Mul(F a, F b) { return a * b; }
  static F Min(F a, F b) { return a < b ? a : b; }
  static F Max(F a, F b) { return a > b ? a : b; }
  static I Trunc(F v) {  // cvttps2dq: INT32_MIN when out of range or NaN
    return std::fabs(v) < 2147483648.0f ? static_cast<int32_t>(v) : INT32_MIN;
  }
  static F AsFloat(I v) { return FromBits(static_cast<uint32_t>(v)); }
  static F And(F a, F b) { return FromBits(Bits(a) & Bits(b)); }
  static F Or(F a, F b) { return FromBits(Bits(a) | Bits(b)); }
  static F AndNot(F a, F b) { return FromBits(~Bits(a) & Bits(b)); }
  static F Xor(F a, F b) { return FromBits(Bits(a) ^ Bits(b)); }
  static F CmpLt(F a, F b) { return FromBits(a < b ? 0xffffffffu : 0u); }
  static I AndI(I a, I b) { return a & b; }
  static I AddI(I a, I b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
  }
  static I CmpEqI(I a, I b) { return a == b ? -1 : 0; }
  static I Shl30(I v) { return static_cast<int32_t>(static_cast<uint32_t>(v) << 30); }
  static I Shl23(I v) { return static_cast<int32_t>(static_cast<uint32_t>(v) << 23); }
};

}  // namespace
}  // namespace fast_math_internal

void FastSinCos(int64_t n, const float* x, float* sin_out, float* cos_out) {
#if INVARIANT_X86_SIMD
  if (ActiveKernelPath() != KernelPath::kScalar) {
    fast_math_internal::SinCosAvx2(n, x, sin_out, cos_out);
    return;
  }
#endif
  fast_math_internal::SinCosArray<fast_math_internal::PortableOps>(n, x, sin_out, cos_out);
}

void FastExp(int64_t n, const float* x, float* out) {
#if INVARIANT_X86_SIMD
  if (ActiveKernelPath() != KernelPath::kScalar) {
    fast_math_internal::ExpAvx2(n, x, out);
    return;
  }
#endif
  fast_math_internal::ExpArray<fast_math_internal::PortableOps>(n, x, out);
}

float SumInFixedOrder(const float* v, int64_t n) {
  float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int l = 0; l < 4; ++l) lane[l] += v[i + l];
  }
  float sum = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  for (; i < n; ++i) sum += v[i];
  return sum;
}

}  // namespace invariant
