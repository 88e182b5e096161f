#include "core/audio/band_energies.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/base/kernel_path.h"  // INVARIANT_X86_SIMD, ActiveKernelPath
#include "core/base/math_constants.h"

namespace invariant::audio {
namespace {

using Energies = std::vector<std::vector<double>>;

// One pass: filters a group runs side by side, with coefficients and state in
// local arrays the compiler keeps in vector registers (two SSE2 registers on
// the portable path, one AVX2 register on the AVX2 path); unused lanes have
// zero coefficients.
constexpr int kLanes = 8;
// Runs of blocks side by side (band_energies.h).
constexpr int kRuns = 8;
// Runs side by side: the runs are the lanes, a pass carries up to kMaxGroup
// filters (more spill the state out of the 16 vector registers).
constexpr int kMaxGroup = 4;
// A run's warm-up ends when the slowest pole has decayed to this (a float's
// rounding is 6·10^−8).
constexpr double kForgotten = 1e-9;

// A filter's output history.
struct FilterState {
  float y1 = 0, y2 = 0;
};

// The filter's coefficients as the recurrence uses them.
struct Coefficients {
  float b0, b1, b2, a1, a2;
};
Coefficients Rounded(const Biquad& f) {
  return {static_cast<float>(f.b0), static_cast<float>(f.b1), static_cast<float>(f.b2),
          static_cast<float>(f.a1), static_cast<float>(f.a2)};
}

// The recurrence of band_energies.h for filters[first, first + kLanes) over
// blocks [begin_block, ⌈|x| / hop⌉) of x, from `state` (indexed like filters,
// updated) and the samples before the first block. Inlined into each path, so
// each is compiled for its own instruction set from this one text.
__attribute__((always_inline)) inline void RunGroup(absl::Span<const float> x, int64_t hop,
                                                    const std::vector<Biquad>& filters,
                                                    size_t first, int64_t begin_block,
                                                    std::vector<FilterState>* state,
                                                    Energies* energies) {
  const size_t used = std::min<size_t>(kLanes, filters.size() - first);
  float b0[kLanes] = {}, b1[kLanes] = {}, b2[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {};
  float y1[kLanes] = {}, y2[kLanes] = {};
  for (size_t k = 0; k < used; ++k) {
    const Coefficients f = Rounded(filters[first + k]);
    b0[k] = f.b0, b1[k] = f.b1, b2[k] = f.b2, a1[k] = f.a1, a2[k] = f.a2;
    y1[k] = (*state)[first + k].y1, y2[k] = (*state)[first + k].y2;
  }
  const float* samples = x.data();
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t begin = begin_block * hop;
  float x1 = begin >= 1 ? samples[begin - 1] : 0.0f;  // the input's history, every lane's
  float x2 = begin >= 2 ? samples[begin - 2] : 0.0f;
  const int64_t blocks = (n + hop - 1) / hop;
  for (int64_t b = begin_block; b < blocks; ++b) {
    float sum[kLanes] = {};
    const int64_t end = std::min(n, (b + 1) * hop);
    for (int64_t i = b * hop; i < end; ++i) {
      const float xi = samples[i];
      for (int k = 0; k < kLanes; ++k) {
        const float y = b0[k] * xi + b1[k] * x1 + b2[k] * x2 - a1[k] * y1[k] - a2[k] * y2[k];
        y2[k] = y1[k];
        y1[k] = y;
        sum[k] += y * y;
      }
      x2 = x1;
      x1 = xi;
    }
    for (size_t k = 0; k < used; ++k) (*energies)[first + k][static_cast<size_t>(b)] = sum[k];
  }
  for (size_t k = 0; k < used; ++k) (*state)[first + k] = {y1[k], y2[k]};
}

// Runs side by side (band_energies.h): step i of run c is sample
// c·blocks·hop − warm + i, 0 before x; the first `warm` steps are not summed.
struct Runs {
  std::unique_ptr<float[]> steps;  // (warm + blocks·hop) × kRuns, step-major
  int64_t warm = 0, blocks = 0, hop = 1;
};

// The runs' lanes: one sample (or state) of each run. GCC's vector extension:
// element-wise IEEE arithmetic, one AVX2 register on the AVX2 path, two SSE2
// (or NEON) registers on the portable one; the same bits on both.
typedef float RunLanes __attribute__((vector_size(kRuns * sizeof(float))));

// filters[first, first + G) over the runs from zero state (the lanes are runs):
// block j of run c into energies[·][c·blocks + j]; the last run's final state
// into state[first + ·].
template <int G>
__attribute__((always_inline)) inline void RunPass(const Runs& runs,
                                                   const std::vector<Biquad>& filters, size_t first,
                                                   std::vector<FilterState>* state,
                                                   Energies* energies) {
  RunLanes b0[G], b1[G], b2[G], a1[G], a2[G], y1[G], y2[G], sum[G];
  for (int g = 0; g < G; ++g) {  // each coefficient in every lane (c − 0 is c, −0 too)
    const Coefficients f = Rounded(filters[first + g]);
    b0[g] = f.b0 - RunLanes{}, b1[g] = f.b1 - RunLanes{}, b2[g] = f.b2 - RunLanes{};
    a1[g] = f.a1 - RunLanes{}, a2[g] = f.a2 - RunLanes{};
    y1[g] = RunLanes{}, y2[g] = RunLanes{}, sum[g] = RunLanes{};
  }
  RunLanes x1{}, x2{};
  const float* step = runs.steps.get();
  const int64_t steps = runs.warm + runs.blocks * runs.hop;
  bool warming = runs.warm > 0;  // the warm-up is not summed
  int64_t left = warming ? runs.warm : runs.hop, block = 0;
  for (int64_t i = 0; i < steps; ++i, step += kRuns) {
    RunLanes xi;
    __builtin_memcpy(&xi, step, sizeof xi);
    for (int g = 0; g < G; ++g) {
      const RunLanes y = b0[g] * xi + b1[g] * x1 + b2[g] * x2 - a1[g] * y1[g] - a2[g] * y2[g];
      y2[g] = y1[g];
      y1[g] = y;
      sum[g] += y * y;
    }
    x2 = x1;
    x1 = xi;
    if (--left > 0) continue;
    for (int g = 0; g < G; ++g) {
      for (int c = 0; !warming && c < kRuns; ++c) {
        (*energies)[first + g][static_cast<size_t>(c * runs.blocks + block)] = sum[g][c];
      }
      sum[g] = RunLanes{};
    }
    block += warming ? 0 : 1;
    warming = false;
    left = runs.hop;
  }
  for (int g = 0; g < G; ++g) (*state)[first + g] = {y1[g][kRuns - 1], y2[g][kRuns - 1]};
}

// One pass of G filters, compiled for each path on its own (inlined into one
// function, the passes' register allocation interfered: 1.5× slower).
using PassFn = void (*)(const Runs&, const std::vector<Biquad>&, size_t, std::vector<FilterState>*,
                        Energies*);

template <int G>
void PassPortable(const Runs& runs, const std::vector<Biquad>& filters, size_t first,
                  std::vector<FilterState>* state, Energies* energies) {
  RunPass<G>(runs, filters, first, state, energies);
}
constexpr PassFn kPortablePasses[kMaxGroup + 1] = {nullptr, PassPortable<1>, PassPortable<2>,
                                                   PassPortable<3>, PassPortable<4>};

void RunGroupPortable(absl::Span<const float> x, int64_t hop, const std::vector<Biquad>& filters,
                      size_t first, int64_t begin_block, std::vector<FilterState>* state,
                      Energies* energies) {
  RunGroup(x, hop, filters, first, begin_block, state, energies);
}

#if INVARIANT_X86_SIMD
template <int G>
__attribute__((target("avx2"))) void PassAvx2(const Runs& runs, const std::vector<Biquad>& filters,
                                              size_t first, std::vector<FilterState>* state,
                                              Energies* energies) {
  RunPass<G>(runs, filters, first, state, energies);
}
constexpr PassFn kAvx2Passes[kMaxGroup + 1] = {nullptr, PassAvx2<1>, PassAvx2<2>, PassAvx2<3>,
                                               PassAvx2<4>};

__attribute__((target("avx2"))) void RunGroupAvx2(absl::Span<const float> x, int64_t hop,
                                                  const std::vector<Biquad>& filters, size_t first,
                                                  int64_t begin_block,
                                                  std::vector<FilterState>* state,
                                                  Energies* energies) {
  RunGroup(x, hop, filters, first, begin_block, state, energies);
}
#endif

// Every pass of the runs: near-equal groups of at most kMaxGroup filters.
void RunAllPasses(const Runs& runs, const std::vector<Biquad>& filters, const PassFn* passes,
                  std::vector<FilterState>* state, Energies* energies) {
  const size_t count = (filters.size() + kMaxGroup - 1) / kMaxGroup;
  for (size_t p = 0, first = 0; p < count; ++p) {
    const size_t group = (filters.size() - first) / (count - p);
    passes[group](runs, filters, first, state, energies);
    first += group;
  }
}

bool UseVectorPath() {
#if INVARIANT_X86_SIMD
  return ActiveKernelPath() != KernelPath::kScalar;
#else
  return false;
#endif
}

// The runs' samples (see Runs), written a step at a time. Only run 0 starts
// before x (BlocksPerRun keeps warm ≤ blocks·hop): its warm-up is zeros.
Runs MakeRuns(absl::Span<const float> x, int64_t hop, int64_t warm, int64_t blocks_per_run) {
  const int64_t steps = warm + blocks_per_run * hop, stride = blocks_per_run * hop;
  Runs runs{std::unique_ptr<float[]>(new float[static_cast<size_t>(steps * kRuns)]), warm,
            blocks_per_run, hop};
  const float* from = x.data() - warm;  // run c's step i: from[c·stride + i]
  float* out = runs.steps.get();
  for (int64_t i = 0; i < steps; ++i, out += kRuns) {
    out[0] = i >= warm ? from[i] : 0.0f;
    for (int c = 1; c < kRuns; ++c) out[c] = from[c * stride + i];
  }
  return runs;
}

}  // namespace

std::vector<Biquad> DetectorFilters(double high_pass_hz, int rate) {
  std::vector<Biquad> filters;
  {  // RBJ's high-pass, Q = 1/√2
    const double w0 = 2 * kPi * high_pass_hz / rate, alpha = std::sin(w0) / std::sqrt(2.0);
    const double c = std::cos(w0), a0 = 1 + alpha;
    filters.push_back(
        {(1 + c) / 2 / a0, -(1 + c) / a0, (1 + c) / 2 / a0, -2 * c / a0, (1 - alpha) / a0});
  }
  // RBJ's band-pass of one octave, 0 dB at the centre.
  for (double centre = 2 * high_pass_hz; centre < 0.45 * rate; centre *= 2) {
    const double w0 = 2 * kPi * centre / rate, s = std::sin(w0);
    const double alpha = s * std::sinh(std::log(2.0) / 2 * 1.0 * w0 / s);
    const double a0 = 1 + alpha;
    filters.push_back({alpha / a0, 0, -alpha / a0, -2 * std::cos(w0) / a0, (1 - alpha) / a0});
  }
  return filters;
}

int64_t WarmUpSamples(const std::vector<Biquad>& filters) {
  double slowest = 0;  // the largest pole magnitude: roots of z² + a1·z + a2
  for (const Biquad& f : filters) {
    const double disc = f.a1 * f.a1 - 4 * f.a2;
    const double r = disc < 0 ? std::sqrt(f.a2)
                              : (std::abs(f.a1) + std::sqrt(disc)) / 2;  // the larger real root
    slowest = std::max(slowest, r);
  }
  if (!(slowest < 1)) return -1;
  if (slowest == 0) return 2;
  return static_cast<int64_t>(std::ceil(std::log(kForgotten) / std::log(slowest))) + 2;
}

int64_t BlocksPerRun(const std::vector<Biquad>& filters, int64_t samples, int64_t hop) {
  const int64_t warm = WarmUpSamples(filters);
  const int64_t per_run = samples / hop / kRuns;  // whole blocks
  if (warm < 0 || per_run == 0 || warm > per_run * hop) return 0;
  return per_run;
}

Energies BlockEnergies(absl::Span<const float> x, const std::vector<Biquad>& filters, int64_t hop) {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t blocks = (n + hop - 1) / hop;
  Energies energies(filters.size(), std::vector<double>(static_cast<size_t>(blocks)));
  std::vector<FilterState> state(filters.size());
  const bool vector_path = UseVectorPath();
  const int64_t per_run = BlocksPerRun(filters, n, hop);
  if (per_run > 0) {
    const Runs runs = MakeRuns(x, hop, WarmUpSamples(filters), per_run);
#if INVARIANT_X86_SIMD
    const PassFn* passes = vector_path ? kAvx2Passes : kPortablePasses;
#else
    const PassFn* passes = kPortablePasses;
#endif
    RunAllPasses(runs, filters, passes, &state, &energies);
  }
  // The blocks after the runs (all of them when there are none), serially.
  for (size_t first = 0; first < filters.size(); first += kLanes) {
    if (vector_path) {
#if INVARIANT_X86_SIMD
      RunGroupAvx2(x, hop, filters, first, kRuns * per_run, &state, &energies);
#endif
    } else {
      RunGroupPortable(x, hop, filters, first, kRuns * per_run, &state, &energies);
    }
  }
  return energies;
}

}  // namespace invariant::audio
