// audio_distribution.h: the product distribution over spectrogram transforms
// (AudioTransform): pitch × tempo × time shift, each factor drawn
// independently (invariant.v1.AudioTransformGroup).
//
// symmetric(): true exactly when g and g⁻¹ have the same law. With
// g⁻¹ = (−c, 1/a, −a·s) (audio_transform.h), for independent factors that
// holds iff the pitch law is symmetric about 0
// (ScalarDistribution::SymmetricAboutZero), the tempo law is symmetric under
// a ↦ 1/a (Fixed(1) or LogNormal(0, ·); a uniform tempo never is), and one of:
//   * no time shift (Fixed(0));
//   * tempo Fixed(1) and the time shift law symmetric about 0.
// A random tempo with a random time shift is NOT symmetric (−a·s depends on
// a): moving its draws onto the templates changes the kernel slightly
// (docs/math.md §1), as for the image group's scale × translation.
#ifndef INVARIANT_CORE_GROUPS_AUDIO_DISTRIBUTION_H_
#define INVARIANT_CORE_GROUPS_AUDIO_DISTRIBUTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/groups/audio_transform.h"
#include "core/groups/group.h"
#include "core/groups/scalar_distribution.h"

namespace invariant {

struct AudioTransformLaw {
  ScalarDistribution pitch_cents = ScalarDistribution::Fixed(0.0);  // c, cents
  ScalarDistribution tempo = ScalarDistribution::Fixed(1.0);        // a > 0
  ScalarDistribution time_shift = ScalarDistribution::Fixed(0.0);   // s, frames
};

class AudioTransformDistribution final : public GroupDistribution {
 public:
  // `action` must not be null; `law.tempo` must only produce a > 0.
  AudioTransformDistribution(std::unique_ptr<AudioTransform> action, AudioTransformLaw law)
      : action_(std::move(action)), law_(law) {}

  const GroupAction& action() const override { return *action_; }
  const AudioTransformLaw& law() const { return law_; }
  std::string name() const override;
  // Each draw samples c, a, s in that order (ScalarDistribution::Sample).
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override;

 private:
  std::unique_ptr<AudioTransform> action_;
  AudioTransformLaw law_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_AUDIO_DISTRIBUTION_H_
