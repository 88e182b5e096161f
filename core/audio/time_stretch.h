// time_stretch.h: a clip played at another tempo with its pitch kept, and at
// another pitch with its tempo kept: what a speaker who talks faster or
// higher does to a recording, for the trainer: its certificates
// (train/pipeline/clip_certificate.h) and its augmentation in other voices
// (train/data/audio_augment.h). Not on the served path.
//
// Contract.
//   * TimeStretch(x, rate, a) is x played a times as fast (a > 1: shorter)
//     with its pitch kept: round(len(x) / a) samples by WSOLA (waveform-
//     similarity overlap-add; Verhelst & Roelands 1993, the method of sox's
//     `tempo` effect). Output frames of kWsolaFrameSeconds (an even number
//     of samples N) every N / 2 samples under a periodic Hann window, whose
//     overlaps sum to exactly 1; output frame k reads input from k·(N/2)·a
//     moved by the δ in [−Δ, Δ] (Δ = kWsolaToleranceSeconds of samples)
//     whose frame best matches, by the plain cross-correlation, the natural
//     continuation of the frame read before it. Samples outside x read as
//     0. a = 1 returns x unchanged.
//   * PitchShift(x, rate, c) is x c cents higher (c < 0: lower) with its
//     length kept: TimeStretch by 1 / r (r = 2^(c/1200)), then those samples
//     taken as sampled at round(rate · r) Hz and resampled to `rate`
//     (resample.h), so that every frequency is multiplied by r to within
//     the rounding of the rate (under 0.2 cents at 8 kHz). c = 0 returns x
//     unchanged. Length round(len(x) · r) / round(rate · r) · rate, rounded:
//     len(x) within a sample or two.
// Both are deterministic: the output depends only on the arguments.
//
// Errors: INVALID_ARGUMENT starting with `what`: a factor that is not finite
// or outside [1 / kMaxStretch, kMaxStretch], cents outside ±kMaxShiftCents,
// a rate outside [kMinSampleRate, kMaxSampleRate] (wav.h), or an output
// above kMaxStretchedSamples. Thread-safety: reentrant.
#ifndef INVARIANT_CORE_AUDIO_TIME_STRETCH_H_
#define INVARIANT_CORE_AUDIO_TIME_STRETCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace invariant::audio {

inline constexpr double kWsolaFrameSeconds = 0.030;
inline constexpr double kWsolaToleranceSeconds = 0.010;
inline constexpr double kMaxStretch = 4.0;
inline constexpr double kMaxShiftCents = 2400.0;
inline constexpr int64_t kMaxStretchedSamples = int64_t{1} << 26;

absl::StatusOr<std::vector<float>> TimeStretch(absl::Span<const float> x, int sample_rate,
                                               double factor, const std::string& what);

absl::StatusOr<std::vector<float>> PitchShift(absl::Span<const float> x, int sample_rate,
                                              double cents, const std::string& what);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_TIME_STRETCH_H_
