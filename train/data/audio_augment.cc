#include "train/data/audio_augment.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/audio/front_end.h"
#include "core/audio/resample.h"
#include "core/audio/time_stretch.h"
#include "core/base/file.h"
#include "core/base/status_macros.h"
#include "train/data/audio.h"

namespace invariant::train {
namespace {

using Range = v1::AudioAugmentation::Range;

constexpr double kPi = 3.14159265358979323846;
constexpr double kBrownCornerHz = 10;
constexpr int64_t kPinkWarmUp = 8192;  // > 9 time constants of Kellet's slowest pole
// SNR and gain limits (dB): beyond them a copy is noise alone, or silence.
constexpr double kMinSnrDb = -30, kMaxSnrDb = 100;
constexpr double kMaxGainDb = 60;

// The streams of one copy's draws.
enum Step : uint64_t {
  kRateStep = 1,
  kPadStep,
  kNoiseStep,
  kNoiseSamplesStep,
  kGainStep,
  kVoiceStep
};

Rng StepRng(uint64_t seed, int64_t clip, int copy, Step step) {
  Rng per_clip = Rng::ForStream(seed, static_cast<uint64_t>(clip));
  Rng per_copy = Rng::ForStream(per_clip.NextU64(), static_cast<uint64_t>(copy));
  return Rng::ForStream(per_copy.NextU64(), step);
}

double MeanSquare(const std::vector<float>& x) {
  double sum = 0;
  for (float v : x) sum += static_cast<double>(v) * v;
  return x.empty() ? 0.0 : sum / static_cast<double>(x.size());
}

absl::Status CheckRange(const Range& r, const std::string& field, double lo, double hi) {
  if (!(std::isfinite(r.min()) && std::isfinite(r.max()) && lo <= r.min() && r.min() <= r.max() &&
        r.max() <= hi)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": min ", r.min(), ", max ", r.max(),
                                                   " must satisfy ", lo, " <= min <= max <= ", hi));
  }
  return absl::OkStatus();
}

absl::Status CheckRates(const v1::AudioAugmentation& a, const v1::AudioFrontEnd& front_end,
                        const std::string& field) {
  for (int i = 0; i < a.sample_rates_size(); ++i) {
    const int rate = a.sample_rates(i);
    const double ratio = static_cast<double>(rate) / std::max(1, front_end.sample_rate());
    if (rate < audio::kMinSampleRate || rate > audio::kMaxSampleRate || ratio > audio::kMaxRatio ||
        ratio < 1 / audio::kMaxRatio) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".sample_rates[", i, "]: ", rate, " Hz must be in [", audio::kMinSampleRate, ", ",
          audio::kMaxSampleRate, "] and within a factor ", audio::kMaxRatio,
          " of the front end's sample_rate ", front_end.sample_rate()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNoise(const v1::AudioAugmentation& a, const std::string& field) {
  for (int i = 0; i < a.noise_colours_size(); ++i) {
    if (a.noise_colours(i) == v1::AudioAugmentation::NOISE_COLOUR_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".noise_colours[", i, "]: NOISE_COLOUR_UNSPECIFIED; use WHITE, PINK or BROWN"));
    }
  }
  const bool noise = a.noise_colours_size() > 0 || !a.noise_dir().empty();
  const bool snr = a.snr_db_size() > 0 || a.has_snr_db_range();
  if (noise != snr) {
    return absl::InvalidArgumentError(
        noise ? absl::StrCat(field, ".snr_db: noise needs an SNR: set snr_db or snr_db_range")
              : absl::StrCat(field,
                             ".snr_db: an SNR without noise: set noise_colours or "
                             "noise_dir"));
  }
  if (a.snr_db_size() > 0 && a.has_snr_db_range()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".snr_db and ", field, ".snr_db_range are alternatives: set one"));
  }
  for (int i = 0; i < a.snr_db_size(); ++i) {
    const double v = a.snr_db(i);
    if (!(v >= kMinSnrDb && v <= kMaxSnrDb)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".snr_db[", i, "]: ", v, " dB must be in [", kMinSnrDb, ", ", kMaxSnrDb, "]"));
    }
  }
  if (a.has_snr_db_range()) {
    RETURN_IF_ERROR(
        CheckRange(a.snr_db_range(), absl::StrCat(field, ".snr_db_range"), kMinSnrDb, kMaxSnrDb));
  }
  return absl::OkStatus();
}

NoiseSource SourceOf(int colour) {
  switch (colour) {
    case v1::AudioAugmentation::NOISE_COLOUR_PINK:
      return NoiseSource::kPink;
    case v1::AudioAugmentation::NOISE_COLOUR_BROWN:
      return NoiseSource::kBrown;
    default:
      return NoiseSource::kWhite;
  }
}

// Every *.wav below `dir`, decoded; kMaxNoiseSamples in all.
absl::StatusOr<std::vector<NoiseRecording>> ReadNoiseRecordings(const std::string& dir,
                                                                const std::string& field) {
  ASSIGN_OR_RETURN(const std::vector<std::string> paths, ListWavFiles(dir, field));
  if (paths.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": no *.wav below ", dir));
  }
  std::vector<NoiseRecording> out;
  int64_t left = kMaxNoiseSamples;
  for (const std::string& path : paths) {
    const std::optional<std::string> bytes = ReadWholeFile(path);
    if (!bytes.has_value()) {
      return absl::NotFoundError(absl::StrCat(field, ": cannot read ", path));
    }
    const auto prefixed = [&field](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat(field, ": ", s.message()));
    };
    absl::StatusOr<audio::WavHeader> header = audio::ReadWavHeader(*bytes, path);
    if (!header.ok()) return prefixed(header.status());
    if (header->samples > left) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", path, " takes the recordings past ", kMaxNoiseSamples,
                       " samples in all; use fewer or shorter files"));
    }
    absl::StatusOr<audio::Clip> clip = audio::DecodeWav(*bytes, left, path);
    if (!clip.ok()) return prefixed(clip.status());
    if (MeanSquare(clip->samples) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": ", path, " is silent"));
    }
    left -= static_cast<int64_t>(clip->samples.size());
    out.push_back({path, *std::move(clip)});
  }
  return out;
}

// Step 2: the clip at a drawn offset in a recording of drawn length.
void Pad(const Range& seconds, Rng& rng, AugmentedClip& out) {
  std::vector<float>& x = out.clip.samples;
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t total = std::llround(rng.Uniform(seconds.min(), seconds.max()) *
                                     static_cast<double>(out.clip.sample_rate));
  if (total <= n) return;
  out.draw.offset = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(total - n + 1)));
  std::vector<float> padded(static_cast<size_t>(total), 0.0f);
  std::copy(x.begin(), x.end(), padded.begin() + out.draw.offset);
  x = std::move(padded);
}

// Step 4: the gain, then the recorder's full scale.
void ApplyGain(const Range& gain_db, Rng& rng, AugmentedClip& out) {
  out.draw.gain_db = rng.Uniform(gain_db.min(), gain_db.max());
  const double factor = std::pow(10.0, out.draw.gain_db / 20);
  for (float& v : out.clip.samples) {
    v = static_cast<float>(std::clamp(v * factor, -1.0, 1.0));
  }
}

}  // namespace

absl::Status ValidateAudioAugmentation(const v1::AudioAugmentation& a,
                                       const v1::AudioFrontEnd& front_end,
                                       const std::string& field) {
  if (a.copies() < 1 || a.copies() > kMaxAugmentedCopies) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".copies: ", a.copies(), " must be in [1, ", kMaxAugmentedCopies, "]"));
  }
  if (a.sample_rates_size() == 0 && !a.has_total_seconds() && a.noise_colours_size() == 0 &&
      a.noise_dir().empty() && !a.has_gain_db() && !a.has_pitch_cents() && !a.has_tempo()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field,
                     ": the copies would equal the clips: set pitch_cents, tempo, sample_rates, "
                     "total_seconds, noise_colours or noise_dir, or gain_db"));
  }
  if (a.has_pitch_cents()) {
    RETURN_IF_ERROR(CheckRange(a.pitch_cents(), absl::StrCat(field, ".pitch_cents"),
                               -kMaxAugmentCents, kMaxAugmentCents));
  }
  if (a.has_tempo()) {
    RETURN_IF_ERROR(
        CheckRange(a.tempo(), absl::StrCat(field, ".tempo"), kMinAugmentTempo, kMaxAugmentTempo));
  }
  RETURN_IF_ERROR(CheckRates(a, front_end, field));
  if (a.has_total_seconds()) {
    const double limit = front_end.max_clip_seconds() == 0
                             ? audio::AudioFrontEnd::kDefaultMaxClipSeconds
                             : front_end.max_clip_seconds();
    const std::string f = absl::StrCat(field, ".total_seconds");
    RETURN_IF_ERROR(CheckRange(a.total_seconds(), f, 0, limit));
    if (a.total_seconds().min() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(f, ": min must be > 0 seconds"));
    }
  }
  RETURN_IF_ERROR(CheckNoise(a, field));
  if (a.has_gain_db()) {
    RETURN_IF_ERROR(
        CheckRange(a.gain_db(), absl::StrCat(field, ".gain_db"), -kMaxGainDb, kMaxGainDb));
  }
  return absl::OkStatus();
}

std::vector<float> ColouredNoise(NoiseSource colour, int64_t n, int sample_rate, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(0, n)));
  if (colour == NoiseSource::kPink) {
    // Paul Kellet's refined filter (the "pk3" coefficients).
    double b[7] = {0, 0, 0, 0, 0, 0, 0};
    const auto next = [&b, &rng]() {
      const double w = rng.Normal();
      b[0] = 0.99886 * b[0] + w * 0.0555179;
      b[1] = 0.99332 * b[1] + w * 0.0750759;
      b[2] = 0.96900 * b[2] + w * 0.1538520;
      b[3] = 0.86650 * b[3] + w * 0.3104856;
      b[4] = 0.55000 * b[4] + w * 0.5329522;
      b[5] = -0.7616 * b[5] - w * 0.0168980;
      const double pink = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + w * 0.5362;
      b[6] = w * 0.115926;
      return pink;
    };
    for (int64_t i = 0; i < kPinkWarmUp; ++i) next();
    for (float& v : out) v = static_cast<float>(next());
  } else if (colour == NoiseSource::kBrown) {
    // y ← a·y + w, started from its stationary law N(0, 1 / (1 − a²)).
    const double a = std::exp(-2 * kPi * kBrownCornerHz / sample_rate);
    double y = rng.Normal() / std::sqrt(1 - a * a);
    for (float& v : out) v = static_cast<float>(y = a * y + rng.Normal());
  } else {
    for (float& v : out) v = static_cast<float>(rng.Normal());
  }
  double mean = 0;
  for (float v : out) mean += v;
  mean /= std::max<double>(1, static_cast<double>(out.size()));
  for (float& v : out) v = static_cast<float>(v - mean);
  return out;
}

absl::StatusOr<std::vector<float>> RecordingExcerpt(const audio::Clip& recording, int64_t start,
                                                    int64_t n, int sample_rate,
                                                    const std::string& what) {
  const std::vector<float>& x = recording.samples;
  const int64_t len = static_cast<int64_t>(x.size());
  const auto at = [&x, len](int64_t j) { return x[static_cast<size_t>(((j % len) + len) % len)]; };
  std::vector<float> out(static_cast<size_t>(n), 0.0f);
  if (recording.sample_rate == sample_rate) {
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = at(start + i);
    return out;
  }
  // Context either side of the excerpt, so the resampler's edges fall outside it.
  const int64_t margin = std::max<int64_t>(256, recording.sample_rate / 50);
  const double ratio = static_cast<double>(recording.sample_rate) / sample_rate;
  const int64_t m = static_cast<int64_t>(std::ceil(static_cast<double>(n) * ratio)) + 2 * margin;
  std::vector<float> source(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) source[static_cast<size_t>(j)] = at(start - margin + j);
  ASSIGN_OR_RETURN(const std::vector<float> resampled,
                   audio::Resample(source, recording.sample_rate, sample_rate, what));
  const int64_t skip = std::llround(static_cast<double>(margin) / ratio);
  const int64_t got = std::min<int64_t>(n, static_cast<int64_t>(resampled.size()) - skip);
  std::copy(resampled.begin() + skip, resampled.begin() + skip + std::max<int64_t>(0, got),
            out.begin());
  return out;
}

absl::StatusOr<std::unique_ptr<const AudioAugmenter>> AudioAugmenter::Create(
    const v1::AudioAugmentation& config, const v1::AudioFrontEnd& front_end,
    const std::string& field) {
  RETURN_IF_ERROR(ValidateAudioAugmentation(config, front_end, field));
  std::unique_ptr<AudioAugmenter> a(new AudioAugmenter);
  a->config_ = config;
  for (int colour : config.noise_colours()) a->sources_.push_back(SourceOf(colour));
  if (!config.noise_dir().empty()) {
    ASSIGN_OR_RETURN(a->recordings_,
                     ReadNoiseRecordings(config.noise_dir(), absl::StrCat(field, ".noise_dir")));
    a->sources_.push_back(NoiseSource::kRecording);
  }
  return std::unique_ptr<const AudioAugmenter>(std::move(a));
}

absl::StatusOr<std::vector<float>> AudioAugmenter::ChangeVoice(const audio::Clip& clip, Rng rng,
                                                               AugmentDraw& draw,
                                                               const std::string& what) const {
  if (config_.has_pitch_cents()) {
    draw.pitch_cents = rng.Uniform(config_.pitch_cents().min(), config_.pitch_cents().max());
  }
  if (config_.has_tempo()) draw.tempo = rng.Uniform(config_.tempo().min(), config_.tempo().max());
  ASSIGN_OR_RETURN(std::vector<float> x,
                   audio::PitchShift(clip.samples, clip.sample_rate, draw.pitch_cents, what));
  return audio::TimeStretch(x, clip.sample_rate, draw.tempo, what);
}

absl::Status AudioAugmenter::AddNoise(double signal_power, Rng& rng, uint64_t noise_seed,
                                      AugmentedClip& out, const std::string& what) const {
  AugmentDraw& d = out.draw;
  std::vector<float>& x = out.clip.samples;
  d.noise = sources_[static_cast<size_t>(rng.UniformInt(sources_.size()))];
  d.snr_db = config_.snr_db_size() > 0
                 ? config_.snr_db(static_cast<int>(rng.UniformInt(config_.snr_db_size())))
                 : rng.Uniform(config_.snr_db_range().min(), config_.snr_db_range().max());
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> noise;
  if (d.noise == NoiseSource::kRecording) {
    d.recording = static_cast<int64_t>(rng.UniformInt(recordings_.size()));
    const NoiseRecording& r = recordings_[static_cast<size_t>(d.recording)];
    d.excerpt_start = static_cast<int64_t>(rng.UniformInt(r.clip.samples.size()));
    ASSIGN_OR_RETURN(noise, RecordingExcerpt(r.clip, d.excerpt_start, n, out.clip.sample_rate,
                                             absl::StrCat(what, ": noise ", r.path)));
  } else {
    noise = ColouredNoise(d.noise, n, out.clip.sample_rate, noise_seed);
  }
  const double noise_power = MeanSquare(noise);
  if (signal_power <= 0 || noise_power <= 0) {  // a silent clip, or a silent excerpt
    d.noise = NoiseSource::kNone;
    return absl::OkStatus();
  }
  const double scale = std::sqrt(signal_power / (noise_power * std::pow(10.0, d.snr_db / 10)));
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    x[k] = static_cast<float>(x[k] + scale * noise[k]);
  }
  return absl::OkStatus();
}

absl::StatusOr<AugmentedClip> AudioAugmenter::Augment(const audio::Clip& clip, int64_t clip_index,
                                                      int copy, const std::string& what) const {
  const uint64_t seed = config_.seed();
  AugmentedClip out;
  out.clip.sample_rate = clip.sample_rate;
  std::vector<float> voiced;
  const std::vector<float>* samples = &clip.samples;
  if (config_.has_pitch_cents() || config_.has_tempo()) {
    ASSIGN_OR_RETURN(
        voiced, ChangeVoice(clip, StepRng(seed, clip_index, copy, kVoiceStep), out.draw, what));
    samples = &voiced;
  }
  if (config_.sample_rates_size() > 0) {
    Rng rng = StepRng(seed, clip_index, copy, kRateStep);
    out.clip.sample_rate =
        config_.sample_rates(static_cast<int>(rng.UniformInt(config_.sample_rates_size())));
    ASSIGN_OR_RETURN(out.clip.samples,
                     audio::Resample(*samples, clip.sample_rate, out.clip.sample_rate, what));
  } else {
    out.clip.samples = *samples;
  }
  out.draw.sample_rate = out.clip.sample_rate;
  out.draw.clip_samples = static_cast<int64_t>(out.clip.samples.size());
  const double signal_power = MeanSquare(out.clip.samples);
  if (config_.has_total_seconds()) {
    Rng rng = StepRng(seed, clip_index, copy, kPadStep);
    Pad(config_.total_seconds(), rng, out);
  }
  if (!sources_.empty()) {
    Rng rng = StepRng(seed, clip_index, copy, kNoiseStep);
    const uint64_t noise_seed = StepRng(seed, clip_index, copy, kNoiseSamplesStep).NextU64();
    RETURN_IF_ERROR(AddNoise(signal_power, rng, noise_seed, out, what));
  }
  if (config_.has_gain_db()) {
    Rng rng = StepRng(seed, clip_index, copy, kGainStep);
    ApplyGain(config_.gain_db(), rng, out);
  }
  return out;
}

}  // namespace invariant::train
