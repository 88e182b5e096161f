#include "core/encoders/packed_dot.h"

#include "core/base/kernel_path.h"  // INVARIANT_X86_SIMD, ActiveKernelPath

#if INVARIANT_X86_SIMD
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/base/bf16.h"
#include "core/base/thread_pool.h"

namespace invariant {
namespace {

constexpr int64_t kW = PackedBank::kPanelWidth;
constexpr int64_t kRowChunk = 96;  // rows whose x stays in L2 while panels stream past
constexpr int kMaxRows = 8;
constexpr int kMaxPanels = 2;

// Computes a rows R × (P·kW) tile into `tile` (row stride P·kW) from R rows
// of x and P consecutive panels starting at `panel` (float or bf16 values;
// panel stride panel_stride values).
using TileFn = void (*)(const float* x, int64_t ldx, const void* panel, int64_t panel_stride,
                        int64_t d, float* tile);

struct TileTable {
  TileFn fn[kMaxRows + 1][kMaxPanels + 1] = {};
  int rows = 0;    // register tile height
  int panels = 0;  // register tile width in panels
};

inline float ToFloat(float v) { return v; }
inline float ToFloat(uint16_t v) { return Bf16Value(v); }  // exact (bf16.h)

// ---- portable: std::fma --------------------------------------------------

template <typename T>
struct ScalarTiles {
  template <int R, int P>
  static void Run(const float* x, int64_t ldx, const void* panel_bytes, int64_t panel_stride,
                  int64_t d, float* tile) {
    const T* panel = static_cast<const T*>(panel_bytes);
    float acc[R][P * kW] = {};
    for (int64_t k = 0; k < d; ++k) {
      for (int q = 0; q < P; ++q) {
        const T* b = panel + q * panel_stride + k * kW;
        for (int r = 0; r < R; ++r) {
          const float xv = x[r * ldx + k];
          for (int64_t c = 0; c < kW; ++c) {
            acc[r][q * kW + c] = std::fma(xv, ToFloat(b[c]), acc[r][q * kW + c]);
          }
        }
      }
    }
    for (int r = 0; r < R; ++r) std::memcpy(tile + r * P * kW, acc[r], sizeof(acc[r]));
  }
};

#if INVARIANT_X86_SIMD

// ---- AVX2 + FMA: a panel is two 8-lane vectors ----------------------------

__attribute__((target("avx2,fma"))) inline __m256 Load8(const float* p) {
  return _mm256_load_ps(p);
}
__attribute__((target("avx2,fma"))) inline __m256 Load8(const uint16_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

template <typename T>
struct Avx2Tiles {
  template <int R, int P>
  __attribute__((target("avx2,fma"))) static void Run(const float* x, int64_t ldx,
                                                      const void* panel_bytes, int64_t panel_stride,
                                                      int64_t d, float* tile) {
    const T* panel = static_cast<const T*>(panel_bytes);
    __m256 acc[R][2 * P];
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < 2 * P; ++v) acc[r][v] = _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < d; ++k) {
      __m256 b[2 * P];
      for (int q = 0; q < P; ++q) {
        b[2 * q] = Load8(panel + q * panel_stride + k * kW);
        b[2 * q + 1] = Load8(panel + q * panel_stride + k * kW + 8);
      }
      for (int r = 0; r < R; ++r) {
        const __m256 xv = _mm256_broadcast_ss(x + r * ldx + k);
        for (int v = 0; v < 2 * P; ++v) acc[r][v] = _mm256_fmadd_ps(xv, b[v], acc[r][v]);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < 2 * P; ++v) _mm256_storeu_ps(tile + r * P * kW + v * 8, acc[r][v]);
    }
  }
};

// ---- AVX-512F: a panel is one 16-lane vector ------------------------------

__attribute__((target("avx512f"))) inline __m512 Load16(const float* p) {
  return _mm512_load_ps(p);
}
__attribute__((target("avx512f"))) inline __m512 Load16(const uint16_t* p) {
  // Zero-masked forms: the unmasked intrinsics trip GCC 12's
  // -Wmaybe-uninitialized on their undefined pass-through operand.
  const __m512i wide =
      _mm512_maskz_cvtepu16_epi32(0xFFFF, _mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, wide, 16));
}

template <typename T>
struct Avx512Tiles {
  template <int R, int P>
  __attribute__((target("avx512f"))) static void Run(const float* x, int64_t ldx,
                                                     const void* panel_bytes, int64_t panel_stride,
                                                     int64_t d, float* tile) {
    const T* panel = static_cast<const T*>(panel_bytes);
    __m512 acc[R][P];
    for (int r = 0; r < R; ++r) {
      for (int q = 0; q < P; ++q) acc[r][q] = _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < d; ++k) {
      __m512 b[P];
      for (int q = 0; q < P; ++q) b[q] = Load16(panel + q * panel_stride + k * kW);
      for (int r = 0; r < R; ++r) {
        const __m512 xv = _mm512_set1_ps(x[r * ldx + k]);
        for (int q = 0; q < P; ++q) acc[r][q] = _mm512_fmadd_ps(xv, b[q], acc[r][q]);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int q = 0; q < P; ++q) _mm512_storeu_ps(tile + r * P * kW + q * kW, acc[r][q]);
    }
  }
};

#endif  // INVARIANT_X86_SIMD

// fn[R][P] = Tiles::Run<R, P> for R = 1..rows, P = 1..panels.
template <class Tiles, int P, int... Rs>
void FillColumn(TileTable& t, std::integer_sequence<int, Rs...>) {
  ((t.fn[Rs + 1][P] = &Tiles::template Run<Rs + 1, P>), ...);
}

template <class Tiles, int Rows, int Panels>
TileTable MakeTable() {
  TileTable t;
  t.rows = Rows;
  t.panels = Panels;
  FillColumn<Tiles, 1>(t, std::make_integer_sequence<int, Rows>());
  if constexpr (Panels >= 2) FillColumn<Tiles, 2>(t, std::make_integer_sequence<int, Rows>());
  return t;
}

template <typename T>
const TileTable& TableFor(KernelPath path) {
  static const TileTable scalar = MakeTable<ScalarTiles<T>, 4, 1>();
#if INVARIANT_X86_SIMD
  static const TileTable avx2 = MakeTable<Avx2Tiles<T>, 6, 1>();
  static const TileTable avx512 = MakeTable<Avx512Tiles<T>, 8, 2>();
  if (path == KernelPath::kAvx512) return avx512;
  if (path == KernelPath::kAvx2) return avx2;
#endif
  return scalar;
}

}  // namespace

const char* BankDtypeName(BankDtype dtype) {
  return dtype == BankDtype::kBfloat16 ? "bf16" : "float32";
}

namespace {

inline uint16_t ToBf16Bits(float v) { return FloatToBf16(v); }
inline uint16_t ToBf16Bits(uint16_t v) { return v; }

// Copies the cols × d row-major matrix b into panels (k-major, kW columns
// per panel; padding stays 0). Dst is float or uint16_t (bf16 bits).
template <typename Src, typename Dst>
void FillPanels(const Array2D<Src>& b, Dst* dst) {
  const int64_t cols = b.rows();
  const int64_t d = b.cols();
  const int64_t panels = (cols + kW - 1) / kW;
  ParallelFor(panels, [&](int64_t q) {
    const int64_t c_end = std::min(cols, (q + 1) * kW);
    for (int64_t c = q * kW; c < c_end; ++c) {
      const Src* src = b.row(c);
      Dst* out = dst + q * d * kW + (c - q * kW);
      for (int64_t k = 0; k < d; ++k) {
        if constexpr (std::is_same_v<Dst, float>) {
          out[k * kW] = ToFloat(src[k]);
        } else {
          out[k * kW] = ToBf16Bits(src[k]);
        }
      }
    }
  });
}

}  // namespace

PackedBank PackedBank::Pack(const FloatMatrix& b, BankDtype dtype) {
  PackedBank packed;
  packed.cols_ = b.rows();
  packed.dim_ = b.cols();
  packed.dtype_ = dtype;
  if (dtype == BankDtype::kBfloat16) {
    packed.panels16_ = Array2D<uint16_t>::Zeros(packed.num_panels(), packed.dim_ * kW);
    FillPanels(b, packed.panels16_.mutable_data());
  } else {
    packed.panels_ = FloatMatrix::Zeros(packed.num_panels(), packed.dim_ * kW);
    FillPanels(b, packed.panels_.mutable_data());
  }
  return packed;
}

PackedBank PackedBank::Pack(const Bf16Matrix& b) {
  PackedBank packed;
  packed.cols_ = b.rows();
  packed.dim_ = b.cols();
  packed.dtype_ = BankDtype::kBfloat16;
  packed.panels16_ = Array2D<uint16_t>::Zeros(packed.num_panels(), packed.dim_ * kW);
  FillPanels(b, packed.panels16_.mutable_data());
  return packed;
}

void PackedDot(const PackedBank& bank, int64_t n, const float* x, int64_t ldx, int64_t col_begin,
               int64_t col_end, float* p, int64_t ldp) {
  if (n <= 0 || col_end <= col_begin) return;
  const int64_t d = bank.dim();
  if (d == 0) {
    for (int64_t i = 0; i < n; ++i) {
      std::fill(p + i * ldp, p + i * ldp + (col_end - col_begin), 0.f);
    }
    return;
  }
  const bool bf16 = bank.dtype() == BankDtype::kBfloat16;
  const TileTable& table =
      bf16 ? TableFor<uint16_t>(ActiveKernelPath()) : TableFor<float>(ActiveKernelPath());
  alignas(64) float tile[kMaxRows * kMaxPanels * kW];
  const int64_t first_panel = col_begin / kW;
  const int64_t end_panel = (col_end + kW - 1) / kW;
  for (int64_t row0 = 0; row0 < n; row0 += kRowChunk) {
    const int64_t row_end = std::min(n, row0 + kRowChunk);
    for (int64_t q = first_panel; q < end_panel; q += table.panels) {
      const int np = static_cast<int>(std::min<int64_t>(table.panels, end_panel - q));
      const int64_t lo = std::max(col_begin, q * kW);
      const int64_t hi = std::min(col_end, (q + np) * kW);
      for (int64_t i = row0; i < row_end; i += table.rows) {
        const int nr = static_cast<int>(std::min<int64_t>(table.rows, row_end - i));
        table.fn[nr][np](x + i * ldx, ldx, bank.panel_data(q), d * kW, d, tile);
        for (int r = 0; r < nr; ++r) {
          std::memcpy(p + (i + r) * ldp + (lo - col_begin), tile + r * np * kW + (lo - q * kW),
                      static_cast<size_t>(hi - lo) * sizeof(float));
        }
      }
    }
  }
}

void PackedDot(const PackedBank& bank, int64_t n, const float* x, float* p, int64_t ldp) {
  PackedDot(bank, n, x, bank.dim(), 0, bank.cols(), p, ldp);
}

void ParallelPackedDot(const PackedBank& bank, int64_t n, const float* x, float* p, int64_t ldp) {
  if (n <= 0 || bank.cols() <= 0) return;
  const int64_t row_blocks = (n + kRowChunk - 1) / kRowChunk;
  const int64_t row_block = (n + row_blocks - 1) / row_blocks;
  // Column blocks of whole panels: ~512 columns, smaller when there would be
  // fewer than 4 tasks per thread, never below one panel.
  const int64_t panels = bank.num_panels();
  const int64_t want_tasks = 4 * static_cast<int64_t>(DefaultThreadCount());
  int64_t panels_per_block = std::min<int64_t>(panels, 512 / kW);
  while (panels_per_block > 1 &&
         row_blocks * ((panels + panels_per_block - 1) / panels_per_block) < want_tasks) {
    panels_per_block = (panels_per_block + 1) / 2;
  }
  const int64_t col_blocks = (panels + panels_per_block - 1) / panels_per_block;
  ParallelFor(row_blocks * col_blocks, [&](int64_t task) {
    const int64_t row0 = (task / col_blocks) * row_block;
    const int64_t rows = std::min(row_block, n - row0);
    const int64_t c0 = (task % col_blocks) * panels_per_block * kW;
    const int64_t c1 = std::min(bank.cols(), c0 + panels_per_block * kW);
    if (rows <= 0) return;
    PackedDot(bank, rows, x + row0 * bank.dim(), bank.dim(), c0, c1, p + row0 * ldp + c0, ldp);
  });
}

}  // namespace invariant
