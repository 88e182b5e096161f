#include "core/audio/time_stretch.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/audio/resample.h"
#include "core/audio/wav.h"

namespace invariant::audio {
namespace {

constexpr double kPi = 3.14159265358979323846;

absl::Status CheckRate(int sample_rate, const std::string& what) {
  if (sample_rate < kMinSampleRate || sample_rate > kMaxSampleRate) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": sample rate ", sample_rate,
                                                   " Hz outside [", kMinSampleRate, ", ",
                                                   kMaxSampleRate, "]"));
  }
  return absl::OkStatus();
}

// The δ in [−tolerance, tolerance] whose frame at padded[start + δ] best
// matches `target` by the plain cross-correlation (the first best).
int64_t BestOffset(const std::vector<float>& padded, int64_t start, const float* target,
                   int64_t frame, int64_t tolerance) {
  int64_t best = 0;
  double best_score = -HUGE_VAL;
  for (int64_t d = -tolerance; d <= tolerance; ++d) {
    const float* p = padded.data() + start + d;
    double score = 0;
    for (int64_t j = 0; j < frame; ++j) score += static_cast<double>(p[j]) * target[j];
    if (score > best_score) {
      best_score = score;
      best = d;
    }
  }
  return best;
}

}  // namespace

absl::StatusOr<std::vector<float>> TimeStretch(absl::Span<const float> x, int sample_rate,
                                               double factor, const std::string& what) {
  if (absl::Status s = CheckRate(sample_rate, what); !s.ok()) return s;
  if (!std::isfinite(factor) || factor < 1 / kMaxStretch || factor > kMaxStretch) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": tempo factor ", factor, " outside [1/",
                                                   kMaxStretch, ", ", kMaxStretch, "]"));
  }
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t length = std::llround(static_cast<double>(n) / factor);
  if (length > kMaxStretchedSamples) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the stretched clip would hold ", length,
                                                   " samples, above ", kMaxStretchedSamples));
  }
  if (factor == 1.0 || n == 0) return std::vector<float>(x.begin(), x.end());
  const int64_t frame =
      std::max<int64_t>(2, 2 * std::llround(kWsolaFrameSeconds * sample_rate / 2));
  const int64_t hop = frame / 2;
  const int64_t tolerance = std::llround(kWsolaToleranceSeconds * sample_rate);
  // Every read lies in [−(hop·factor + tolerance + 1), n + frame + tolerance].
  const int64_t pad = 4 * frame + 2 * tolerance + 2;
  std::vector<float> padded(static_cast<size_t>(n + 2 * pad), 0.0f);
  std::copy(x.begin(), x.end(), padded.begin() + pad);
  std::vector<float> window(static_cast<size_t>(frame));
  for (int64_t j = 0; j < frame; ++j) {
    window[static_cast<size_t>(j)] =
        static_cast<float>(0.5 - 0.5 * std::cos(2 * kPi * static_cast<double>(j) / frame));
  }
  // Output frame k covers [k·hop − hop, k·hop + hop): y holds it from index
  // k·hop, so output sample t is y[t + hop] and every t ≥ 0 gets two frames.
  std::vector<float> y(static_cast<size_t>(length + 2 * frame), 0.0f);
  int64_t previous = 0;  // where the previous frame was read, in padded
  for (int64_t k = 0; k * hop < length + hop; ++k) {
    const int64_t nominal = pad + std::llround(static_cast<double>(k * hop - hop) * factor);
    const int64_t start =
        k == 0 ? nominal
               : nominal +
                     BestOffset(padded, nominal, padded.data() + previous + hop, frame, tolerance);
    for (int64_t j = 0; j < frame; ++j) {
      y[static_cast<size_t>(k * hop + j)] +=
          window[static_cast<size_t>(j)] * padded[static_cast<size_t>(start + j)];
    }
    previous = start;
  }
  return std::vector<float>(y.begin() + hop, y.begin() + hop + length);
}

absl::StatusOr<std::vector<float>> PitchShift(absl::Span<const float> x, int sample_rate,
                                              double cents, const std::string& what) {
  if (absl::Status s = CheckRate(sample_rate, what); !s.ok()) return s;
  if (!std::isfinite(cents) || std::fabs(cents) > kMaxShiftCents) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": pitch shift of ", cents, " cents beyond ±", kMaxShiftCents));
  }
  if (cents == 0 || x.empty()) return std::vector<float>(x.begin(), x.end());
  const double ratio = std::exp2(cents / 1200);
  const long long taken_as = std::llround(sample_rate * ratio);
  if (taken_as < kMinSampleRate || taken_as > kMaxSampleRate) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shifting ", sample_rate, " Hz by ", cents, " cents needs a rate of ",
                     taken_as, " Hz, outside [", kMinSampleRate, ", ", kMaxSampleRate, "]"));
  }
  absl::StatusOr<std::vector<float>> slower = TimeStretch(x, sample_rate, 1 / ratio, what);
  if (!slower.ok()) return slower.status();
  return Resample(*slower, static_cast<int>(taken_as), sample_rate, what);
}

}  // namespace invariant::audio
