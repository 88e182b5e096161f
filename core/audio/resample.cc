#include "core/audio/resample.h"

#include <soxr.h>

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/audio/wav.h"

namespace invariant::audio {

absl::StatusOr<std::vector<float>> Resample(absl::Span<const float> x, int from_rate, int to_rate,
                                            const std::string& what) {
  for (const int rate : {from_rate, to_rate}) {
    if (rate < kMinSampleRate || rate > kMaxSampleRate) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": sample rate ", rate, " Hz outside [",
                                                     kMinSampleRate, ", ", kMaxSampleRate, "]"));
    }
  }
  const double ratio = static_cast<double>(to_rate) / from_rate;
  if (ratio > kMaxRatio || ratio < 1.0 / kMaxRatio) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": resampling from ", from_rate, " to ",
                                                   to_rate, " Hz: the ratio is beyond 1/",
                                                   kMaxRatio, " .. ", kMaxRatio));
  }
  if (from_rate == to_rate || x.empty()) return std::vector<float>(x.begin(), x.end());
  const size_t out_length =
      std::max<size_t>(1, static_cast<size_t>(std::llround(x.size() * ratio)));
  std::vector<float> out(out_length, 0.0f);
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  const soxr_runtime_spec_t runtime = soxr_runtime_spec(1);  // one thread: no OpenMP
  size_t used = 0, written = 0;
  const soxr_error_t error =
      soxr_oneshot(from_rate, to_rate, 1, x.data(), x.size(), &used, out.data(), out.size(),
                   &written, &io, &quality, &runtime);
  if (error != nullptr) {
    return absl::InternalError(absl::StrCat(what, ": resampling failed: ", error));
  }
  // soxr_oneshot flushes the filter; any sample it did not produce stays 0.
  return out;
}

}  // namespace invariant::audio
