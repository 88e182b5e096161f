// resample.h: sample-rate conversion with libsoxr (high quality, linear phase).
//
// Resample(x, from, to) returns round(len(x) · to / from) samples (at least
// one for a non-empty input); from == to returns x unchanged. The output
// depends only on x and the two rates. INVALID_ARGUMENT (starting with
// `what`) for a rate outside [kMinSampleRate, kMaxSampleRate] (wav.h) or a
// ratio beyond 1/kMaxRatio .. kMaxRatio. Thread-safe (no shared state).
#ifndef INVARIANT_CORE_AUDIO_RESAMPLE_H_
#define INVARIANT_CORE_AUDIO_RESAMPLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace invariant::audio {

inline constexpr double kMaxRatio = 64.0;

absl::StatusOr<std::vector<float>> Resample(absl::Span<const float> x, int from_rate, int to_rate,
                                            const std::string& what);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_RESAMPLE_H_
