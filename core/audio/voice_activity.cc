#include "core/audio/voice_activity.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/audio/band_energies.h"

namespace invariant::audio {
namespace {

constexpr double kClampDb = 120;    // levels below P − 120 dB are P − 120
constexpr double kSilenceDb = 100;  // levels below P − 100 dB are not the floor

absl::Status Invalid(const std::string& field, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("audio.voice_activity.", field, ": ", message));
}

// *value = fallback when 0; then INVALID_ARGUMENT unless in [low, high].
absl::Status Default(double* value, double fallback, double low, double high, const char* field) {
  if (*value == 0) *value = fallback;
  if (!(*value >= low) || !(*value <= high)) {
    return Invalid(field, absl::StrCat(*value, " must be in [", low, ", ", high, "]"));
  }
  return absl::OkStatus();
}

// Mean power of frame t (blocks t and t + 1) for every frame.
std::vector<double> FramePowers(const std::vector<double>& blocks, int64_t n, int64_t hop) {
  const int64_t num_blocks = static_cast<int64_t>(blocks.size());
  std::vector<double> power(static_cast<size_t>(std::max<int64_t>(1, num_blocks - 1)));
  for (int64_t t = 0; t < static_cast<int64_t>(power.size()); ++t) {
    const int64_t end = std::min(n, (t + 2) * hop);
    const double sum = blocks[t] + (t + 1 < num_blocks ? blocks[t + 1] : 0.0);
    power[t] = sum / static_cast<double>(end - t * hop);
  }
  return power;
}

// The nearest-rank percentile (the ⌈p/100 · m⌉-th smallest) of `values`
// where `heard`; 0 when none is.
double Percentile(const std::vector<double>& values, const std::vector<bool>& heard, double p) {
  std::vector<double> kept;
  for (size_t t = 0; t < values.size(); ++t) {
    if (heard[t]) kept.push_back(values[t]);
  }
  if (kept.empty()) return 0;
  const auto m = static_cast<int64_t>(kept.size());
  const int64_t rank =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(p / 100 * m)) - 1, 0, m - 1);
  std::nth_element(kept.begin(), kept.begin() + rank, kept.end());
  return kept[rank];
}

struct Region {
  int64_t first = 0, last = 0;  // frames, inclusive
  double energy = 0;            // Σ (snr − 1)
};

// Runs of frames with offset[t] holding a frame with onset[t], merged across
// gaps of fewer than `max_gap` frames.
std::vector<Region> Regions(const std::vector<bool>& onset, const std::vector<bool>& offset,
                            int64_t max_gap) {
  std::vector<Region> regions;
  const int64_t frames = static_cast<int64_t>(offset.size());
  for (int64_t t = 0; t < frames;) {
    if (!offset[t]) {
      ++t;
      continue;
    }
    Region r{t, t, 0};
    bool on = false;
    for (; t < frames && offset[t]; ++t) on = on || onset[t];
    r.last = t - 1;
    if (!on) continue;
    if (!regions.empty() && r.first - regions.back().last - 1 < max_gap) {
      regions.back().last = r.last;
    } else {
      regions.push_back(r);
    }
  }
  return regions;
}

// Per frame: the mean over the octave bands of power / the band's floor (the
// a-posteriori SNR with every band whitened by the recording's own noise),
// and whether the frame is within range_db of the loudest (broadband, after
// the high-pass). Empty when x is silent.
struct FrameScores {
  std::vector<double> snr;
  std::vector<bool> in_range;
};

FrameScores Score(absl::Span<const float> x, int rate, const v1::VoiceActivity& spec, int64_t hop) {
  const int64_t n = static_cast<int64_t>(x.size());
  // Filter 0: the high-pass (broadband); then the octave bands.
  const std::vector<Biquad> filters = DetectorFilters(spec.high_pass_hz(), rate);
  const std::vector<std::vector<double>> blocks = BlockEnergies(x, filters, hop);
  const std::vector<double> broad = FramePowers(blocks[0], n, hop);
  const double loudest = *std::max_element(broad.begin(), broad.end());
  FrameScores scores;
  if (!(loudest > 0)) return scores;
  const int64_t frames = static_cast<int64_t>(broad.size());
  std::vector<bool> heard(static_cast<size_t>(frames));
  scores.in_range.resize(static_cast<size_t>(frames));
  const double heard_above = loudest * std::pow(10.0, -kSilenceDb / 10);
  const double range_above = loudest * std::pow(10.0, -spec.range_db() / 10);
  for (int64_t t = 0; t < frames; ++t) {
    heard[t] = broad[t] > heard_above;
    scores.in_range[t] = broad[t] >= range_above;
  }
  scores.snr.assign(static_cast<size_t>(frames), 0.0);
  const int bands = static_cast<int>(filters.size()) - 1;
  for (int band = 1; band <= bands; ++band) {
    const std::vector<double> power = FramePowers(blocks[band], n, hop);
    const double floor = std::max(Percentile(power, heard, spec.noise_percentile()),
                                  loudest * std::pow(10.0, -kClampDb / 10));
    for (int64_t t = 0; t < frames; ++t) scores.snr[t] += power[t] / floor;
  }
  for (double& v : scores.snr) v /= std::max(1, bands);
  return scores;
}

SpeechSpan FindSpeechInSound(absl::Span<const float> x, int sample_rate,
                             const v1::VoiceActivity& spec) {
  const int64_t n = static_cast<int64_t>(x.size());
  if (n == 0) return {};
  const int64_t hop = std::max<int64_t>(1, std::llround(spec.frame_seconds() * sample_rate / 2));
  const FrameScores scores = Score(x, sample_rate, spec, hop);
  const int64_t frames = static_cast<int64_t>(scores.snr.size());
  std::vector<bool> onset(static_cast<size_t>(frames)), offset(static_cast<size_t>(frames));
  const double on = std::pow(10.0, spec.onset_db() / 10),
               off = std::pow(10.0, spec.offset_db() / 10);
  for (int64_t t = 0; t < frames; ++t) {
    onset[t] = scores.in_range[t] && scores.snr[t] >= on;
    offset[t] = scores.in_range[t] && scores.snr[t] >= off;
  }
  const double seconds_per_frame = static_cast<double>(hop) / sample_rate;
  const auto max_gap = static_cast<int64_t>(std::ceil(spec.max_gap_seconds() / seconds_per_frame));
  std::vector<Region> regions = Regions(onset, offset, max_gap);
  const Region* best = nullptr;
  for (Region& r : regions) {
    const int64_t end = std::min(n, (r.last + 2) * hop);
    if (static_cast<double>(end - r.first * hop) / sample_rate < spec.min_speech_seconds())
      continue;
    for (int64_t t = r.first; t <= r.last; ++t) r.energy += std::max(0.0, scores.snr[t] - 1);
    if (best == nullptr || r.energy > best->energy) best = &r;
  }
  if (best == nullptr) return {};
  const auto margin = static_cast<int64_t>(std::llround(spec.margin_seconds() * sample_rate));
  SpeechSpan span;
  span.found = true;
  // A frame stands for its middle hop: [t·hop + hop/2, (t + 1)·hop + hop/2).
  span.begin = std::clamp<int64_t>(best->first * hop + hop / 2 - margin, 0, n - 1);
  span.end = std::clamp<int64_t>((best->last + 1) * hop + hop / 2 + margin, span.begin + 1, n);
  return span;
}

}  // namespace

absl::StatusOr<v1::VoiceActivity> CompleteVoiceActivity(v1::VoiceActivity spec, int sample_rate) {
  double v = spec.frame_seconds();
  if (absl::Status s = Default(&v, 0.02, 1e-3, 1, "frame_seconds"); !s.ok()) return s;
  spec.set_frame_seconds(v);
  v = spec.high_pass_hz();
  if (absl::Status s = Default(&v, 100, 1, 0.45 * sample_rate, "high_pass_hz"); !s.ok()) return s;
  spec.set_high_pass_hz(v);
  v = spec.noise_percentile();
  if (absl::Status s = Default(&v, 10, 0, 100, "noise_percentile"); !s.ok()) return s;
  spec.set_noise_percentile(v);
  v = spec.onset_db();
  if (absl::Status s = Default(&v, 9, 0, kSilenceDb, "onset_db"); !s.ok()) return s;
  spec.set_onset_db(v);
  v = spec.offset_db();
  if (absl::Status s = Default(&v, 4, 0, spec.onset_db(), "offset_db"); !s.ok()) return s;
  spec.set_offset_db(v);
  v = spec.range_db();
  if (absl::Status s = Default(&v, 40, 1, kSilenceDb, "range_db"); !s.ok()) return s;
  spec.set_range_db(v);
  v = spec.max_gap_seconds();
  if (absl::Status s = Default(&v, 0.25, 0, 10, "max_gap_seconds"); !s.ok()) return s;
  spec.set_max_gap_seconds(v);
  v = spec.min_speech_seconds();
  if (absl::Status s = Default(&v, 0.08, 0, 10, "min_speech_seconds"); !s.ok()) return s;
  spec.set_min_speech_seconds(v);
  v = spec.margin_seconds();
  if (absl::Status s = Default(&v, 0.01, 0, 10, "margin_seconds"); !s.ok()) return s;
  spec.set_margin_seconds(v);
  return spec;
}

SpeechSpan FindSpeech(absl::Span<const float> x, int sample_rate, const v1::VoiceActivity& spec) {
  // Leading and trailing digital silence is not part of the recording: the
  // frames start at its first non-zero sample, so padding with zeros cannot
  // move them.
  size_t lead = 0, tail = x.size();
  while (lead < tail && x[lead] == 0.0f) ++lead;
  while (tail > lead && x[tail - 1] == 0.0f) --tail;
  SpeechSpan span = FindSpeechInSound(x.subspan(lead, tail - lead), sample_rate, spec);
  span.begin += static_cast<int64_t>(lead);
  span.end += static_cast<int64_t>(lead);
  return span;
}

}  // namespace invariant::audio
