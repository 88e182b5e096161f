#include "core/audio/front_end.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/audio/compression.h"
#include "core/audio/constant_q.h"
#include "core/audio/fft.h"
#include "core/audio/resample.h"
#include "core/audio/spectrogram_ops.h"
#include "core/audio/voice_activity.h"
#include "core/audio/wav.h"
#include "core/base/math_constants.h"
#include "core/base/status_macros.h"

namespace invariant::audio {
inline namespace INVARIANT_FFT_NAMESPACE {
namespace {

absl::Status Invalid(const std::string& field, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("audio.", field, ": ", message));
}

// One thread's buffers (the FFT plans are the front end's, shared). Every
// workspace of a front end is built alike, so which one a call gets cannot
// change the result. The STFT's members are empty with the constant-Q bank
// and the other way round.
struct Workspace {
  std::vector<float> clip;                  // clip_samples
  FftBuffer<float> frame;                   // fft_length; the tail past frame_length stays 0
  FftBuffer<std::complex<float>> spectrum;  // fft_length / 2 + 1
  std::vector<float> magnitude;             // fft_length / 2 + 1
  ConstantQBank::WorkspacePtr constant_q;   // FILTERBANK_CONSTANT_Q
  std::vector<float> scratch;               // align_frequency or align_time: a row
};

}  // namespace

struct AudioFrontEnd::Plan {
  int64_t clip_samples = 0;
  int fft_length = 0;
  std::unique_ptr<const RealForwardFft> fft;  // the STFT's, fft_length points
  std::vector<float> window;                  // periodic Hann, frame_length values
  // Filter bank, sparse: output bin k sums weights[i] · |X[fft_bins[i]]| for
  // i in [starts[k], starts[k + 1]).
  std::vector<int> starts;
  std::vector<int> fft_bins;
  std::vector<float> weights;
  std::unique_ptr<const ConstantQBank> constant_q;  // instead of the STFT, when set
  int64_t row_values = 0;                           // align_frequency or align_time
  BinStatistic align_statistic = BinStatistic::kMean;

  std::mutex mutex;
  std::vector<std::unique_ptr<Workspace>> idle;

  std::unique_ptr<Workspace> Acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!idle.empty()) {
        std::unique_ptr<Workspace> w = std::move(idle.back());
        idle.pop_back();
        return w;
      }
    }
    auto w = std::make_unique<Workspace>();
    w->clip.assign(static_cast<size_t>(clip_samples), 0.0f);
    if (constant_q != nullptr) {
      w->constant_q = constant_q->NewWorkspace();
    } else {
      w->frame = FftBuffer<float>(static_cast<size_t>(fft_length));
      w->spectrum = FftBuffer<std::complex<float>>(static_cast<size_t>(fft_length / 2 + 1));
      w->magnitude.resize(static_cast<size_t>(fft_length / 2 + 1));
    }
    w->scratch.resize(static_cast<size_t>(row_values));
    return w;
  }

  // The STFT path: row[k·frames + t] = the triangles over |FFT| of frame t
  // of w.clip (compressed afterwards, compression.h).
  void StftBins(Workspace& w, int64_t frames, int frame_length, int hop, float* row) const;

  void Release(std::unique_ptr<Workspace> w) {
    std::lock_guard<std::mutex> lock(mutex);
    idle.push_back(std::move(w));
  }
};

namespace {

// Complete's steps after the clip and the bins: the filterbank, the
// alignments and the voice activity (spec->frames() set).
absl::Status CompleteAnalysis(v1::AudioFrontEnd* spec) {
  if (!v1::AudioFrontEnd::Filterbank_IsValid(spec->filterbank())) {
    return Invalid("filterbank", absl::StrCat("unknown value ", spec->filterbank()));
  }
  if (spec->filterbank() == v1::AudioFrontEnd::FILTERBANK_CONSTANT_Q) {
    if (spec->bandwidth_octaves() == 0) spec->set_bandwidth_octaves(1.0 / spec->bins_per_octave());
    if (!(spec->bandwidth_octaves() > 0) ||
        !(spec->bandwidth_octaves() <= AudioFrontEnd::kMaxBandwidthOctaves)) {
      return Invalid("bandwidth_octaves",
                     absl::StrCat(spec->bandwidth_octaves(), " must be in (0, ",
                                  AudioFrontEnd::kMaxBandwidthOctaves, "] octaves"));
    }
    RETURN_IF_ERROR(ConstantQBank::TransformLength(*spec).status());
  } else if (spec->bandwidth_octaves() != 0) {
    return Invalid("bandwidth_octaves", "is for filterbank FILTERBANK_CONSTANT_Q only");
  }
  if (spec->align_frequency()) {
    if (spec->align_bin() == 0) spec->set_align_bin((spec->frequency_bins() - 1) / 2.0);
    if (!(spec->align_bin() >= 0) || !(spec->align_bin() <= spec->frequency_bins() - 1)) {
      return Invalid("align_bin", absl::StrCat(spec->align_bin(), " must be a bin in [0, ",
                                               spec->frequency_bins() - 1, "]"));
    }
  } else if (spec->align_bin() != 0) {
    return Invalid("align_bin", "is for align_frequency only");
  }
  if (!v1::AudioFrontEnd::AlignStatistic_IsValid(spec->align_statistic())) {
    return Invalid("align_statistic", absl::StrCat("unknown value ", spec->align_statistic()));
  }
  if (spec->align_time() && spec->frames() < 2) {
    return Invalid("align_time",
                   absl::StrCat("needs at least 2 frames; the clip has ", spec->frames()));
  }
  if (spec->voice_activity().enabled()) {
    ASSIGN_OR_RETURN(*spec->mutable_voice_activity(),
                     CompleteVoiceActivity(spec->voice_activity(), spec->sample_rate()));
  } else if (spec->has_voice_activity() && spec->voice_activity().ByteSizeLong() > 0) {
    return Invalid("voice_activity", "set without enabled: true");
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// sample_rate, clip_seconds, clip_policy, normalisation, trim_db (defaulted).
absl::Status CompleteClip(v1::AudioFrontEnd* spec) {
  const int rate = spec->sample_rate();
  if (rate < kMinSampleRate || rate > kMaxSampleRate) {
    return Invalid("sample_rate", absl::StrCat(rate, " Hz is outside [", kMinSampleRate, ", ",
                                               kMaxSampleRate, "]"));
  }
  if (!(spec->clip_seconds() > 0) || !(spec->clip_seconds() <= AudioFrontEnd::kMaxClipSeconds)) {
    return Invalid("clip_seconds", absl::StrCat(spec->clip_seconds(), " must be in (0, ",
                                                AudioFrontEnd::kMaxClipSeconds, "]"));
  }
  if (!v1::AudioFrontEnd::ClipPolicy_IsValid(spec->clip_policy())) {
    return Invalid("clip_policy", absl::StrCat("unknown value ", spec->clip_policy()));
  }
  if (!v1::AudioFrontEnd::Normalisation_IsValid(spec->normalisation())) {
    return Invalid("normalisation", absl::StrCat("unknown value ", spec->normalisation()));
  }
  if (spec->trim_db() == 0) spec->set_trim_db(40);
  if (!(spec->trim_db() > 0) || !std::isfinite(spec->trim_db())) {
    return Invalid("trim_db", absl::StrCat(spec->trim_db(), " must be positive (decibels)"));
  }
  return absl::OkStatus();
}

// frame_length, hop_length, fft_length (defaulted) and the clip's samples
// against them; the samples of one clip.
absl::StatusOr<int64_t> CompleteFraming(v1::AudioFrontEnd* spec) {
  const int rate = spec->sample_rate();
  if (spec->frame_length() < 2 || spec->frame_length() > AudioFrontEnd::kMaxFftLength) {
    return Invalid("frame_length", absl::StrCat(spec->frame_length(), " must be in [2, ",
                                                AudioFrontEnd::kMaxFftLength, "]"));
  }
  if (spec->hop_length() < 1) {
    return Invalid("hop_length", absl::StrCat(spec->hop_length(), " must be at least 1"));
  }
  if (spec->fft_length() == 0) {
    int n = 2;
    while (n < spec->frame_length()) n *= 2;
    spec->set_fft_length(n);
  }
  if (spec->fft_length() < spec->frame_length() ||
      spec->fft_length() > AudioFrontEnd::kMaxFftLength || spec->fft_length() % 2 != 0) {
    return Invalid(
        "fft_length",
        absl::StrCat(spec->fft_length(), " must be even, at least frame_length (",
                     spec->frame_length(), ") and at most ", AudioFrontEnd::kMaxFftLength));
  }
  const int64_t clip_samples = AudioFrontEnd::ClipSamples(*spec);
  if (clip_samples > AudioFrontEnd::kMaxClipSamples) {
    return Invalid("clip_seconds",
                   absl::StrCat(spec->clip_seconds(), " s at ", rate, " Hz is ", clip_samples,
                                " samples, more than ", AudioFrontEnd::kMaxClipSamples));
  }
  if (clip_samples < spec->frame_length()) {
    return Invalid(
        "clip_seconds",
        absl::StrCat(spec->clip_seconds(), " s at ", rate, " Hz is ", clip_samples,
                     " samples, shorter than one frame (frame_length ", spec->frame_length(), ")"));
  }
  return clip_samples;
}

// min_frequency, bins_per_octave, frequency_bins below Nyquist,
// compression_gain (defaulted), max_clip_seconds.
absl::Status CompleteFrequencies(v1::AudioFrontEnd* spec) {
  const int rate = spec->sample_rate();
  if (!(spec->min_frequency() > 0) || !std::isfinite(spec->min_frequency())) {
    return Invalid("min_frequency", absl::StrCat(spec->min_frequency(), " must be positive (Hz)"));
  }
  // At least one bin per octave: coarser bins reach past every spectrum and
  // their triangles' edges overflow the FFT bin index.
  if (!(spec->bins_per_octave() >= 1) || !std::isfinite(spec->bins_per_octave())) {
    return Invalid("bins_per_octave", absl::StrCat(spec->bins_per_octave(), " must be at least 1"));
  }
  if (spec->frequency_bins() < 1) {
    return Invalid("frequency_bins", absl::StrCat(spec->frequency_bins(), " must be at least 1"));
  }
  const double highest =
      spec->min_frequency() * std::exp2((spec->frequency_bins() - 1) / spec->bins_per_octave());
  if (!(highest < rate / 2.0)) {
    return Invalid(
        "frequency_bins",
        absl::StrCat(spec->frequency_bins(), " bins from ", spec->min_frequency(), " Hz at ",
                     spec->bins_per_octave(), " per octave reach a centre of ", highest,
                     " Hz, at or above the Nyquist frequency ", rate / 2.0, " Hz"));
  }
  if (spec->compression_gain() == 0) spec->set_compression_gain(1);
  if (!(spec->compression_gain() > 0) ||
      !(spec->compression_gain() <= AudioFrontEnd::kMaxCompressionGain)) {
    return Invalid("compression_gain", absl::StrCat(spec->compression_gain(), " must be in (0, ",
                                                    AudioFrontEnd::kMaxCompressionGain, "]"));
  }
  if (!(spec->max_clip_seconds() >= 0) ||
      !(spec->max_clip_seconds() <= AudioFrontEnd::kMaxClipSeconds)) {
    return Invalid("max_clip_seconds", absl::StrCat(spec->max_clip_seconds(), " must be in [0, ",
                                                    AudioFrontEnd::kMaxClipSeconds, "] (0 means ",
                                                    AudioFrontEnd::kDefaultMaxClipSeconds, " s)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::AudioFrontEnd> AudioFrontEnd::Complete(v1::AudioFrontEnd spec) {
  RETURN_IF_ERROR(CompleteClip(&spec));
  ASSIGN_OR_RETURN(const int64_t clip_samples, CompleteFraming(&spec));
  RETURN_IF_ERROR(CompleteFrequencies(&spec));
  RETURN_IF_ERROR(CompleteCompression(&spec));
  const int64_t frames = 1 + (clip_samples - spec.frame_length()) / spec.hop_length();
  if (spec.frames() != 0 && spec.frames() != frames) {
    return Invalid("frames", absl::StrCat(spec.frames(), " disagrees with the ", frames,
                                          " frames the clip length, frame_length and "
                                          "hop_length give"));
  }
  if (frames * spec.frequency_bins() > kMaxRowValues) {
    return Invalid("frequency_bins",
                   absl::StrCat(spec.frequency_bins(), " bins × ", frames, " frames is more than ",
                                kMaxRowValues, " values in a row"));
  }
  spec.set_frames(static_cast<int32_t>(frames));
  RETURN_IF_ERROR(CompleteAnalysis(&spec));
  return spec;
}

absl::StatusOr<std::unique_ptr<const AudioFrontEnd>> AudioFrontEnd::Create(
    const v1::AudioFrontEnd& spec) {
  ASSIGN_OR_RETURN(v1::AudioFrontEnd completed, Complete(spec));
  std::unique_ptr<AudioFrontEnd> front(new AudioFrontEnd());
  front->spec_ = std::move(completed);
  const v1::AudioFrontEnd& s = front->spec_;
  auto plan = std::make_unique<Plan>();
  plan->clip_samples = ClipSamples(s);
  if (s.align_frequency() || s.align_time()) plan->row_values = s.frequency_bins() * s.frames();
  if (s.align_frequency()) {
    if (s.align_statistic() == v1::AudioFrontEnd::ALIGN_STATISTIC_STDDEV) {
      plan->align_statistic = BinStatistic::kStddev;
    }
  }
  if (s.filterbank() == v1::AudioFrontEnd::FILTERBANK_CONSTANT_Q) {
    ASSIGN_OR_RETURN(plan->constant_q, ConstantQBank::Create(s));
    front->plan_ = std::move(plan);
    return std::unique_ptr<const AudioFrontEnd>(std::move(front));
  }
  plan->fft_length = s.fft_length();
  ASSIGN_OR_RETURN(plan->fft, RealForwardFft::Create(plan->fft_length));
  const int length = s.frame_length();
  plan->window.resize(static_cast<size_t>(length));
  for (int i = 0; i < length; ++i) {
    plan->window[i] = static_cast<float>(0.5 - 0.5 * std::cos(2.0 * kPi * i / length));
  }
  // Triangles on the FFT bin frequencies j·Δf, each side at least Δf wide
  // (a triangle narrower than the FFT grid becomes linear interpolation of
  // the spectrum at its centre), normalised to unit sum.
  const double df = static_cast<double>(s.sample_rate()) / plan->fft_length;
  const int last_fft_bin = plan->fft_length / 2;
  const double step = std::exp2(1.0 / s.bins_per_octave());
  plan->starts.push_back(0);
  for (int k = 0; k < s.frequency_bins(); ++k) {
    const double c = s.min_frequency() * std::exp2(k / s.bins_per_octave());
    const double below = std::max(c - c / step, df);
    const double above = std::max(c * step - c, df);
    const int first = std::max(0, static_cast<int>(std::ceil((c - below) / df)));
    const int last = std::min(last_fft_bin, static_cast<int>(std::floor((c + above) / df)));
    double sum = 0.0;
    std::vector<double> w;
    for (int j = first; j <= last; ++j) {
      const double f = j * df;
      const double weight = f <= c ? 1.0 - (c - f) / below : 1.0 - (f - c) / above;
      if (weight <= 0.0) continue;
      plan->fft_bins.push_back(j);
      w.push_back(weight);
      sum += weight;
    }
    // sum > 0: the FFT bin nearest c is at most Δf/2 from it (c < Nyquist).
    for (const double weight : w) plan->weights.push_back(static_cast<float>(weight / sum));
    plan->starts.push_back(static_cast<int>(plan->weights.size()));
  }
  front->plan_ = std::move(plan);
  return std::unique_ptr<const AudioFrontEnd>(std::move(front));
}

AudioFrontEnd::~AudioFrontEnd() = default;

int64_t AudioFrontEnd::ClipSamples(const v1::AudioFrontEnd& spec) {
  return std::llround(spec.clip_seconds() * spec.sample_rate());
}

int64_t AudioFrontEnd::MaxSamples(int sample_rate) const {
  const double seconds =
      spec_.max_clip_seconds() == 0 ? kDefaultMaxClipSeconds : spec_.max_clip_seconds();
  return std::max<int64_t>(1, std::llround(seconds * sample_rate));
}

namespace {

// Resampled clips keep this much audio beyond the clip policy's window on
// each side (the resampler's filter needs it at the window's edges).
constexpr double kResampleMarginSeconds = 0.01;

float Peak(absl::Span<const float> x) {
  float peak = 0.0f;
  for (const float v : x) peak = std::max(peak, std::fabs(v));
  return peak;
}

// x without its leading and trailing samples quieter than trim_db below its
// peak (`peak` = Peak(x)); a silent x is kept whole.
absl::Span<const float> TrimSilence(absl::Span<const float> x, float peak, double trim_db) {
  if (peak <= 0.0f) return x;
  const float threshold = static_cast<float>(peak * std::pow(10.0, -trim_db / 20.0));
  size_t first = 0, last = x.size() - 1;
  while (std::fabs(x[first]) < threshold) ++first;  // stops at the peak at the latest
  while (std::fabs(x[last]) < threshold) --last;
  return x.subspan(first, last - first + 1);
}

// The content of a checked clip at the model's rate: the speech
// (voice_activity) or the whole clip, trimmed (trim_silence); resampled into
// *resampled when the rates differ. *speech: where the content lies in the
// clip's own time.
absl::StatusOr<absl::Span<const float>> Content(const v1::AudioFrontEnd& s,
                                                absl::Span<const float> samples, int sample_rate,
                                                std::vector<float>* resampled, ClipSpeech* speech,
                                                const std::string& what) {
  const bool detect = s.voice_activity().enabled();
  absl::Span<const float> x = samples;
  double origin = 0;  // seconds of the clip before x's first sample
  if (sample_rate != s.sample_rate()) {
    // Without voice activity only what the clip policy can keep is
    // resampled: the clip trimmed at its own rate (the rule below), then its
    // clip_seconds window (centred or from the start) with
    // kResampleMarginSeconds more on each side for the resampler's filter,
    // so the cost is bounded by clip_seconds. The detector needs the whole
    // clip (bounded by max_clip_seconds).
    absl::Span<const float> kept = samples;
    if (!detect) {
      if (s.trim_silence()) kept = TrimSilence(kept, Peak(kept), s.trim_db());
      const int64_t margin = static_cast<int64_t>(std::ceil(kResampleMarginSeconds * sample_rate));
      const int64_t window =
          static_cast<int64_t>(std::ceil(s.clip_seconds() * sample_rate)) + 2 * margin;
      const int64_t n = static_cast<int64_t>(kept.size());
      if (n > window) {
        const bool centre = s.clip_policy() == v1::AudioFrontEnd::CLIP_POLICY_CENTRE;
        kept = kept.subspan(static_cast<size_t>(centre ? (n - window) / 2 : 0),
                            static_cast<size_t>(window));
      }
    }
    origin = static_cast<double>(kept.data() - samples.data()) / sample_rate;
    ASSIGN_OR_RETURN(*resampled, Resample(kept, sample_rate, s.sample_rate(), what));
    x = *resampled;
  }
  const float* base = x.data();
  speech->found = true;
  if (detect) {
    const SpeechSpan span = FindSpeech(x, s.sample_rate(), s.voice_activity());
    speech->found = span.found;
    if (span.found) x = x.subspan(span.begin, span.end - span.begin);
  }
  if (s.trim_silence()) x = TrimSilence(x, Peak(x), s.trim_db());
  const double rate = s.sample_rate();
  speech->start_seconds = origin + static_cast<double>(x.data() - base) / rate;
  speech->end_seconds = speech->start_seconds + static_cast<double>(x.size()) / rate;
  return x;
}

// What the normalisation multiplies the content by: 1 / its peak or RMS, or 1
// (NONE, and a silent clip, which stays zero).
double NormalisationScale(const v1::AudioFrontEnd& s, absl::Span<const float> x) {
  if (s.normalisation() == v1::AudioFrontEnd::NORMALISATION_PEAK) {
    const float peak = Peak(x);
    return peak > 0.0f ? 1.0 / peak : 1.0;
  }
  if (s.normalisation() == v1::AudioFrontEnd::NORMALISATION_RMS) {
    double sum = 0.0;
    for (const float v : x) sum += double{v} * v;
    const double rms = std::sqrt(sum / x.size());
    if (rms > 0.0) return 1.0 / rms;
  }
  return 1.0;
}

}  // namespace

absl::Status AudioFrontEnd::CheckSamples(absl::Span<const float> samples, int sample_rate,
                                         const std::string& what) const {
  if (samples.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": zero samples"));
  if (sample_rate < kMinSampleRate || sample_rate > kMaxSampleRate) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": sample rate ", sample_rate,
                                                   " Hz outside [", kMinSampleRate, ", ",
                                                   kMaxSampleRate, "]"));
  }
  const int64_t max_samples = MaxSamples(sample_rate);
  if (static_cast<int64_t>(samples.size()) > max_samples) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", samples.size(), " samples at ", sample_rate, " Hz, more than the ", max_samples,
        " the longest clip (max_clip_seconds ",
        spec_.max_clip_seconds() == 0 ? kDefaultMaxClipSeconds : spec_.max_clip_seconds(),
        " s) allows"));
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!std::isfinite(samples[i])) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": sample ", i, " is NaN or infinite"));
    }
    if (std::fabs(samples[i]) > kMaxSampleMagnitude) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": sample ", i, " is ", samples[i],
                                                     ", beyond ±", kMaxSampleMagnitude));
    }
  }
  return absl::OkStatus();
}

absl::Status AudioFrontEnd::Apply(absl::Span<const float> samples, int sample_rate, float* row,
                                  const std::string& what, ClipSpeech* speech) const {
  RETURN_IF_ERROR(CheckSamples(samples, sample_rate, what));
  const v1::AudioFrontEnd& s = spec_;
  std::vector<float> resampled;
  ClipSpeech found;
  ASSIGN_OR_RETURN(absl::Span<const float> x,
                   Content(s, samples, sample_rate, &resampled, &found, what));
  if (speech != nullptr) *speech = found;
  const double scale = NormalisationScale(s, x);

  Plan& plan = *plan_;
  std::unique_ptr<Workspace> w = plan.Acquire();
  // The clip policy: crop or zero-pad to clip_samples.
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t length = plan.clip_samples;
  const bool centre = s.clip_policy() == v1::AudioFrontEnd::CLIP_POLICY_CENTRE;
  const int64_t source = n > length && centre ? (n - length) / 2 : 0;
  const int64_t target = n < length && centre ? (length - n) / 2 : 0;
  const int64_t copied = std::min(n, length);
  std::fill(w->clip.begin(), w->clip.end(), 0.0f);
  // In double: 1 / peak of a subnormal clip is beyond the float range.
  for (int64_t i = 0; i < copied; ++i) {
    w->clip[target + i] = static_cast<float>(x[source + i] * scale);
  }

  const int64_t frames = s.frames();
  const int frame_length = s.frame_length();
  const int hop = s.hop_length();
  // With align_time, the content's frames are stretched over the row:
  // output frame j reads frame source_frame(j), affine in j (frame j's
  // centre, j·hop + frame_length/2 in a clip the content fills, read at the
  // same fraction of the content: sample target + (j·hop +
  // frame_length/2)·copied/length).
  const bool stretch = s.align_time() && copied < length;
  const double ratio = static_cast<double>(copied) / static_cast<double>(length);
  const double half = frame_length / 2.0;
  const auto source_frame = [&](int64_t j) {
    return (static_cast<double>(target) + (static_cast<double>(j) * hop + half) * ratio - half) /
           hop;
  };
  const double first = source_frame(0), last = source_frame(frames - 1);
  if (plan.constant_q != nullptr) {
    // Only the frames the stretch reads are computed.
    int64_t begin = 0, end = frames;
    if (stretch) StretchedFrames(frames, first, last, &begin, &end);
    plan.constant_q->Apply(
        w->clip.data(), *w->constant_q, begin, end, row,
        [&](int64_t k0, int64_t k1) { Compress(s, frames, k0, k1, begin, end, row); });
  } else {
    plan.StftBins(*w, frames, frame_length, hop, row);
    Compress(s, frames, 0, s.frequency_bins(), 0, frames, row);
  }
  if (stretch) {
    StretchFrames(row, s.frequency_bins(), frames, first, last, w->scratch.data());
  }
  if (s.align_frequency()) {
    AlignFrequencyCentroid(row, s.frequency_bins(), frames, s.align_bin(), w->scratch.data(),
                           plan.align_statistic);
  }
  plan.Release(std::move(w));
  if (s.subtract_frequency_mean()) SubtractFrequencyMean(row, s.frequency_bins(), frames);
  return absl::OkStatus();
}

void AudioFrontEnd::Plan::StftBins(Workspace& w, int64_t frames, int frame_length, int hop,
                                   float* row) const {
  const Plan& plan = *this;
  const int spectrum_bins = plan.fft_length / 2 + 1;
  const int64_t bins = static_cast<int64_t>(plan.starts.size()) - 1;
  for (int64_t t = 0; t < frames; ++t) {
    const float* in = w.clip.data() + t * hop;
    for (int i = 0; i < frame_length; ++i) w.frame[i] = in[i] * plan.window[i];
    plan.fft->Execute(w.frame.data(), w.spectrum.data());
    for (int j = 0; j < spectrum_bins; ++j) {
      const std::complex<float> z = w.spectrum[j];
      w.magnitude[j] = std::sqrt(z.real() * z.real() + z.imag() * z.imag());
    }
    for (int64_t k = 0; k < bins; ++k) {
      float v = 0.0f;
      for (int i = plan.starts[k]; i < plan.starts[k + 1]; ++i) {
        v += plan.weights[i] * w.magnitude[plan.fft_bins[i]];
      }
      row[k * frames + t] = v;
    }
  }
}

std::vector<float> Int16ToFloat(absl::Span<const int16_t> pcm) {
  std::vector<float> out(pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) out[i] = pcm[i] / 32768.0f;
  return out;
}

}  // namespace INVARIANT_FFT_NAMESPACE
}  // namespace invariant::audio
