// audio_augment.h: training-time augmentation of sound clips, the
// AudioAugmentation of an AudioSource (proto/invariant/v1/train_config.proto).
// The trainer only: the served path (core/audio/front_end.h, the server)
// never sees it.
//
// Contract. AudioAugmenter::Augment(clip, i, c) is copy c of the decoded
// clip i (its index in ListAudioClips's order): these steps, in this order,
// each skipped when its field is unset:
//   0. voice: PitchShift by c cents, c uniform in pitch_cents, then
//      TimeStretch by a, a uniform in tempo (core/audio/time_stretch.h), at
//      the clip's own rate;
//   1. resample (core/audio/resample.h) to a rate drawn uniformly from
//      sample_rates; the later steps work at that rate, and the front end
//      resamples the copy back to the model's rate;
//   2. pad: a recording of round(T · rate) samples, T uniform in
//      total_seconds, with the clip at an offset uniform in
//      [0, length − clip length] and zeros around it (T shorter than the
//      clip: no padding);
//   3. noise: a source drawn uniformly from noise_colours (plus one entry,
//      the recordings, when noise_dir is set) and an SNR, uniform from the
//      list snr_db or in snr_db_range. The noise covers the whole recording
//      and is scaled so that 10·log10(Ps / Pn) is the SNR, where Ps is the
//      mean square of the clip's own samples after step 1 (the word, not
//      the padding: padding never changes the SNR) and Pn the mean square of
//      the noise over the whole recording. A silent clip (Ps = 0) gets none;
//   4. gain: every sample × 10^(g / 20), g uniform in gain_db, then clipped
//      to [−1, 1] (a recorder's full scale).
// Noise: white is Rng::Normal samples; pink is white through Paul Kellet's
// filter (−3.01 dB per octave within 0.05 dB above 2·10⁻⁴ of the rate);
// brown is a leaky integral of white with its corner at 10 Hz (−6.02 dB per
// octave from about 30 Hz to a quarter of the rate, up to 4 dB above that
// line near the Nyquist frequency). Both filters run warm before the first
// kept sample, and a coloured noise has its mean removed. A recording of
// noise_dir is drawn uniformly; its excerpt starts at a uniform sample,
// wraps round to the recording's start when it is too short, and is
// resampled from the recording's rate (with a margin of context either side,
// so the resampler's edges fall outside it).
//
// Seeds: every draw of copy c of clip i comes from generators derived from
// (seed, i, c) and the step alone (Rng::ForStream), so a copy depends only on
// the config, the clip and (i, c): not on the thread that computes it, the
// other clips, the number of copies, or another step's settings.
//
// Where the copies go, and why there. A split is a property of the original
// clips: PlanData (train/pipeline/data_plan.h) draws it, and a k-fold or
// leave-one-group-out run makes every clip a test row in one round and a
// training row in the others, so there is no single training part to
// augment before the rounds. LoadAudio (audio.h) therefore appends the
// copies of every clip of the train part (never of a manifest's test clips)
// after all the original rows, copy c of clip row r at row n + r·copies + c,
// with the original's label and group, and names each row's original
// (AudioData::copy_of, then RowSchema::copy_of). PlanData draws every split
// over the originals alone (the same train, validation, test rows, test
// groups and folds as without augmentation); a copy trains exactly when its
// original does, in its original's fold, and is unused otherwise. A
// cross-validation round adds a fold's copies to that fold's training sums
// only (cv_rounds.h): its inner validation and test folds are scored on the
// originals, and a copy never trains the round that holds its original out.
// Cost: the copies of clips that end up validation or test rows are
// featurized at load and then dropped.
//
// Errors: ValidateAudioAugmentation and Create return INVALID_ARGUMENT naming
// the field ("data.audio.augmentation.snr_db: ..."); Create also reads
// noise_dir (NOT_FOUND when it is not a folder; a recording that does not
// decode or is silent is named). Augment's errors (a rate the resampler
// refuses) start with `what`.
//
// Thread-safety: a created AudioAugmenter is immutable; Augment may be
// called from any number of threads at once. The free functions are
// reentrant.
#ifndef INVARIANT_TRAIN_DATA_AUDIO_AUGMENT_H_
#define INVARIANT_TRAIN_DATA_AUDIO_AUGMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/audio/wav.h"
#include "core/base/random.h"
#include "invariant/v1/train_config.pb.h"

namespace invariant::train {

inline constexpr int kMaxAugmentedCopies = 64;
// The voice step's limits.
inline constexpr double kMaxAugmentCents = 1200;
inline constexpr double kMinAugmentTempo = 0.5, kMaxAugmentTempo = 2.0;
// All the recordings of noise_dir together hold at most this many samples.
inline constexpr int64_t kMaxNoiseSamples = int64_t{1} << 26;

// Checks every field of `config` (`field` is its name, e.g.
// "data.audio.augmentation") against the source's `front_end` (its
// sample_rate and max_clip_seconds); reads no file.
absl::Status ValidateAudioAugmentation(const v1::AudioAugmentation& config,
                                       const v1::AudioFrontEnd& front_end,
                                       const std::string& field);

// What the draws of one copy were.
enum class NoiseSource { kNone, kWhite, kPink, kBrown, kRecording };
struct AugmentDraw {
  int sample_rate = 0;       // the copy's rate (the clip's own when not resampled)
  int64_t clip_samples = 0;  // the clip's samples at that rate
  int64_t offset = 0;        // where they start in the recording (0 when not padded)
  NoiseSource noise = NoiseSource::kNone;
  double snr_db = 0;          // when noise is set
  int64_t recording = -1;     // kRecording: index into noise_recordings()
  int64_t excerpt_start = 0;  // kRecording: its first sample, at the recording's rate
  double gain_db = 0;
  double pitch_cents = 0;  // step 0 (0 when unset)
  double tempo = 1;
};

struct AugmentedClip {
  audio::Clip clip;
  AugmentDraw draw;
};

// A background recording of noise_dir, as read.
struct NoiseRecording {
  std::string path;
  audio::Clip clip;
};

class AudioAugmenter {
 public:
  // Validates `config` (as ValidateAudioAugmentation) and reads noise_dir.
  static absl::StatusOr<std::unique_ptr<const AudioAugmenter>> Create(
      const v1::AudioAugmentation& config, const v1::AudioFrontEnd& front_end,
      const std::string& field);

  int copies() const { return config_.copies(); }
  const std::vector<NoiseRecording>& noise_recordings() const { return recordings_; }

  // Copy `copy` (in [0, copies())) of `clip`, the clip_index-th clip of the
  // source.
  absl::StatusOr<AugmentedClip> Augment(const audio::Clip& clip, int64_t clip_index, int copy,
                                        const std::string& what) const;

 private:
  AudioAugmenter() = default;
  // Step 0: the clip's samples in the drawn voice (draw gets the values).
  absl::StatusOr<std::vector<float>> ChangeVoice(const audio::Clip& clip, Rng rng,
                                                 AugmentDraw& draw, const std::string& what) const;
  absl::Status AddNoise(double signal_power, Rng& rng, uint64_t noise_seed, AugmentedClip& out,
                        const std::string& what) const;

  v1::AudioAugmentation config_;
  std::vector<NoiseSource> sources_;  // one entry per colour listed, and kRecording
  std::vector<NoiseRecording> recordings_;
};

// n samples of seeded coloured noise (white, pink or brown; its mean
// removed) at `sample_rate` Hz.
std::vector<float> ColouredNoise(NoiseSource colour, int64_t n, int sample_rate, uint64_t seed);

// n samples of `recording` from sample `start` (its rate), wrapping round,
// resampled to `sample_rate`.
absl::StatusOr<std::vector<float>> RecordingExcerpt(const audio::Clip& recording, int64_t start,
                                                    int64_t n, int sample_rate,
                                                    const std::string& what);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_AUDIO_AUGMENT_H_
