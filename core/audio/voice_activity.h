// voice_activity.h: where the speech of a recording lies, judged against the
// recording's own noise floor (v1::VoiceActivity; docs/math.md §9, "Finding
// the word").
//
// FindSpeech(x, R, p) for samples x at R Hz:
//   1. y = x through a 2nd-order Butterworth high-pass at high_pass_hz (hum,
//      rumble and DC do not count as energy);
//   2. frames of F = round(frame_seconds · R) samples every H = ⌈F / 2⌉
//      (the last frame may be short; a recording shorter than F is one
//      frame), level L_t = 10 log₁₀ mean(y²) dB over frame t, clamped at
//      P − 120 dB, P = max_t L_t;
//   3. the noise floor N = the noise_percentile-th percentile (nearest rank)
//      of the levels above P − 100 dB (digital silence is not a floor; none
//      left: N = P − 120);
//   4. thresholds T_on = max(N + onset_db, P − range_db), T_off = max(N +
//      offset_db, P − range_db): a region is a maximal run of frames with
//      L_t ≥ T_off holding at least one frame with L_t ≥ T_on (hysteresis);
//   5. regions less than max_gap_seconds apart are merged (the gaps inside a
//      word: stop closures), then regions shorter than min_speech_seconds
//      are dropped (clicks);
//   6. the speech is the region with the most energy above the floor,
//      Σ_t (10^{L_t/10} − 10^{N/10}), widened by margin_seconds on each side
//      and held to the recording; none: no speech.
// A recording of stationary noise has every level within a few dB of N, so
// none reaches T_on: no speech. A clean recording (floor far below) reduces
// to P − range_db, the rule of the peak-relative trimming. What it does not
// handle (non-stationary noise as loud as the speech: babble, music, a second
// talker) is in docs/math.md.
//
// Determinism: the span depends only on the samples, R and p (double
// arithmetic in a fixed order), so trainer and server agree.
//
// Errors: CompleteVoiceActivity refuses a parameter outside its range with
// INVALID_ARGUMENT naming the field ("audio.voice_activity.onset_db: ...").
// FindSpeech takes a completed spec and cannot fail.
//
// Thread-safety: pure functions.
#ifndef INVARIANT_CORE_AUDIO_VOICE_ACTIVITY_H_
#define INVARIANT_CORE_AUDIO_VOICE_ACTIVITY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant::audio {

// [begin, end) in samples of the recording FindSpeech was given.
struct SpeechSpan {
  bool found = false;
  int64_t begin = 0;
  int64_t end = 0;
};

// `spec` (enabled or not) with every 0 replaced by its default; `sample_rate`
// for the high-pass's limit (below R / 2). INVALID_ARGUMENT naming the field.
absl::StatusOr<v1::VoiceActivity> CompleteVoiceActivity(v1::VoiceActivity spec, int sample_rate);

// The speech of x (see above); `spec` completed. An empty x has none.
SpeechSpan FindSpeech(absl::Span<const float> x, int sample_rate, const v1::VoiceActivity& spec);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_VOICE_ACTIVITY_H_
