// The 8-lane AVX2 instantiation of fast_math_kernels.h. This file is
// compiled with -mavx2 -mfma -ffp-contract=off (core/encoders/CMakeLists.txt)
// and only called when the active kernel path is avx2 or avx512; everything
// in it but the two entry points has internal linkage, so no AVX2 code can
// stand in for an inline function elsewhere.
#include <immintrin.h>

#include <cstdint>

#include "core/encoders/fast_math_kernels.h"

namespace invariant::fast_math_internal {
namespace {

struct Avx2Ops {
  using F = __m256;
  using I = __m256i;
  static constexpr int kLanes = 8;

  static F Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F Set(float v) { return _mm256_set1_ps(v); }
  static I SetI(int32_t v) { return _mm256_set1_epi32(v); }
  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Min(F a, F b) { return _mm256_min_ps(a, b); }
  static F Max(F a, F b) { return _mm256_max_ps(a, b); }
  static I Trunc(F v) { return _mm256_cvttps_epi32(v); }
  static F AsFloat(I v) { return _mm256_castsi256_ps(v); }
  static F And(F a, F b) { return _mm256_and_ps(a, b); }
  static F Or(F a, F b) { return _mm256_or_ps(a, b); }
  static F AndNot(F a, F b) { return _mm256_andnot_ps(a, b); }
  static F Xor(F a, F b) { return _mm256_xor_ps(a, b); }
  static F CmpLt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static I AndI(I a, I b) { return _mm256_and_si256(a, b); }
  static I AddI(I a, I b) { return _mm256_add_epi32(a, b); }
  static I CmpEqI(I a, I b) { return _mm256_cmpeq_epi32(a, b); }
  static I Shl30(I v) { return _mm256_slli_epi32(v, 30); }
  static I Shl23(I v) { return _mm256_slli_epi32(v, 23); }
};

}  // namespace

void SinCosAvx2(int64_t n, const float* x, float* sin_out, float* cos_out) {
  SinCosArray<Avx2Ops>(n, x, sin_out, cos_out);
}

void ExpAvx2(int64_t n, const float* x, float* out) { ExpArray<Avx2Ops>(n, x, out); }

}  // namespace invariant::fast_math_internal
