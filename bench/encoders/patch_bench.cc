// patch_bench.cc (in invariant-bench-encoders): the patch encoder (core/encoders/patch_encoder.h)
// against the product it is built on, on CIFAR-10's shape.
//
// 32 × 32 × 3 images, 6 × 6 × 3 patches at stride 1 (729 positions of 108
// values), m = 1600 templates × r = 2 (the mirror) or r = 8 (the dihedral
// group D4), a 2 × 2 pooling grid, batches of 1 and 64 images. Args are
// {r, batch}:
//   BM_PatchThreshold  PatchEncoder::Encode, THRESHOLD response (Coates & Ng)
//   BM_PatchFourier    the same with the FOURIER response (sin/cos per value)
//   BM_PatchCdf        the same with the CDF response, n = 2 (5 steps per value)
//   BM_PatchPackedDot  PackedDot alone on the im2col matrix (batch·729 × 108)
//                      times the bank, row blocks of 96 × 512 columns on the
//                      pool, each tile dropped (the floor the encoder adds its
//                      im2col, responses and pooling to)
//   BM_PatchSgemm      OpenBLAS cblas_sgemm of the same product (one image's
//                      729 rows × 1600 columns per call, OpenBLAS threads =
//                      the pool's)
// Each reports images_per_second; the report is the ratio
// BM_PatchThreshold / BM_PatchPackedDot of the same args (time per image),
// and against BM_PatchSgemm. Bank and images are seeded Gaussian/uniform
// values (contents do not change the speed).
#include <cblas.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/base/kernel_path.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "core/encoders/packed_dot.h"
#include "core/encoders/patch_encoder.h"
#include "core/encoders/template_bank.h"

namespace invariant {
namespace {

constexpr int64_t kTemplates = 1600;
constexpr int64_t kMaxBatch = 64;

PatchGeometry CifarGeometry() { return PatchGeometry::Square(32, 32, 3, 6, 1, 2); }

struct Setup {
  FloatMatrix images;   // kMaxBatch × 3072, uniform in [0, 1)
  FloatMatrix patches;  // (kMaxBatch·729) × 108, their im2col
  FloatMatrix bank;     // (m·r) × 108
  PackedBank packed;
  std::unique_ptr<PatchEncoder> threshold, fourier, cdf;
};

const Setup& GetSetup(int64_t r) {
  static std::map<int64_t, std::unique_ptr<Setup>> cache;
  auto& slot = cache[r];
  if (slot) return *slot;
  slot = std::make_unique<Setup>();
  const PatchGeometry g = CifarGeometry();
  Rng rng(static_cast<uint64_t>(r));
  slot->images = FloatMatrix::Zeros(kMaxBatch, g.image_dim());
  for (int64_t i = 0; i < slot->images.size(); ++i) {
    slot->images.mutable_data()[i] = static_cast<float>(rng.Uniform());
  }
  slot->patches = FloatMatrix::Zeros(kMaxBatch * g.num_positions(), g.patch_dim());
  for (int64_t i = 0; i < kMaxBatch; ++i) {
    ExtractPatches(g, slot->images.row(i), slot->patches.mutable_row(i * g.num_positions()));
  }
  slot->bank = FloatMatrix::Zeros(kTemplates * r, g.patch_dim());
  for (int64_t i = 0; i < slot->bank.size(); ++i) {
    slot->bank.mutable_data()[i] = static_cast<float>(0.1 * rng.Normal());
  }
  slot->packed = PackedBank::Pack(slot->bank);
  const TemplateBank bank = *TemplateBank::FromRows(slot->bank, kTemplates, r);
  PatchOptions o;
  o.geometry = g;
  o.response = PatchResponse::kThreshold;
  o.threshold = 0.25;
  o.normalize_patches = true;
  const std::vector<float> bias(kTemplates, 0.0f);
  slot->threshold = std::move(*PatchEncoder::Create(o, Projector::OverBank(bank), bias));
  o.response = PatchResponse::kFourier;
  slot->fourier = std::move(*PatchEncoder::Create(o, Projector::OverBank(bank), bias));
  o.response = PatchResponse::kCdf;  // n = 2, mnist_patch_cdf's
  o.num_bins = 2;
  o.range = 1.0;
  slot->cdf = std::move(*PatchEncoder::Create(o, Projector::OverBank(bank), bias));
  return *slot;
}

void Report(benchmark::State& state, int64_t batch) {
  state.counters["images_per_second"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(DefaultThreadCount());
}

void RunEncoder(benchmark::State& state, PatchResponse response) {
  const int64_t r = state.range(0), batch = state.range(1);
  const Setup& s = GetSetup(r);
  const PatchEncoder& e = response == PatchResponse::kFourier ? *s.fourier
                          : response == PatchResponse::kCdf   ? *s.cdf
                                                              : *s.threshold;
  std::vector<float> out(static_cast<size_t>(batch * e.d_out()));
  for (auto _ : state) {
    e.Encode(batch, s.images.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state, batch);
  state.SetLabel(KernelPathName(ActiveKernelPath()));
}

void BM_PatchThreshold(benchmark::State& state) { RunEncoder(state, PatchResponse::kThreshold); }
void BM_PatchFourier(benchmark::State& state) { RunEncoder(state, PatchResponse::kFourier); }
void BM_PatchCdf(benchmark::State& state) { RunEncoder(state, PatchResponse::kCdf); }

void BM_PatchPackedDot(benchmark::State& state) {
  const int64_t r = state.range(0), batch = state.range(1);
  const Setup& s = GetSetup(r);
  const int64_t rows = batch * CifarGeometry().num_positions();
  const int64_t d = s.patches.cols(), cols = s.packed.cols();
  constexpr int64_t kRows = 96, kCols = 512;
  const int64_t row_blocks = (rows + kRows - 1) / kRows;
  const int64_t col_blocks = (cols + kCols - 1) / kCols;
  std::vector<float> keep(static_cast<size_t>(row_blocks * col_blocks));
  for (auto _ : state) {
    ParallelFor(row_blocks * col_blocks, [&](int64_t task) {
      const int64_t row0 = (task / col_blocks) * kRows;
      const int64_t c0 = (task % col_blocks) * kCols;
      const int64_t nr = std::min(kRows, rows - row0), nc = std::min(kCols, cols - c0);
      thread_local std::vector<float> tile;
      tile.resize(static_cast<size_t>(kRows * kCols));
      PackedDot(s.packed, nr, s.patches.row(row0), d, c0, c0 + nc, tile.data(), nc);
      keep[static_cast<size_t>(task)] = tile[0];
    });
    benchmark::DoNotOptimize(keep.data());
    benchmark::ClobberMemory();
  }
  Report(state, batch);
  state.SetLabel(KernelPathName(ActiveKernelPath()));
}

void BM_PatchSgemm(benchmark::State& state) {
  const int64_t r = state.range(0), batch = state.range(1);
  const Setup& s = GetSetup(r);
  const int64_t positions = CifarGeometry().num_positions();
  const int64_t d = s.patches.cols(), cols = s.bank.rows();
  constexpr int64_t kCols = 1600;
  openblas_set_num_threads(DefaultThreadCount());
  std::vector<float> p(static_cast<size_t>(positions * kCols));
  for (auto _ : state) {
    for (int64_t i = 0; i < batch; ++i) {
      for (int64_t c0 = 0; c0 < cols; c0 += kCols) {
        const int64_t nc = std::min(kCols, cols - c0);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(positions),
                    static_cast<blasint>(nc), static_cast<blasint>(d), 1.0f,
                    s.patches.row(i * positions), static_cast<blasint>(d), s.bank.row(c0),
                    static_cast<blasint>(d), 0.0f, p.data(), static_cast<blasint>(nc));
      }
    }
    benchmark::DoNotOptimize(p.data());
    benchmark::ClobberMemory();
  }
  Report(state, batch);
  state.counters["threads"] = static_cast<double>(openblas_get_num_threads());
  state.SetLabel(openblas_get_corename());
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t r : {2, 8}) {
    for (int64_t batch : {1, 64}) b->Args({r, batch});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_PatchPackedDot)->Apply(Shapes);
BENCHMARK(BM_PatchSgemm)->Apply(Shapes);
BENCHMARK(BM_PatchThreshold)->Apply(Shapes);
BENCHMARK(BM_PatchFourier)->Apply(Shapes);
BENCHMARK(BM_PatchCdf)->Apply(Shapes);

}  // namespace
}  // namespace invariant
