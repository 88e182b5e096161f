// invariant-bench-encoders: the encoders' hot path against its references.
//
// MNIST-sized inputs (d = 784), batches of 1, 16, 64, 256 rows, banks of
// 10⁴ and 10⁵ rows (m = 100 or 1000 templates × r = 100 group elements).
// References in the same run, same shapes:
//   BM_SgemmAllCores  bare OpenBLAS cblas_sgemm, P = X · Bankᵀ, all cores
//   BM_Sgemm          the same with OpenBLAS threads = the pool's threads
//   BM_PackedDot      the batch-independent packed kernel alone, on the pool
//   BM_PackedDotBf16  the same with the bank stored as bf16
//   BM_ReadBank       one pass reading the bank with all pool threads (the
//                     batch-1 floor)
// then every encoder: CDF, random Fourier (float and bf16 bank), Nyström, a
// second layer on the random Fourier map, and a chain preprocess → CDF.
// The shipped fashion model's shape (random Fourier, s = 1000 frequencies ×
// r = 32 stratified rotations of 28 × 28 images) in both placements, with
// the same elements: BM_FashionTemplates (a 32,000 × 784 bank, 100 MB) and
// BM_FashionInput (1000 × 784 templates, the rotations applied to each
// input by an OrbitOperator), plus BM_FashionTemplatesBf16. Every benchmark reports
// rows_per_second (and threads); ratios of those are the report. The kernel
// path is the label of BM_PackedDot (INVARIANT_KERNEL selects it).
// Bank contents do not matter for speed, so banks are seeded Gaussian rows.
#include <cblas.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/base/kernel_path.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/chain_encoder.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/packed_dot.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/random_fourier_encoder.h"
#include "core/encoders/second_layer_encoder.h"
#include "core/encoders/templates.h"
#include "core/groups/group_factory.h"

namespace invariant {
namespace {

constexpr int64_t kDim = 784;
constexpr int64_t kGroupElements = 100;
constexpr int64_t kSecondLayerFeatures = 1000;

struct Setup {
  FloatMatrix inputs;  // 256 × 784 unit rows
  TemplateBank bank;   // (m·r) × 784
  PackedBank packed;   // the bank packed for BM_PackedDot
  PackedBank packed_bf16;
  std::shared_ptr<const Encoder> cdf;
  std::shared_ptr<const Encoder> rf;
  std::shared_ptr<const Encoder> rf_bf16;
  std::shared_ptr<const Encoder> nystrom;
  std::shared_ptr<const Encoder> second_layer;
  std::shared_ptr<const Encoder> chain;
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
  slot->packed = PackedBank::Pack(slot->bank.rows());
  slot->packed_bf16 = PackedBank::Pack(slot->bank.rows(), BankDtype::kBfloat16);
  const Projector projector = Projector::OverBank(slot->bank);
  CdfOptions cdf;
  cdf.num_bins = 25;
  cdf.range = 1.1;
  slot->cdf = std::move(*CdfEncoder::Create(cdf, projector));
  slot->rf = std::move(*RandomFourierEncoder::Create({0.1}, projector));
  slot->rf_bf16 = std::move(
      *RandomFourierEncoder::Create({0.1}, Projector::OverBank(slot->bank, BankDtype::kBfloat16)));
  NystromOptions nystrom;
  nystrom.sigma = 10.0;
  const FloatMatrix landmarks = *SampleSphereTemplates(m, kDim, rng);
  slot->nystrom = std::move(
      *NystromEncoder::Create(nystrom, projector, *ComputeNystromProjection(landmarks, nystrom)));
  FloatMatrix w = *SampleGaussianTemplates(kSecondLayerFeatures, slot->rf->d_out(), 1.0, rng);
  slot->second_layer = std::move(*SecondLayerEncoder::Create({1.0, 1}, slot->rf, w));
  std::shared_ptr<const Encoder> pre =
      std::move(*PreprocessEncoder::Create({false, false, true}, kDim, {}, {}));
  slot->chain = std::move(*ChainEncoder::Create({pre, slot->cdf}));
  return *slot;
}

void Report(benchmark::State& state, int64_t batch, const Setup& s) {
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bank_bytes"] = static_cast<double>(s.bank.rows().bytes());
  state.counters["threads"] = static_cast<double>(DefaultThreadCount());
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
void BM_RandomFourierBf16(benchmark::State& state) {
  RunEncoder(state, [](const Setup& s) -> const Encoder& { return *s.rf_bf16; });
}
void BM_Nystrom(benchmark::State& state) {
  RunEncoder(state, [](const Setup& s) -> const Encoder& { return *s.nystrom; });
}
void BM_SecondLayer(benchmark::State& state) {
  RunEncoder(state, [](const Setup& s) -> const Encoder& { return *s.second_layer; });
}
void BM_ChainPreprocessCdf(benchmark::State& state) {
  RunEncoder(state, [](const Setup& s) -> const Encoder& { return *s.chain; });
}

void RunSgemm(benchmark::State& state, int threads) {
  const int64_t bank_rows = state.range(0);
  const int64_t batch = state.range(1);
  const Setup& s = GetSetup(bank_rows);
  openblas_set_num_threads(threads);
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
  state.counters["threads"] = static_cast<double>(openblas_get_num_threads());
  state.SetLabel(openblas_get_corename());
}

void BM_SgemmAllCores(benchmark::State& state) {
  RunSgemm(state, std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
}
void BM_Sgemm(benchmark::State& state) { RunSgemm(state, DefaultThreadCount()); }

void RunPackedDot(benchmark::State& state, const PackedBank& (*pick)(const Setup&)) {
  const int64_t bank_rows = state.range(0);
  const int64_t batch = state.range(1);
  const Setup& s = GetSetup(bank_rows);
  std::vector<float> p(static_cast<size_t>(batch * bank_rows));
  for (auto _ : state) {
    ParallelPackedDot(pick(s), batch, s.inputs.data(), p.data(), bank_rows);
    benchmark::DoNotOptimize(p.data());
    benchmark::ClobberMemory();
  }
  Report(state, batch, s);
  state.SetLabel(KernelPathName(ActiveKernelPath()));
}

void BM_PackedDot(benchmark::State& state) {
  RunPackedDot(state, [](const Setup& s) -> const PackedBank& { return s.packed; });
}
void BM_PackedDotBf16(benchmark::State& state) {
  RunPackedDot(state, [](const Setup& s) -> const PackedBank& { return s.packed_bf16; });
}

// Reads every float of the packed bank once, split over the pool threads
// (the floor for a batch of one row).
void BM_ReadBank(benchmark::State& state) {
  const Setup& s = GetSetup(state.range(0));
  const PackedBank& bank = s.packed;
  const int64_t panel_floats = bank.dim() * PackedBank::kPanelWidth;
  constexpr int64_t kPanelsPerTask = 32;
  const int64_t tasks = (bank.num_panels() + kPanelsPerTask - 1) / kPanelsPerTask;
  std::vector<float> sums(static_cast<size_t>(tasks));
  for (auto _ : state) {
    ParallelFor(tasks, [&](int64_t t) {
      float acc[32] = {};
      const int64_t end = std::min(bank.num_panels(), (t + 1) * kPanelsPerTask);
      for (int64_t q = t * kPanelsPerTask; q < end; ++q) {
        const float* data = bank.panel(q);
        for (int64_t i = 0; i < panel_floats; i += 32) {
          for (int l = 0; l < 32; ++l) acc[l] += data[i + l];
        }
      }
      float total = 0.0f;
      for (float a : acc) total += a;
      sums[static_cast<size_t>(t)] = total;
    });
    benchmark::DoNotOptimize(sums.data());
    benchmark::ClobberMemory();
  }
  state.counters["bytes_per_second"] = benchmark::Counter(
      static_cast<double>(bank.bytes()), benchmark::Counter::kIsIterationInvariantRate);
  Report(state, 1, s);
}

// The fashion model's shape in both placements (same frequencies, same r
// elements).
struct FashionSetup {
  FloatMatrix inputs;  // 256 × 784 unit rows
  std::shared_ptr<const Encoder> on_templates, on_templates_bf16, on_input;
};

const FashionSetup& GetFashion() {
  static const FashionSetup* setup = [] {
    auto* f = new FashionSetup();
    Rng rng(28);
    f->inputs = *SampleSphereTemplates(256, kDim, rng);
    v1::GroupSpec spec;
    v1::ImageTransformGroup* img = spec.mutable_image();
    img->set_height(28);
    img->set_width(28);
    img->set_channels(1);
    img->mutable_rotation()->mutable_uniform()->set_high(6.283185307179586);
    img->set_stratified_rotation(true);
    std::shared_ptr<const GroupDistribution> q(std::move(*MakeGroupDistribution(spec)));
    const FloatMatrix freqs = *SampleGaussianTemplates(1000, kDim, 0.4, rng);
    const std::vector<GroupElement> turns = *DrawGroupElements(*q, 32, false, rng);
    const TemplateBank bank = *TemplateBank::Build(freqs, q->action(), turns);
    f->on_templates = std::move(*RandomFourierEncoder::Create({0.4}, Projector::OverBank(bank)));
    f->on_templates_bf16 = std::move(
        *RandomFourierEncoder::Create({0.4}, Projector::OverBank(bank, BankDtype::kBfloat16)));
    f->on_input = std::move(
        *RandomFourierEncoder::Create({0.4}, *Projector::OverInputOrbit(freqs, q, turns)));
    return f;
  }();
  return *setup;
}

void RunFashion(benchmark::State& state, const Encoder& (*pick)(const FashionSetup&)) {
  const int64_t batch = state.range(0);
  const FashionSetup& f = GetFashion();
  const Encoder& encoder = pick(f);
  std::vector<float> out(static_cast<size_t>(batch * encoder.d_out()));
  for (auto _ : state) {
    encoder.Encode(batch, f.inputs.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bank_bytes"] = static_cast<double>(encoder.parameter_bytes());
  state.counters["threads"] = static_cast<double>(DefaultThreadCount());
}

void BM_FashionTemplates(benchmark::State& state) {
  RunFashion(state, [](const FashionSetup& f) -> const Encoder& { return *f.on_templates; });
}
void BM_FashionTemplatesBf16(benchmark::State& state) {
  RunFashion(state, [](const FashionSetup& f) -> const Encoder& { return *f.on_templates_bf16; });
}
void BM_FashionInput(benchmark::State& state) {
  RunFashion(state, [](const FashionSetup& f) -> const Encoder& { return *f.on_input; });
}

void FashionShapes(benchmark::internal::Benchmark* b) {
  for (int64_t batch : {1, 16, 64, 256}) b->Arg(batch);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t bank_rows : {10000, 100000}) {
    for (int64_t batch : {1, 16, 64, 256}) b->Args({bank_rows, batch});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_ReadBank)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SgemmAllCores)->Apply(Shapes);
BENCHMARK(BM_Sgemm)->Apply(Shapes);
BENCHMARK(BM_PackedDot)->Apply(Shapes);
BENCHMARK(BM_PackedDotBf16)->Apply(Shapes);
BENCHMARK(BM_Cdf)->Apply(Shapes);
BENCHMARK(BM_RandomFourier)->Apply(Shapes);
BENCHMARK(BM_RandomFourierBf16)->Apply(Shapes);
BENCHMARK(BM_Nystrom)->Apply(Shapes);
BENCHMARK(BM_SecondLayer)->Apply(Shapes);
BENCHMARK(BM_ChainPreprocessCdf)->Apply(Shapes);
BENCHMARK(BM_FashionTemplates)->Apply(FashionShapes);
BENCHMARK(BM_FashionTemplatesBf16)->Apply(FashionShapes);
BENCHMARK(BM_FashionInput)->Apply(FashionShapes);

}  // namespace
}  // namespace invariant

BENCHMARK_MAIN();
