// voice_activity.h: where the speech of a recording lies, judged against the
// recording's own noise floor (v1::VoiceActivity; docs/math.md §9, "Finding
// the word").
//
// FindSpeech(x, R, p) for samples x at R Hz:
//   1. leading and trailing digital zeros are dropped (padding cannot move
//      the frames);
//   2. x runs through the detector's filter bank (band_energies.h): a
//      2nd-order Butterworth high-pass at high_pass_hz (hum, rumble and DC do
//      not count) and one-octave band-passes centred on 2, 4, 8, ... ×
//      high_pass_hz below 0.45 · R; frames of 2H samples every H =
//      round(frame_seconds · R / 2) (the last may be short), and per frame t
//      the broadband power B_t (the high-pass) and each band's power P_kt;
//   3. with P = max_t B_t, a frame is heard when B_t > P · 10^−10 (digital
//      silence is not a floor) and in range when B_t ≥ P · 10^(−range_db/10);
//   4. each band's noise floor N_k = the noise_percentile-th percentile
//      (nearest rank) of P_kt over the heard frames, at least P · 10^−12;
//      a frame's score s_t = mean_k P_kt / N_k (every band whitened by the
//      recording's own noise: an a-posteriori SNR);
//   5. hysteresis: a region is a maximal run of in-range frames with s_t ≥
//      10^(offset_db/10) holding at least one with s_t ≥ 10^(onset_db/10);
//      regions less than max_gap_seconds apart are merged (the gaps inside a
//      word: stop closures), then regions shorter than min_speech_seconds
//      are dropped (clicks);
//   6. the speech is the region with the most Σ_t max(0, s_t − 1), widened
//      by margin_seconds on each side and held to the recording; none: no
//      speech.
// A recording of stationary noise has every score near 1, so none reaches
// the onset: no speech. What it does not handle (non-stationary noise as
// loud as the speech: babble, music, a second talker) is in docs/math.md.
//
// Determinism: the span depends only on the samples, R and p (the filter bank
// in float, the rest in double, each in a fixed order: the same bits on every
// kernel path), so trainer and server agree.
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
