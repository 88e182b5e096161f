#include "core/encoders/dot_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace invariant {
namespace {

constexpr int64_t kRowTile = 4;
constexpr int64_t kColTile = 3;
constexpr int64_t kColumnBlockBytes = 256 * 1024;  // b block kept in L2

// ---- AVX2 + FMA -----------------------------------------------------------

__attribute__((target("avx2,fma"))) inline float HorizontalSum8(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v);
  const __m128 hi = _mm256_extractf128_ps(v, 1);
  const __m128 s4 = _mm_add_ps(lo, hi);                     // (0+4, 1+5, 2+6, 3+7)
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));  // (04+26, 15+37, ..)
  const __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 0x55));
  return _mm_cvtss_f32(s1);
}

template <int R, int C>
__attribute__((target("avx2,fma"))) void TileAvx2(const float* x, int64_t d, const float* b,
                                                  float* p, int64_t ldp) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  const int64_t body = d - d % 8;
  for (int64_t k = 0; k < body; k += 8) {
    __m256 bv[C];
    for (int c = 0; c < C; ++c) bv[c] = _mm256_loadu_ps(b + c * d + k);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * d + k);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, bv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      float s = HorizontalSum8(acc[r][c]);
      for (int64_t k = body; k < d; ++k) s = std::fma(x[r * d + k], b[c * d + k], s);
      p[r * ldp + c] = s;
    }
  }
}

// ---- SSE2 -------------------------------------------------------------------

inline float HorizontalSum4(__m128 v) {
  const __m128 s2 = _mm_add_ps(v, _mm_movehl_ps(v, v));
  const __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 0x55));
  return _mm_cvtss_f32(s1);
}

template <int R, int C>
void TileSse2(const float* x, int64_t d, const float* b, float* p, int64_t ldp) {
  __m128 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm_setzero_ps();
  }
  const int64_t body = d - d % 4;
  for (int64_t k = 0; k < body; k += 4) {
    __m128 bv[C];
    for (int c = 0; c < C; ++c) bv[c] = _mm_loadu_ps(b + c * d + k);
    for (int r = 0; r < R; ++r) {
      const __m128 xv = _mm_loadu_ps(x + r * d + k);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm_add_ps(acc[r][c], _mm_mul_ps(xv, bv[c]));
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      float s = HorizontalSum4(acc[r][c]);
      for (int64_t k = body; k < d; ++k) s = s + x[r * d + k] * b[c * d + k];
      p[r * ldp + c] = s;
    }
  }
}

using TileFn = void (*)(const float*, int64_t, const float*, float*, int64_t);

struct TileTable {
  TileFn fn[kRowTile + 1][kColTile + 1];
  const char* isa;
};

template <template <int, int> class Maker>
TileTable MakeTable(const char* isa) {
  TileTable t{};
  t.isa = isa;
  t.fn[1][1] = Maker<1, 1>::fn;
  t.fn[1][2] = Maker<1, 2>::fn;
  t.fn[1][3] = Maker<1, 3>::fn;
  t.fn[2][1] = Maker<2, 1>::fn;
  t.fn[2][2] = Maker<2, 2>::fn;
  t.fn[2][3] = Maker<2, 3>::fn;
  t.fn[3][1] = Maker<3, 1>::fn;
  t.fn[3][2] = Maker<3, 2>::fn;
  t.fn[3][3] = Maker<3, 3>::fn;
  t.fn[4][1] = Maker<4, 1>::fn;
  t.fn[4][2] = Maker<4, 2>::fn;
  t.fn[4][3] = Maker<4, 3>::fn;
  return t;
}

template <int R, int C>
struct Avx2Maker {
  static constexpr TileFn fn = &TileAvx2<R, C>;
};
template <int R, int C>
struct Sse2Maker {
  static constexpr TileFn fn = &TileSse2<R, C>;
};

const TileTable& Table() {
  static const TileTable table = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      return MakeTable<Avx2Maker>("avx2_fma");
    }
    return MakeTable<Sse2Maker>("sse2");
  }();
  return table;
}

}  // namespace

const char* BatchIndependentDotIsa() { return Table().isa; }

void BatchIndependentDot(int64_t n, const float* x, int64_t d, int64_t cols, const float* b,
                         float* p, int64_t ldp) {
  if (n <= 0 || cols <= 0) return;
  if (d <= 0) {
    for (int64_t i = 0; i < n; ++i) std::fill(p + i * ldp, p + i * ldp + cols, 0.0f);
    return;
  }
  const TileTable& table = Table();
  const int64_t block_cols = std::max<int64_t>(
      kColTile, kColumnBlockBytes / static_cast<int64_t>(d * sizeof(float)) / kColTile * kColTile);
  for (int64_t c0 = 0; c0 < cols; c0 += block_cols) {
    const int64_t c_end = std::min(cols, c0 + block_cols);
    for (int64_t i = 0; i < n; i += kRowTile) {
      const int64_t rows = std::min(kRowTile, n - i);
      for (int64_t c = c0; c < c_end; c += kColTile) {
        const int64_t cs = std::min(kColTile, c_end - c);
        table.fn[rows][cs](x + i * d, d, b + c * d, p + i * ldp + c, ldp);
      }
    }
  }
}

}  // namespace invariant
