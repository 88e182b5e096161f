#include "research/repro/torus/torus_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/torus_basis.h"

namespace invariant {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Best of the repetitions: the least disturbed by other processes.
double Fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

[[noreturn]] void Die(const absl::Status& st) {
  std::fprintf(stderr, "timing: %s\n", std::string(st.message()).c_str());
  std::exit(1);
}

}  // namespace

TimingRow TimeSpectralFit(const std::string& group, int32_t d,
                          const std::vector<TorusGeneratorSpec>& generators, double group_order,
                          const TimingOptions& options) {
  TimingRow row;
  row.group = group;
  row.d = d;
  row.generators = static_cast<int64_t>(generators.size());
  row.group_order = group_order;
  // Training data: x ~ U[-1,1)^d, y = (1/d) Σ i·x_i² (its value is irrelevant
  // to the time).
  Rng rng = Rng::ForStream(1, 77);
  std::vector<float> x(options.n * d), y(options.n);
  for (int64_t r = 0; r < options.n; ++r) {
    double f = 0;
    for (int32_t i = 0; i < d; ++i) {
      const double v = rng.Uniform(-1, 1);
      x[r * d + i] = static_cast<float>(v);
      f += (i + 1) * v * v;
    }
    y[r] = static_cast<float>(f / d);
  }
  int64_t budget = 0;
  for (int32_t m = 0; m <= options.level; ++m) budget += TorusEigenspaceSize(d, m);
  std::vector<double> enumerate_s, subspace_s, fit_s;
  for (int32_t rep = 0; rep < std::max(1, options.reps); ++rep) {
    auto t0 = Clock::now();
    auto basis = EnumerateTorusBasis(d, budget);
    if (!basis.ok()) Die(basis.status());
    enumerate_s.push_back(Seconds(t0));
    t0 = Clock::now();
    auto sub = ComputeInvariantSubspaces(*basis, generators);
    if (!sub.ok()) Die(sub.status());
    subspace_s.push_back(Seconds(t0));
    row.num_basis = basis->num_functions();
    row.num_invariant = sub->combination.num_features;
    row.nnz = static_cast<int64_t>(sub->combination.value.size());
    // The encoder repeats the two steps above (plus pruning); only the fit
    // on the n points is timed here.
    SpectralEncoderOptions o;
    o.dim = d;
    o.budget = budget;
    o.generators = generators;
    auto enc = SpectralEncoder::Build(o);
    if (!enc.ok()) Die(enc.status());
    t0 = Clock::now();
    auto c = FitSpecAvg(**enc, options.n, x.data(), y.data());
    if (!c.ok()) Die(c.status());
    fit_s.push_back(Seconds(t0));
  }
  row.enumerate_s = Fastest(enumerate_s);
  row.subspace_s = Fastest(subspace_s);
  row.fit_s = Fastest(fit_s);
  return row;
}

std::vector<TimingRow> TimeGroupsByDimension(const std::vector<int32_t>& dims,
                                             const TimingOptions& options) {
  std::vector<TimingRow> rows;
  for (int32_t d : dims) {
    rows.push_back(TimeSpectralFit("sign flips {±1}^d", d, AllSignFlipGenerators(d),
                                   std::pow(2.0, d), options));
    rows.push_back(TimeSpectralFit("permutations S_d (swap, cycle)", d, SymmetricGroupGenerators(d),
                                   std::tgamma(d + 1.0), options));
    std::printf("timing d=%d done\n", d);
    std::fflush(stdout);
  }
  return rows;
}

std::vector<TimingRow> TimeByGeneratorCount(int32_t d, const TimingOptions& options) {
  std::vector<TimingRow> rows;
  for (int32_t k = 1; k <= d; ++k) {
    std::vector<TorusGeneratorSpec> gens;
    for (int32_t i = 0; i < k; ++i) gens.push_back(SignFlipGenerator({i}));
    rows.push_back(TimeSpectralFit(absl::StrCat("sign flips of coordinates 1..", k), d, gens,
                                   std::pow(2.0, k), options));
  }
  rows.push_back(TimeSpectralFit("S_d from swap + cycle", d, SymmetricGroupGenerators(d),
                                 std::tgamma(d + 1.0), options));
  std::vector<TorusGeneratorSpec> adjacent;
  for (int32_t i = 0; i + 1 < d; ++i) {
    std::vector<int32_t> images(d);
    std::iota(images.begin(), images.end(), 0);
    std::swap(images[i], images[i + 1]);
    adjacent.push_back(PermutationGenerator(images));
  }
  rows.push_back(TimeSpectralFit("S_d from adjacent transpositions", d, adjacent,
                                 std::tgamma(d + 1.0), options));
  return rows;
}

}  // namespace invariant
