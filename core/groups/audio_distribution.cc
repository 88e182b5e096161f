#include "core/groups/audio_distribution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace invariant {

std::string AudioTransformDistribution::name() const {
  return absl::StrCat(action_->name(), " ~ pitch_cents ", law_.pitch_cents.name(), " x tempo ",
                      law_.tempo.name(), " x time_shift ", law_.time_shift.name());
}

std::vector<GroupElement> AudioTransformDistribution::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) {
    const double c = law_.pitch_cents.Sample(rng);
    const double a = law_.tempo.Sample(rng);
    const double s = law_.time_shift.Sample(rng);
    draws.push_back(AudioTransform::Element(c, a, s));
  }
  return draws;
}

bool AudioTransformDistribution::symmetric() const {
  if (!law_.pitch_cents.SymmetricAboutZero() || !law_.tempo.SymmetricUnderReciprocal()) {
    return false;
  }
  if (law_.time_shift.IsFixedAt(0.0)) return true;
  return law_.tempo.IsFixedAt(1.0) && law_.time_shift.SymmetricAboutZero();
}

}  // namespace invariant
