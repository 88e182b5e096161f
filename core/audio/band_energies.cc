#include "core/audio/band_energies.h"

#include <algorithm>
#include <cmath>

#include "core/base/kernel_path.h"  // INVARIANT_X86_SIMD, ActiveKernelPath
#include "core/base/math_constants.h"

namespace invariant::audio {
namespace {

// Filters a group runs side by side, with coefficients and state in local
// arrays the compiler keeps in vector registers (SSE2 pairs on the portable
// path, AVX2 quads on the AVX2 path); unused lanes have zero coefficients.
constexpr int kLanes = 8;

// The recurrence of band_energies.h for filters[first, first + kLanes) over
// all of x, into energies. Inlined into each path, so each is compiled for its
// own instruction set from this one text.
__attribute__((always_inline)) inline void RunGroup(absl::Span<const float> x, int64_t hop,
                                                    const std::vector<Biquad>& filters,
                                                    size_t first,
                                                    std::vector<std::vector<double>>* energies) {
  const size_t used = std::min<size_t>(kLanes, filters.size() - first);
  double b0[kLanes] = {}, b1[kLanes] = {}, b2[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {};
  for (size_t k = 0; k < used; ++k) {
    const Biquad& f = filters[first + k];
    b0[k] = f.b0, b1[k] = f.b1, b2[k] = f.b2, a1[k] = f.a1, a2[k] = f.a2;
  }
  double y1[kLanes] = {}, y2[kLanes] = {};
  double x1 = 0, x2 = 0;  // the input's history, the same for every lane
  const float* samples = x.data();
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t blocks = (n + hop - 1) / hop;
  for (int64_t b = 0; b < blocks; ++b) {
    double sum[kLanes] = {};
    const int64_t end = std::min(n, (b + 1) * hop);
    for (int64_t i = b * hop; i < end; ++i) {
      const double xi = samples[i];
      for (int k = 0; k < kLanes; ++k) {
        const double y = b0[k] * xi + b1[k] * x1 + b2[k] * x2 - a1[k] * y1[k] - a2[k] * y2[k];
        y2[k] = y1[k];
        y1[k] = y;
        sum[k] += y * y;
      }
      x2 = x1;
      x1 = xi;
    }
    for (size_t k = 0; k < used; ++k) (*energies)[first + k][static_cast<size_t>(b)] = sum[k];
  }
}

void RunGroupPortable(absl::Span<const float> x, int64_t hop, const std::vector<Biquad>& filters,
                      size_t first, std::vector<std::vector<double>>* energies) {
  RunGroup(x, hop, filters, first, energies);
}

#if INVARIANT_X86_SIMD
__attribute__((target("avx2"))) void RunGroupAvx2(absl::Span<const float> x, int64_t hop,
                                                  const std::vector<Biquad>& filters, size_t first,
                                                  std::vector<std::vector<double>>* energies) {
  RunGroup(x, hop, filters, first, energies);
}
#endif

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

std::vector<std::vector<double>> BlockEnergies(absl::Span<const float> x,
                                               const std::vector<Biquad>& filters, int64_t hop) {
  const int64_t blocks = (static_cast<int64_t>(x.size()) + hop - 1) / hop;
  std::vector<std::vector<double>> energies(filters.size(),
                                            std::vector<double>(static_cast<size_t>(blocks)));
#if INVARIANT_X86_SIMD
  const bool avx2 = ActiveKernelPath() != KernelPath::kScalar;
#endif
  for (size_t first = 0; first < filters.size(); first += kLanes) {
#if INVARIANT_X86_SIMD
    if (avx2) {
      RunGroupAvx2(x, hop, filters, first, &energies);
      continue;
    }
#endif
    RunGroupPortable(x, hop, filters, first, &energies);
  }
  return energies;
}

}  // namespace invariant::audio
