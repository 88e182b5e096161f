// invariant-bench-encoders: the encoders' hot path against its references.
//
// MNIST-sized inputs (d = 784), batches of 1, 16, 64, 256 rows, banks of
// 10⁴ and 10⁵ rows (m = 100 or 1000 templates × r = 100 group elements).
// References in the same run, same shapes:
//   BM_Sgemm        bare OpenBLAS cblas_sgemm, P = X · Bankᵀ (multi-threaded)
//   BM_Dot          the batch-independent kernel alone (dot_kernel.h)
//   BM_ReadBank     one pass reading the bank from memory (batch-1 floor)
// Every benchmark reports rows_per_second; ratios of those are the report.
// Bank contents do not matter for speed, so banks are seeded Gaussian rows.
#include <cblas.h>

#include <map>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/base/random.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/dot_kernel.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/random_fourier_encoder.h"
#include "core/encoders/templates.h"

namespace invariant {
namespace {

constexpr int64_t kDim = 784;
constexpr int64_t kGroupElements = 100;

struct Setup {
  FloatMatrix inputs;  // 256 × 784 unit rows
  TemplateBank bank;   // (m·r) × 784
  std::unique_ptr<CdfEncoder> cdf;
  std::unique_ptr<RandomFourierEncoder> rf;
  std::unique_ptr<NystromEncoder> nystrom;
};

const Setup& GetSetup(int64_t bank_rows) {
  static std::map<int64_t, std::unique_ptr<Setup>> cache;
  auto& slot = cache[bank_rows];
  if (slot) return *slot;
  slot = std::make_unique<Setup>();
  const int64_t m = bank_rows / kGroupElements;
  Rng rng(bank_rows);
  slot->inputs = *SampleSphereTemplates(256, kDim, rng);
  FloatMatrix rows = *SampleGaussianTemplates(bank_rows, kDim, 10.0, rng);
  slot->bank = *TemplateBank::FromRows(rows, m, kGroupElements);
  const Projector projector = Projector::OverBank(slot->bank);
  CdfOptions cdf;
  cdf.num_bins = 25;
  cdf.range = 1.1;
  slot->cdf = std::move(*CdfEncoder::Create(cdf, projector));
  slot->rf = std::move(*RandomFourierEncoder::Create({0.1}, projector));
  NystromOptions nystrom;
  nystrom.sigma = 10.0;
  const FloatMatrix landmarks = *SampleSphereTemplates(m, kDim, rng);
  slot->nystrom = std::move(
      *NystromEncoder::Create(nystrom, projector, *ComputeNystromProjection(landmarks, nystrom)));
  return *slot;
}

void Report(benchmark::State& state, int64_t batch, const Setup& s) {
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bank_bytes"] = static_cast<double>(s.bank.rows().bytes());
}

void RunEncoder(benchmark::State& state, const Encoder& (*pick)(const Setup&)) {
  const int64_t bank_rows = state.range(0);
  const int64_t batch = state.range(1);
  const Setup& s = GetSetup(bank_rows);
  const Encoder& encoder = pick(s);
  std::vector<float> out(static_cast<size_t>(batch * encoder.d_out()));
  for (auto _ : state) {
    encoder.Encode(batch, s.inputs.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state, batch, s);
}

void BM_Cdf(benchmark::State& state) {
  RunEncoder(state, [](const Setup& s) -> const Encoder& { return *s.cdf; });
}
void BM_RandomFourier(benchmark::State& state) {
  RunEncoder(state, [](const Setup& s) -> const Encoder& { return *s.rf; });
}
void BM_Nystrom(benchmark::State& state) {
  RunEncoder(state, [](const Setup& s) -> const Encoder& { return *s.nystrom; });
}

void BM_Sgemm(benchmark::State& state) {
  const int64_t bank_rows = state.range(0);
  const int64_t batch = state.range(1);
  const Setup& s = GetSetup(bank_rows);
  std::vector<float> p(static_cast<size_t>(batch * bank_rows));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(batch),
                static_cast<blasint>(bank_rows), static_cast<blasint>(kDim), 1.0f, s.inputs.data(),
                static_cast<blasint>(kDim), s.bank.rows().data(), static_cast<blasint>(kDim), 0.0f,
                p.data(), static_cast<blasint>(bank_rows));
    benchmark::DoNotOptimize(p.data());
    benchmark::ClobberMemory();
  }
  Report(state, batch, s);
  state.SetLabel(openblas_get_corename());
}

void BM_Dot(benchmark::State& state) {
  const int64_t bank_rows = state.range(0);
  const int64_t batch = state.range(1);
  const Setup& s = GetSetup(bank_rows);
  std::vector<float> p(static_cast<size_t>(batch * bank_rows));
  for (auto _ : state) {
    BatchIndependentDot(batch, s.inputs.data(), kDim, bank_rows, s.bank.rows().data(), p.data(),
                        bank_rows);
    benchmark::DoNotOptimize(p.data());
    benchmark::ClobberMemory();
  }
  Report(state, batch, s);
  state.SetLabel(BatchIndependentDotIsa());
}

// Reads every float of the bank once (the floor for a batch of one row).
void BM_ReadBank(benchmark::State& state) {
  const Setup& s = GetSetup(state.range(0));
  const float* data = s.bank.rows().data();
  const int64_t n = s.bank.rows().size();
  for (auto _ : state) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t i = 0; i + 8 <= n; i += 8) {
      for (int l = 0; l < 8; ++l) acc[l] += data[i + l];
    }
    benchmark::DoNotOptimize(acc);
  }
  state.counters["bytes_per_second"] = benchmark::Counter(
      static_cast<double>(s.bank.rows().bytes()), benchmark::Counter::kIsIterationInvariantRate);
  Report(state, 1, s);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t bank_rows : {10000, 100000}) {
    for (int64_t batch : {1, 16, 64, 256}) b->Args({bank_rows, batch});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_ReadBank)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sgemm)->Apply(Shapes);
BENCHMARK(BM_Dot)->Apply(Shapes);
BENCHMARK(BM_Cdf)->Apply(Shapes);
BENCHMARK(BM_RandomFourier)->Apply(Shapes);
BENCHMARK(BM_Nystrom)->Apply(Shapes);

}  // namespace
}  // namespace invariant

BENCHMARK_MAIN();
