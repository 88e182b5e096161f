#include "core/encoders/fast_math.h"

#include <emmintrin.h>

#include <algorithm>

namespace invariant {
namespace {

// Every value goes through the same 4-lane SSE2 code (tails are padded), so
// a value's result never depends on its position or on the array length.

inline __m128 RoundNearest(__m128 v) {            // ties to even, |v| < 2^22
  const __m128 magic = _mm_set1_ps(12582912.0f);  // 1.5 · 2^23
  return _mm_sub_ps(_mm_add_ps(v, magic), magic);
}

inline __m128 Select(__m128 mask, __m128 if_true, __m128 if_false) {
  return _mm_or_ps(_mm_and_ps(mask, if_true), _mm_andnot_ps(mask, if_false));
}

inline void SinCos4(__m128 v, __m128* sin_out, __m128* cos_out) {
  const __m128 max_quadrant = _mm_set1_ps(4194304.0f);           // 2^22
  __m128 q = _mm_mul_ps(v, _mm_set1_ps(0.636619772367581343f));  // x · 2/π
  q = _mm_min_ps(_mm_max_ps(q, _mm_sub_ps(_mm_setzero_ps(), max_quadrant)), max_quadrant);
  q = RoundNearest(q);
  const __m128i quadrant = _mm_cvttps_epi32(q);
  // r = x − q·π/2 with π/2 split in three parts (Cephes DP1..DP3 doubled).
  __m128 r = _mm_sub_ps(v, _mm_mul_ps(q, _mm_set1_ps(1.5703125f)));
  r = _mm_sub_ps(r, _mm_mul_ps(q, _mm_set1_ps(4.837512969970703125e-4f)));
  r = _mm_sub_ps(r, _mm_mul_ps(q, _mm_set1_ps(7.54978995489188216e-8f)));
  const __m128 z = _mm_mul_ps(r, r);
  // sin r = r + r·z·(s1 + z·(s2 + z·s3))
  __m128 ps =
      _mm_add_ps(_mm_set1_ps(8.3321608736e-3f), _mm_mul_ps(z, _mm_set1_ps(-1.9515295891e-4f)));
  ps = _mm_add_ps(_mm_set1_ps(-1.6666654611e-1f), _mm_mul_ps(z, ps));
  const __m128 s = _mm_add_ps(r, _mm_mul_ps(_mm_mul_ps(r, z), ps));
  // cos r = 1 − z/2 + z²·(c1 + z·(c2 + z·c3))
  __m128 pc = _mm_add_ps(_mm_set1_ps(-1.388731625493765e-3f),
                         _mm_mul_ps(z, _mm_set1_ps(2.443315711809948e-5f)));
  pc = _mm_add_ps(_mm_set1_ps(4.166664568298827e-2f), _mm_mul_ps(z, pc));
  const __m128 c = _mm_add_ps(_mm_sub_ps(_mm_set1_ps(1.0f), _mm_mul_ps(_mm_set1_ps(0.5f), z)),
                              _mm_mul_ps(_mm_mul_ps(z, z), pc));
  const __m128i one = _mm_set1_epi32(1);
  const __m128i two = _mm_set1_epi32(2);
  const __m128 odd = _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(quadrant, one), one));
  const __m128 sin_sign = _mm_castsi128_ps(_mm_slli_epi32(_mm_and_si128(quadrant, two), 30));
  const __m128 cos_sign =
      _mm_castsi128_ps(_mm_slli_epi32(_mm_and_si128(_mm_add_epi32(quadrant, one), two), 30));
  *sin_out = _mm_xor_ps(Select(odd, c, s), sin_sign);
  *cos_out = _mm_xor_ps(Select(odd, s, c), cos_sign);
}

inline __m128 Exp4(__m128 raw) {
  const __m128 low = _mm_set1_ps(-87.0f);
  const __m128 v = _mm_min_ps(_mm_max_ps(raw, low), _mm_set1_ps(88.0f));
  const __m128 k = RoundNearest(_mm_mul_ps(v, _mm_set1_ps(1.44269504088896341f)));
  __m128 r = _mm_sub_ps(v, _mm_mul_ps(k, _mm_set1_ps(0.693359375f)));
  r = _mm_sub_ps(r, _mm_mul_ps(k, _mm_set1_ps(-2.12194440e-4f)));
  const __m128 z = _mm_mul_ps(r, r);
  __m128 p =
      _mm_add_ps(_mm_mul_ps(_mm_set1_ps(1.9875691500e-4f), r), _mm_set1_ps(1.3981999507e-3f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(8.3334519073e-3f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(4.1665795894e-2f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.6666665459e-1f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(5.0000001201e-1f));
  p = _mm_add_ps(_mm_add_ps(_mm_mul_ps(p, z), r), _mm_set1_ps(1.0f));
  const __m128i bits = _mm_slli_epi32(_mm_add_epi32(_mm_cvttps_epi32(k), _mm_set1_epi32(127)), 23);
  const __m128 e = _mm_mul_ps(p, _mm_castsi128_ps(bits));
  return _mm_andnot_ps(_mm_cmplt_ps(raw, low), e);  // below −87: exactly 0
}

}  // namespace

void FastSinCos(int64_t n, const float* x, float* sin_out, float* cos_out) {
  int64_t i = 0;
  __m128 s, c;
  for (; i + 4 <= n; i += 4) {
    SinCos4(_mm_loadu_ps(x + i), &s, &c);
    _mm_storeu_ps(sin_out + i, s);
    _mm_storeu_ps(cos_out + i, c);
  }
  if (i < n) {
    alignas(16) float in[4] = {0, 0, 0, 0}, so[4], co[4];
    std::copy(x + i, x + n, in);
    SinCos4(_mm_load_ps(in), &s, &c);
    _mm_store_ps(so, s);
    _mm_store_ps(co, c);
    std::copy(so, so + (n - i), sin_out + i);
    std::copy(co, co + (n - i), cos_out + i);
  }
}

void FastExp(int64_t n, const float* x, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(out + i, Exp4(_mm_loadu_ps(x + i)));
  if (i < n) {
    alignas(16) float buf[4] = {0, 0, 0, 0};
    std::copy(x + i, x + n, buf);
    _mm_store_ps(buf, Exp4(_mm_load_ps(buf)));
    std::copy(buf, buf + (n - i), out + i);
  }
}

float SumInFixedOrder(const float* v, int64_t n) {
  __m128 acc = _mm_setzero_ps();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) acc = _mm_add_ps(acc, _mm_loadu_ps(v + i));
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, acc);
  float sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i) sum += v[i];
  return sum;
}

}  // namespace invariant
