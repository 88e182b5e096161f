// front_end.h: the audio front end, a clip of any length and rate → one row.
//
// The steps and every parameter are those of v1::AudioFrontEnd
// (proto/invariant/v1/bundle.proto; docs/math.md §9): resample to the
// model's rate (libsoxr; only the window the clip policy keeps, so the cost
// is bounded by clip_seconds, not by the clip's length), trim silence, normalise, crop or pad to a
// fixed length, Hann-windowed magnitude STFT (the real FFT of fft.h), log-spaced triangular
// frequency bins, log1p or PCEN compression (compression.h), optional per-bin mean removal; or,
// with FILTERBANK_CONSTANT_Q, a constant-Q filter bank in place of the STFT and its triangles
// (constant_q.h); optionally the tempo and pitch normalisations, align_time and align_frequency
// (spectrogram_ops.h). The row is frequency_bins × frames floats, bin-major, the layout
// AudioTransformGroup acts on (a pitch shift is a shift along the bins).
//
// The arithmetic, where the proto leaves it open:
//   * the window is the periodic Hann window w[i] = ½ − ½·cos(2πi / L),
//     L = frame_length (the STFT convention; frames never straddle the clip:
//     frame t covers samples [t·hop, t·hop + L));
//   * magnitudes are |FFT| of the windowed frame, unnormalised: a full-scale
//     sine at an FFT bin gives about frame_length / 4 there;
//   * output bin k has centre c_k = min_frequency · 2^(k / bins_per_octave);
//     its triangle is 1 at c_k and 0 at c_k − below_k and c_k + above_k,
//     below_k = max(c_k − c_{k−1}, Δf), above_k = max(c_{k+1} − c_k, Δf),
//     Δf = sample_rate / fft_length, sampled at the FFT bin frequencies
//     j·Δf ≤ sample_rate / 2 and normalised to unit sum (a flat spectrum
//     gives a flat output). Where the neighbours are closer than one FFT bin
//     this is linear interpolation of the magnitude spectrum at c_k, so every
//     bin has at least one weight;
//   * trimming keeps [first, last], the first and last samples with
//     |x| ≥ peak · 10^(−trim_db / 20); peak / RMS normalisation divide by a
//     positive peak / RMS and leave a silent clip as it is;
//   * padding and cropping place the clip at offset ⌊(L − n) / 2⌋ (CENTRE)
//     or 0 (START), L = round(clip_seconds · sample_rate).
//
// Determinism: the row depends only on the samples, their rate and the spec,
// never on the thread or on other clips, so the trainer and the server give
// the same bits for the same clip (on one machine: libsoxr, and FFTW when
// the build uses it, pick SIMD code by CPU, so rows may differ in the last
// bits across CPUs; the two FFT libraries' rows differ in the last bits
// too, fft.h). Apply borrows a workspace (buffers; the FFT plans are
// shared) from a pool, so calls do not allocate once warm.
//
// Work: with FILTERBANK_CONSTANT_Q, a clip's bands (and their compression)
// run as ParallelFor tasks on the default pool (constant_q.h), so one clip
// uses every core; with align_time only the frames the stretch reads are
// computed (StretchedFrames). Neither changes a bit of the row.
//
// Errors: Create refuses an inconsistent spec with INVALID_ARGUMENT naming
// the field ("audio.frequency_bins: ... above the Nyquist frequency");
// Apply refuses a clip with INVALID_ARGUMENT starting with `what`: zero
// samples, a NaN or infinite sample or one beyond ±kMaxSampleMagnitude, more
// samples than max_clip_seconds allows at the clip's rate, a rate outside
// [kMinSampleRate, kMaxSampleRate].
//
// Thread-safety: a created AudioFrontEnd is immutable; Apply may be called
// from any number of threads at once.
#ifndef INVARIANT_CORE_AUDIO_FRONT_END_H_
#define INVARIANT_CORE_AUDIO_FRONT_END_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/audio/fft.h"  // the FFT library, part of these names
#include "invariant/v1/bundle.pb.h"

namespace invariant::audio {
inline namespace INVARIANT_FFT_NAMESPACE {

// Where a clip's content lies, in seconds of the clip as it was sent (its own
// time, whatever its rate): [start_seconds, end_seconds) is what the front end
// kept before the clip policy. found is false only with voice_activity, when
// no speech was found (the row is then that of the whole clip, as without
// voice_activity; callers report the clip instead of its answer).
struct ClipSpeech {
  bool found = true;
  double start_seconds = 0;
  double end_seconds = 0;
};

class AudioFrontEnd {
 public:
  // `spec` with the defaults filled in (trim_db 40, compression_gain 1,
  // fft_length the next power of two ≥ frame_length) and `frames` derived;
  // a spec that already has `frames` must agree. INVALID_ARGUMENT names the
  // field: sample_rate outside [kMinSampleRate, kMaxSampleRate], clip_seconds
  // ≤ 0 or shorter than one frame (or above kMaxClipSeconds / kMaxClipSamples),
  // frame_length < 2, hop_length < 1, fft_length < frame_length or odd (or
  // either above kMaxFftLength), min_frequency ≤ 0, bins_per_octave < 1,
  // frequency_bins < 1, the highest bin centre at or above sample_rate / 2,
  // trim_db < 0, compression_gain < 0 or above kMaxCompressionGain, an
  // unknown enum value, max_clip_seconds < 0 or above kMaxClipSeconds (0
  // means kDefaultMaxClipSeconds and is kept as 0), more than kMaxRowValues
  // values in a row; bandwidth_octaves (0: 1 / bins_per_octave) outside
  // (0, kMaxBandwidthOctaves], set without FILTERBANK_CONSTANT_Q, or too
  // narrow for min_frequency (ConstantQBank::TransformLength); a
  // voice_activity parameter out of its range (CompleteVoiceActivity; the
  // defaults filled in only when enabled); an unknown compression or a pcen
  // parameter out of its range (CompleteCompression; the defaults filled in
  // only with COMPRESSION_PCEN).
  static absl::StatusOr<v1::AudioFrontEnd> Complete(v1::AudioFrontEnd spec);
  static absl::StatusOr<std::unique_ptr<const AudioFrontEnd>> Create(const v1::AudioFrontEnd& spec);

  ~AudioFrontEnd();

  static constexpr int64_t kMaxRowValues = 1 << 20;
  static constexpr int kMaxFftLength = 1 << 17;         // frame_length and fft_length
  static constexpr double kMaxClipSeconds = 3600;       // clip_seconds, max_clip_seconds
  static constexpr int64_t kMaxClipSamples = 1 << 24;   // clip_seconds · sample_rate
  static constexpr double kDefaultMaxClipSeconds = 60;  // max_clip_seconds = 0
  // Apply refuses samples beyond ±kMaxSampleMagnitude (float WAVs are taken
  // as they are; int-scaled ones reach 2^23) and Complete a compression_gain
  // above kMaxCompressionGain, so every value of a row is finite.
  static constexpr float kMaxSampleMagnitude = 16777216.0f;  // 2^24
  static constexpr double kMaxCompressionGain = 1e6;
  static constexpr double kMaxBandwidthOctaves = 4;  // FILTERBANK_CONSTANT_Q

  // round(clip_seconds · sample_rate): the samples of a clip after the clip
  // policy.
  static int64_t ClipSamples(const v1::AudioFrontEnd& spec);

  const v1::AudioFrontEnd& spec() const { return spec_; }  // completed
  int64_t frequency_bins() const { return spec_.frequency_bins(); }
  int64_t frames() const { return spec_.frames(); }
  int64_t output_dim() const { return frequency_bins() * frames(); }
  // The most samples a clip at `sample_rate` may have (max_clip_seconds).
  int64_t MaxSamples(int sample_rate) const;

  // samples (mono, at sample_rate Hz) → row[0, output_dim()). Each call
  // checks the samples itself (a clip from a request need not come from
  // DecodeWav). `speech` (may be null) receives where the content lies.
  absl::Status Apply(absl::Span<const float> samples, int sample_rate, float* row,
                     const std::string& what, ClipSpeech* speech = nullptr) const;

 private:
  AudioFrontEnd() = default;
  // Apply's checks of the samples (its errors, above).
  absl::Status CheckSamples(absl::Span<const float> samples, int sample_rate,
                            const std::string& what) const;
  struct Plan;
  v1::AudioFrontEnd spec_;
  std::unique_ptr<Plan> plan_;  // window, filter bank, FFT configuration
};

// 16-bit PCM → float samples in [−1, 1): x / 32768.
std::vector<float> Int16ToFloat(absl::Span<const int16_t> pcm);

}  // namespace INVARIANT_FFT_NAMESPACE
}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_FRONT_END_H_
