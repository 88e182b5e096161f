#include "core/audio/spectrogram_ops.h"

#include <algorithm>
#include <cmath>

namespace invariant::audio {

double FrequencyCentroid(const float* row, int64_t bins, int64_t frames, BinStatistic statistic) {
  double weight = 0.0, moment = 0.0;
  for (int64_t k = 0; k < bins; ++k) {
    double sum = 0.0;
    for (int64_t t = 0; t < frames; ++t) sum += row[k * frames + t];
    double m = sum / frames;
    if (statistic == BinStatistic::kStddev) {
      double squares = 0.0;
      for (int64_t t = 0; t < frames; ++t) {
        const double d = row[k * frames + t] - m;
        squares += d * d;
      }
      m = std::sqrt(squares / frames);
    }
    weight += m;
    moment += static_cast<double>(k) * m;
  }
  return weight > 0.0 ? moment / weight : -1.0;
}

void AlignFrequencyCentroid(float* row, int64_t bins, int64_t frames, double target_bin,
                            float* scratch, BinStatistic statistic) {
  const double centroid = FrequencyCentroid(row, bins, frames, statistic);
  if (centroid < 0.0) return;
  const int64_t n = bins * frames;
  std::copy(row, row + n, scratch);
  // out[k] = in[k − δ] = (1 − f)·in[i] + f·in[i + 1], k − δ = i + f.
  const double source_offset = centroid - target_bin;  // −δ
  const double whole = std::floor(source_offset);
  const float f = static_cast<float>(source_offset - whole);
  const int64_t shift = static_cast<int64_t>(whole);
  for (int64_t k = 0; k < bins; ++k) {
    const int64_t i = k + shift;
    const bool has_low = i >= 0 && i < bins;
    const bool has_high = i + 1 >= 0 && i + 1 < bins;
    float* out = row + k * frames;
    for (int64_t t = 0; t < frames; ++t) {
      const float low = has_low ? scratch[i * frames + t] : 0.0f;
      const float high = has_high ? scratch[(i + 1) * frames + t] : 0.0f;
      out[t] = (1.0f - f) * low + f * high;
    }
  }
}

void StretchFrames(float* row, int64_t bins, int64_t frames, double first, double last,
                   float* scratch) {
  const int64_t n = bins * frames;
  std::copy(row, row + n, scratch);
  const double step = (last - first) / static_cast<double>(frames - 1);
  const double end = static_cast<double>(frames - 1);
  for (int64_t j = 0; j < frames; ++j) {
    const double u = std::clamp(first + static_cast<double>(j) * step, 0.0, end);
    const int64_t i = std::min(static_cast<int64_t>(u), frames - 2);
    const float f = static_cast<float>(u - static_cast<double>(i));
    for (int64_t k = 0; k < bins; ++k) {
      const float* in = scratch + k * frames + i;
      row[k * frames + j] = (1.0f - f) * in[0] + f * in[1];
    }
  }
}

void StretchedFrames(int64_t frames, double first, double last, int64_t* begin, int64_t* end) {
  // StretchFrames reads frames i and i + 1, i = min(⌊u⌋, frames − 2), for
  // u_j clamped to [0, frames − 1]: u_0 = first exactly, u_j grows with j,
  // and the last, first + (frames − 1)·step, may round past `last` (to the
  // next whole frame when last is just below one): one frame of margin.
  const double top = static_cast<double>(frames - 1);
  const auto floor_of = [top](double u) {
    return static_cast<int64_t>(std::floor(std::clamp(u, 0.0, top)));
  };
  *begin = std::min(floor_of(first), frames - 2);
  *end = std::min<int64_t>(frames, std::min(floor_of(last), frames - 2) + 3);
}

void SubtractFrequencyMean(float* row, int64_t bins, int64_t frames) {
  for (int64_t k = 0; k < bins; ++k) {
    float* bin = row + k * frames;
    double sum = 0.0;
    for (int64_t t = 0; t < frames; ++t) sum += bin[t];
    const float mean = static_cast<float>(sum / frames);
    for (int64_t t = 0; t < frames; ++t) bin[t] -= mean;
  }
}

}  // namespace invariant::audio
