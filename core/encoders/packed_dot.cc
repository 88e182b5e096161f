#include "core/encoders/packed_dot.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/thread_pool.h"

namespace invariant {
namespace {

constexpr int64_t kW = PackedBank::kPanelWidth;
constexpr int64_t kRowChunk = 96;  // rows whose x stays in L2 while panels stream past
constexpr int kMaxRows = 8;
constexpr int kMaxPanels = 2;

// Computes a rows R × (P·kW) tile into `tile` (row stride P·kW) from R rows
// of x and P consecutive panels starting at `panel` (panel stride
// panel_stride floats).
using TileFn = void (*)(const float* x, int64_t ldx, const float* panel, int64_t panel_stride,
                        int64_t d, float* tile);

struct TileTable {
  TileFn fn[kMaxRows + 1][kMaxPanels + 1] = {};
  int rows = 0;    // register tile height
  int panels = 0;  // register tile width in panels
};

// ---- portable: std::fma --------------------------------------------------

template <int R, int P>
void TileScalar(const float* x, int64_t ldx, const float* panel, int64_t panel_stride, int64_t d,
                float* tile) {
  float acc[R][P * kW] = {};
  for (int64_t k = 0; k < d; ++k) {
    for (int q = 0; q < P; ++q) {
      const float* b = panel + q * panel_stride + k * kW;
      for (int r = 0; r < R; ++r) {
        const float xv = x[r * ldx + k];
        for (int64_t c = 0; c < kW; ++c)
          acc[r][q * kW + c] = std::fma(xv, b[c], acc[r][q * kW + c]);
      }
    }
  }
  for (int r = 0; r < R; ++r) std::memcpy(tile + r * P * kW, acc[r], sizeof(acc[r]));
}

#if defined(__x86_64__)

// ---- AVX2 + FMA: a panel is two 8-lane vectors ----------------------------

template <int R, int P>
__attribute__((target("avx2,fma"))) void TileAvx2(const float* x, int64_t ldx, const float* panel,
                                                  int64_t panel_stride, int64_t d, float* tile) {
  __m256 acc[R][2 * P];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < 2 * P; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < d; ++k) {
    __m256 b[2 * P];
    for (int q = 0; q < P; ++q) {
      b[2 * q] = _mm256_load_ps(panel + q * panel_stride + k * kW);
      b[2 * q + 1] = _mm256_load_ps(panel + q * panel_stride + k * kW + 8);
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

// ---- AVX-512F: a panel is one 16-lane vector ------------------------------

template <int R, int P>
__attribute__((target("avx512f"))) void TileAvx512(const float* x, int64_t ldx, const float* panel,
                                                   int64_t panel_stride, int64_t d, float* tile) {
  __m512 acc[R][P];
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < P; ++q) acc[r][q] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < d; ++k) {
    __m512 b[P];
    for (int q = 0; q < P; ++q) b[q] = _mm512_load_ps(panel + q * panel_stride + k * kW);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * ldx + k]);
      for (int q = 0; q < P; ++q) acc[r][q] = _mm512_fmadd_ps(xv, b[q], acc[r][q]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < P; ++q) _mm512_storeu_ps(tile + r * P * kW + q * kW, acc[r][q]);
  }
}

#endif  // __x86_64__

TileTable ScalarTable() {
  TileTable t;
  t.rows = 4;
  t.panels = 1;
  t.fn[1][1] = &TileScalar<1, 1>;
  t.fn[2][1] = &TileScalar<2, 1>;
  t.fn[3][1] = &TileScalar<3, 1>;
  t.fn[4][1] = &TileScalar<4, 1>;
  return t;
}

#if defined(__x86_64__)
TileTable Avx2Table() {
  TileTable t;
  t.rows = 6;
  t.panels = 1;
  t.fn[1][1] = &TileAvx2<1, 1>;
  t.fn[2][1] = &TileAvx2<2, 1>;
  t.fn[3][1] = &TileAvx2<3, 1>;
  t.fn[4][1] = &TileAvx2<4, 1>;
  t.fn[5][1] = &TileAvx2<5, 1>;
  t.fn[6][1] = &TileAvx2<6, 1>;
  return t;
}

TileTable Avx512Table() {
  TileTable t;
  t.rows = 8;
  t.panels = 2;
  t.fn[1][1] = &TileAvx512<1, 1>;
  t.fn[2][1] = &TileAvx512<2, 1>;
  t.fn[3][1] = &TileAvx512<3, 1>;
  t.fn[4][1] = &TileAvx512<4, 1>;
  t.fn[5][1] = &TileAvx512<5, 1>;
  t.fn[6][1] = &TileAvx512<6, 1>;
  t.fn[7][1] = &TileAvx512<7, 1>;
  t.fn[8][1] = &TileAvx512<8, 1>;
  t.fn[1][2] = &TileAvx512<1, 2>;
  t.fn[2][2] = &TileAvx512<2, 2>;
  t.fn[3][2] = &TileAvx512<3, 2>;
  t.fn[4][2] = &TileAvx512<4, 2>;
  t.fn[5][2] = &TileAvx512<5, 2>;
  t.fn[6][2] = &TileAvx512<6, 2>;
  t.fn[7][2] = &TileAvx512<7, 2>;
  t.fn[8][2] = &TileAvx512<8, 2>;
  return t;
}
#endif

const TileTable& TableFor(KernelPath path) {
  static const TileTable scalar = ScalarTable();
#if defined(__x86_64__)
  static const TileTable avx2 = Avx2Table();
  static const TileTable avx512 = Avx512Table();
  if (path == KernelPath::kAvx512) return avx512;
  if (path == KernelPath::kAvx2) return avx2;
#endif
  return scalar;
}

KernelPath BestSupportedPath() { return SupportedKernelPaths().front(); }

// The path chosen from INVARIANT_KERNEL (or the best one), once per process.
KernelPath InitialPath() {
  const KernelPath best = BestSupportedPath();
  const char* env = std::getenv("INVARIANT_KERNEL");
  if (env == nullptr || *env == '\0') return best;
  const std::string want(env);
  for (KernelPath p : {KernelPath::kAvx512, KernelPath::kAvx2, KernelPath::kScalar}) {
    if (want != KernelPathName(p)) continue;
    if (KernelPathSupported(p)) return p;
    std::fprintf(stderr, "invariant: INVARIANT_KERNEL=%s is not supported by this CPU; using %s\n",
                 env, KernelPathName(best));
    return best;
  }
  std::fprintf(stderr,
               "invariant: INVARIANT_KERNEL=%s is not one of avx512, avx2, scalar; using %s\n", env,
               KernelPathName(best));
  return best;
}

std::atomic<int>& ActivePathSlot() {
  static std::atomic<int> slot{static_cast<int>(InitialPath())};
  return slot;
}

}  // namespace

const char* KernelPathName(KernelPath path) {
  switch (path) {
    case KernelPath::kAvx512:
      return "avx512";
    case KernelPath::kAvx2:
      return "avx2";
    case KernelPath::kScalar:
      return "scalar";
  }
  return "unknown";
}

bool KernelPathSupported(KernelPath path) {
  switch (path) {
    case KernelPath::kScalar:
      return true;
#if defined(__x86_64__)
    case KernelPath::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case KernelPath::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
#endif
    default:
      return false;
  }
}

std::vector<KernelPath> SupportedKernelPaths() {
  std::vector<KernelPath> paths;
  for (KernelPath p : {KernelPath::kAvx512, KernelPath::kAvx2, KernelPath::kScalar}) {
    if (KernelPathSupported(p)) paths.push_back(p);
  }
  return paths;
}

KernelPath ActiveKernelPath() { return static_cast<KernelPath>(ActivePathSlot().load()); }

absl::Status SetKernelPath(KernelPath path) {
  if (!KernelPathSupported(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel path ", KernelPathName(path), " is not supported by this CPU"));
  }
  ActivePathSlot().store(static_cast<int>(path));
  return absl::OkStatus();
}

PackedBank PackedBank::Pack(const FloatMatrix& b) {
  PackedBank packed;
  packed.cols_ = b.rows();
  packed.dim_ = b.cols();
  const int64_t d = packed.dim_;
  const int64_t panels = (packed.cols_ + kW - 1) / kW;
  packed.panels_ = FloatMatrix::Zeros(panels, d * kW);  // padding columns stay 0
  float* dst = packed.panels_.mutable_data();
  ParallelFor(panels, [&](int64_t q) {
    const int64_t c_end = std::min(packed.cols_, (q + 1) * kW);
    for (int64_t c = q * kW; c < c_end; ++c) {
      const float* src = b.row(c);
      float* out = dst + q * d * kW + (c - q * kW);
      for (int64_t k = 0; k < d; ++k) out[k * kW] = src[k];
    }
  });
  return packed;
}

void PackedDot(const PackedBank& bank, int64_t n, const float* x, int64_t ldx, int64_t col_begin,
               int64_t col_end, float* p, int64_t ldp) {
  if (n <= 0 || col_end <= col_begin) return;
  const int64_t d = bank.dim();
  if (d == 0) {
    for (int64_t i = 0; i < n; ++i)
      std::fill(p + i * ldp, p + i * ldp + (col_end - col_begin), 0.f);
    return;
  }
  const TileTable& table = TableFor(ActiveKernelPath());
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
        table.fn[nr][np](x + i * ldx, ldx, bank.panel(q), d * kW, d, tile);
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
