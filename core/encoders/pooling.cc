#include "core/encoders/pooling.h"

#include <cmath>
#include <limits>

namespace invariant {

std::vector<float> CdfThresholds(int64_t num_bins, double range) {
  std::vector<float> t(static_cast<size_t>(2 * num_bins + 1));
  for (int64_t k = -num_bins; k <= num_bins; ++k) {
    t[static_cast<size_t>(k + num_bins)] =
        static_cast<float>(range * static_cast<double>(k) / static_cast<double>(num_bins));
  }
  return t;
}

void PoolCdf(const float* p, int64_t r, const std::vector<float>& thresholds, int32_t* counts,
             float* out) {
  const int64_t bins = static_cast<int64_t>(thresholds.size());  // 2n + 1
  const int64_t n = (bins - 1) / 2;
  const float scale = static_cast<float>(n) / thresholds[static_cast<size_t>(bins - 1)];
  for (int64_t b = 0; b <= bins; ++b) counts[b] = 0;
  const float top = static_cast<float>(bins);
  const float offset = static_cast<float>(n);
  constexpr int64_t kChunk = 64;
  int32_t guesses[kChunk];
  for (int64_t i0 = 0; i0 < r; i0 += kChunk) {
    const int64_t len = r - i0 < kChunk ? r - i0 : kChunk;
    // First guess of the first bin b with v ≤ thresholds[b], branch-free so
    // that the compiler vectorises it; then an exact fix-up per value.
    // ceil without a libm call: round to nearest (|t| < 2^22), then step up.
    for (int64_t i = 0; i < len; ++i) {
      const float v = p[i0 + i];
      float t = v * scale;
      t = t < -top ? -top : t;
      t = t > top ? top : t;
      float rounded = (t + 12582912.0f) - 12582912.0f;
      rounded += rounded < t ? 1.0f : 0.0f;
      float guess = rounded + offset;
      guess = guess >= 0.0f ? guess : (v == v ? 0.0f : top);
      guess = guess > top ? top : guess;
      guesses[i] = static_cast<int32_t>(guess);
    }
    for (int64_t i = 0; i < len; ++i) {
      const float v = p[i0 + i];
      int64_t b = guesses[i];
      while (b > 0 && v <= thresholds[static_cast<size_t>(b - 1)]) --b;
      while (b < bins && !(v <= thresholds[static_cast<size_t>(b)])) ++b;
      ++counts[b];
    }
  }
  const float inv_r = 1.0f / static_cast<float>(r);
  int32_t running = 0;
  for (int64_t b = 0; b < bins; ++b) {
    running += counts[b];
    out[b] = static_cast<float>(running) * inv_r;
  }
}

void PoolMean(const float* p, int64_t r, float* out) {
  double s = 0.0;
  for (int64_t i = 0; i < r; ++i) s += p[i];
  out[0] = static_cast<float>(s / static_cast<double>(r));
}

void PoolSecondMoment(const float* p, int64_t r, float* out) {
  double s = 0.0;
  for (int64_t i = 0; i < r; ++i) s += static_cast<double>(p[i]) * p[i];
  out[0] = static_cast<float>(s / static_cast<double>(r));
}

void PoolMax(const float* p, int64_t r, float* out) {
  float m = -std::numeric_limits<float>::infinity();
  bool any = false;
  for (int64_t i = 0; i < r; ++i) {
    if (p[i] == p[i]) {
      m = any ? (p[i] > m ? p[i] : m) : p[i];
      any = true;
    }
  }
  out[0] = any ? m : std::numeric_limits<float>::quiet_NaN();
}

}  // namespace invariant
