#include "core/groups/audio_distribution.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

// Relative slack when comparing a whole shift with a range's ends, so that
// e.g. −100 cents at 36 bins per octave (b = −3) counts as inside [−100, 100].
constexpr double kRangeSlack = 1e-9;

struct Range {
  double low, high;
};

// The [low, high] a fixed or uniform law covers, in its own units.
absl::StatusOr<Range> RangeOf(const std::string& field, const ScalarDistribution& law) {
  switch (law.kind()) {
    case ScalarDistribution::Kind::kFixed:
      return Range{law.p0(), law.p0()};
    case ScalarDistribution::Kind::kUniform:
      return Range{law.p0(), law.p1()};
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("group.enumerate needs ", field, " unset, fixed or uniform, got ", law.name()));
}

// Every integer k with low ≤ k·unit ≤ high (up to kRangeSlack).
absl::StatusOr<std::vector<int64_t>> WholeSteps(const std::string& field, const Range& r,
                                                double unit, int64_t limit) {
  auto slack = [](double v) { return kRangeSlack * std::max(1.0, std::abs(v)); };
  const double first = std::ceil((r.low - slack(r.low)) / unit);
  const double last = std::floor((r.high + slack(r.high)) / unit);
  if (last < first) {
    return absl::InvalidArgumentError(absl::StrCat("group.enumerate needs ", field,
                                                   " to hold a whole shift (a multiple of ", unit,
                                                   "), got [", r.low, ", ", r.high, "]"));
  }
  if (last - first + 1 > static_cast<double>(limit)) {
    return absl::InvalidArgumentError(absl::StrCat("group.enumerate: ", field, " [", r.low, ", ",
                                                   r.high, "] holds ", last - first + 1,
                                                   " whole shifts, more than ", limit));
  }
  std::vector<int64_t> steps;
  for (double k = first; k <= last; k += 1.0) steps.push_back(static_cast<int64_t>(k));
  return steps;
}

}  // namespace

absl::StatusOr<std::vector<GroupElement>> IntegerShifts(const AudioTransform& action,
                                                        const AudioTransformLaw& law) {
  if (!law.tempo.IsFixedAt(1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group.enumerate needs group.audio.tempo unset or fixed at 1, got ", law.tempo.name()));
  }
  const std::string pitch_field = "group.audio.pitch_cents";
  const std::string time_field = "group.audio.time_shift";
  absl::StatusOr<Range> pitch = RangeOf(pitch_field, law.pitch_cents);
  if (!pitch.ok()) return pitch.status();
  absl::StatusOr<Range> time = RangeOf(time_field, law.time_shift);
  if (!time.ok()) return time.status();
  const double cents_per_bin = 1200.0 / action.bins_per_octave();
  absl::StatusOr<std::vector<int64_t>> bins =
      WholeSteps(pitch_field, *pitch, cents_per_bin, kMaxEnumeratedAudioShifts);
  if (!bins.ok()) return bins.status();
  absl::StatusOr<std::vector<int64_t>> frames =
      WholeSteps(time_field, *time, 1.0, kMaxEnumeratedAudioShifts);
  if (!frames.ok()) return frames.status();
  const int64_t count = static_cast<int64_t>(bins->size() * frames->size());
  if (count > kMaxEnumeratedAudioShifts) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group.enumerate: group.audio lists ", bins->size(), " pitch bins x ", frames->size(),
        " frame shifts = ", count, " elements, more than ", kMaxEnumeratedAudioShifts));
  }
  std::vector<GroupElement> elements;
  elements.reserve(static_cast<size_t>(count));
  for (int64_t b : *bins) {
    for (int64_t s : *frames) {
      elements.push_back(AudioTransform::Element(static_cast<double>(b) * cents_per_bin, 1.0,
                                                 static_cast<double>(s)));
    }
  }
  return elements;
}

std::string AudioTransformDistribution::name() const {
  if (!elements_.empty()) {
    const GroupElement& lo = elements_.front();
    const GroupElement& hi = elements_.back();
    return absl::StrCat(action_->name(), " ~ uniform over ", elements_.size(),
                        " integer shifts: pitch bins ",
                        std::lround(action_->PitchBins(lo.params[0])), "..",
                        std::lround(action_->PitchBins(hi.params[0])), " x frames ",
                        std::lround(lo.params[2]), "..", std::lround(hi.params[2]));
  }
  return absl::StrCat(action_->name(), " ~ pitch_cents ", law_.pitch_cents.name(), " x tempo ",
                      law_.tempo.name(), " x time_shift ", law_.time_shift.name());
}

std::vector<GroupElement> AudioTransformDistribution::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) {
    if (!elements_.empty()) {
      draws.push_back(elements_[rng.UniformInt(static_cast<uint64_t>(elements_.size()))]);
      continue;
    }
    const double c = law_.pitch_cents.Sample(rng);
    const double a = law_.tempo.Sample(rng);
    const double s = law_.time_shift.Sample(rng);
    draws.push_back(AudioTransform::Element(c, a, s));
  }
  return draws;
}

bool AudioTransformDistribution::symmetric() const {
  if (!elements_.empty()) {
    // Whole shifts (b, s) with inverse (−b, −s): compare as integers.
    std::set<std::pair<int64_t, int64_t>> listed;
    for (const GroupElement& g : elements_) {
      listed.emplace(std::lround(action_->PitchBins(g.params[0])), std::lround(g.params[2]));
    }
    for (const auto& [b, s] : listed) {
      if (listed.count({-b, -s}) == 0) return false;
    }
    return true;
  }
  if (!law_.pitch_cents.SymmetricAboutZero() || !law_.tempo.SymmetricUnderReciprocal()) {
    return false;
  }
  if (law_.time_shift.IsFixedAt(0.0)) return true;
  return law_.tempo.IsFixedAt(1.0) && law_.time_shift.SymmetricAboutZero();
}

}  // namespace invariant
