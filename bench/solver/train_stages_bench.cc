// train_stages_bench.cc (invariant-bench-train-stages): the ridge training
// job's two dense stages after featurizing, against this machine's BLAS on
// the same shapes, so that the time a stage leaves on the table is visible
// (issue 34; the featurize stage's own comparison with sgemm is
// bench/encoders/patch_bench.cc). Args are {D}, the feature count:
//   BM_GramAdd     GramAccumulator::Add of kRows float rows × D (the primal
//                  path's accumulation of ΦᵀΦ and ΦᵀY: blocks of 512 rows
//                  widened to double, dsyrk and dgemm)
//   BM_Dsyrk       cblas_dsyrk of the same rows, 512 at a time, into a D × D
//                  lower triangle (the reference BM_GramAdd is built on)
//   BM_Ssyrk       the same in float (the rate a float Gram would reach)
//   BM_BandReduce  MakeBandRidgeSolver on a D × D Gram: centring and the
//                  reduction to a band, (4/3)·D³ flops (the λ path's one
//                  factorisation; every λ after it is O(D·b²) + O(D²·T))
//   BM_Dgemm       cblas_dgemm D × D × D (the reference for the reduction)
// Each reports gflops (the flops above; a rank-k update of the lower
// triangle counts D·(D+1)·k) and the threads it used. The time a stage of
// the trainer takes at D features and N rows is then about flops / gflops:
// report the stage's rate as a fraction of the reference's. Rows are seeded
// uniform values (contents do not change the speed).
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "benchmark/benchmark.h"
#include "core/base/random.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/ridge_band.h"

namespace invariant {
namespace {

constexpr int64_t kRows = 2048;   // rows per BM_GramAdd iteration
constexpr int64_t kBlock = 512;   // GramAccumulator's rows per BLAS call
constexpr int64_t kTargets = 10;  // CIFAR-10's one-vs-all targets

// kRows seeded uniform rows of D features and kTargets targets, row-major
// floats as the trainer keeps them; one set per D for the whole run.
struct Rows {
  std::vector<float> phi, y;
};
const Rows& RowsOf(int64_t d) {
  static std::map<int64_t, std::unique_ptr<Rows>> cache;
  auto& slot = cache[d];
  if (slot) return *slot;
  slot = std::make_unique<Rows>();
  Rng rng(static_cast<uint64_t>(d));
  slot->phi.resize(static_cast<size_t>(kRows * d));
  slot->y.resize(static_cast<size_t>(kRows * kTargets));
  for (float& v : slot->phi) v = static_cast<float>(rng.Uniform());
  for (float& v : slot->y) v = static_cast<float>(rng.Uniform());
  return *slot;
}

void Report(benchmark::State& state, double flops_per_iteration) {
  state.counters["gflops"] =
      benchmark::Counter(flops_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(openblas_get_num_threads());
}

void BM_GramAdd(benchmark::State& state) {
  const int64_t d = state.range(0);
  const Rows& s = RowsOf(d);
  // One accumulator for every iteration, as the trainer adds block after block.
  auto sums = GramAccumulator::Create(d, kTargets);
  for (auto _ : state) {
    if (!sums->Add(kRows, s.phi.data(), s.y.data()).ok()) state.SkipWithError("Add failed");
    benchmark::DoNotOptimize(sums->phi_t_phi_lower().data());
  }
  Report(state, static_cast<double>(d) * (d + 1) * kRows);
}

void BM_Dsyrk(benchmark::State& state) {
  const int64_t d = state.range(0);
  const Rows& s = RowsOf(d);
  // Row-major k × D = column-major D × k: C += A·Aᵀ with A = D × k.
  const std::vector<double> a(s.phi.begin(), s.phi.begin() + kBlock * d);
  std::vector<double> c(static_cast<size_t>(d * d));
  for (auto _ : state) {
    for (int64_t start = 0; start < kRows; start += kBlock) {
      cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<blasint>(d),
                  static_cast<blasint>(kBlock), 1.0, a.data(), static_cast<blasint>(d), 1.0,
                  c.data(), static_cast<blasint>(d));
    }
    benchmark::DoNotOptimize(c.data());
  }
  Report(state, static_cast<double>(d) * (d + 1) * kRows);
}

void BM_Ssyrk(benchmark::State& state) {
  const int64_t d = state.range(0);
  const Rows& s = RowsOf(d);
  std::vector<float> c(static_cast<size_t>(d * d));
  for (auto _ : state) {
    for (int64_t start = 0; start < kRows; start += kBlock) {
      cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<blasint>(d),
                  static_cast<blasint>(kBlock), 1.0f, s.phi.data() + start * d,
                  static_cast<blasint>(d), 1.0f, c.data(), static_cast<blasint>(d));
    }
    benchmark::DoNotOptimize(c.data());
  }
  Report(state, static_cast<double>(d) * (d + 1) * kRows);
}

void BM_BandReduce(benchmark::State& state) {
  const int64_t d = state.range(0);
  const Rows& s = RowsOf(d);
  auto sums = GramAccumulator::Create(d, kTargets);
  if (!sums->Add(kRows, s.phi.data(), s.y.data()).ok()) state.SkipWithError("Add failed");
  for (auto _ : state) {
    auto solver = MakeBandRidgeSolver(*sums);
    if (!solver.ok()) state.SkipWithError("MakeBandRidgeSolver failed");
    benchmark::DoNotOptimize(solver->get());
  }
  Report(state, 4.0 / 3.0 * static_cast<double>(d) * d * d);
}

void BM_Dgemm(benchmark::State& state) {
  const int64_t d = state.range(0);
  const Rows& s = RowsOf(d);
  std::vector<double> a(static_cast<size_t>(d * d));
  for (size_t i = 0; i < a.size(); ++i) a[i] = s.phi[i % s.phi.size()];
  std::vector<double> c(a.size());
  for (auto _ : state) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(d),
                static_cast<blasint>(d), static_cast<blasint>(d), 1.0, a.data(),
                static_cast<blasint>(d), a.data(), static_cast<blasint>(d), 0.0, c.data(),
                static_cast<blasint>(d));
    benchmark::DoNotOptimize(c.data());
  }
  Report(state, 2.0 * static_cast<double>(d) * d * d);
}

// The shipped CIFAR model's 25,600 features and a quarter of them (the
// rates are those of the large-D regime from a few thousand features on).
void GramShapes(benchmark::internal::Benchmark* b) {
  b->Arg(6400)->Arg(25600)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
}
// The reduction is O(D³): 4,096 and 8,192 keep a run to a minute; the
// trainer's reduction at 25,600 is 2.2·10¹³ flops at that rate.
void SolveShapes(benchmark::internal::Benchmark* b) {
  b->Arg(4096)->Arg(8192)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
}

BENCHMARK(BM_GramAdd)->Apply(GramShapes);
BENCHMARK(BM_Dsyrk)->Apply(GramShapes);
BENCHMARK(BM_Ssyrk)->Apply(GramShapes);
BENCHMARK(BM_BandReduce)->Apply(SolveShapes);
BENCHMARK(BM_Dgemm)->Apply(SolveShapes);

}  // namespace
}  // namespace invariant

BENCHMARK_MAIN();
