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
//
// Enumerated (group.enumerate, IntegerShifts): the finite set of integer
// frequency-bin shifts b with low ≤ b·1200/bins_per_octave ≤ high of the
// pitch law × integer frame shifts s with low ≤ s ≤ high of the time-shift
// law (an unset or fixed law: its value, which must then be a whole shift;
// tempo fixed at 1). Listed b-major, both ascending; draws are uniform over
// the list; symmetric() iff the list holds every element's inverse. These
// elements move values exactly (audio_transform.h: whole-bin and whole-frame
// shifts with a = 1 are snapped and copied, zero filled), so the
// certificate checks them exhaustively.
#ifndef INVARIANT_CORE_GROUPS_AUDIO_DISTRIBUTION_H_
#define INVARIANT_CORE_GROUPS_AUDIO_DISTRIBUTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/groups/audio_transform.h"
#include "core/groups/group.h"
#include "core/groups/scalar_distribution.h"

namespace invariant {

struct AudioTransformLaw {
  ScalarDistribution pitch_cents = ScalarDistribution::Fixed(0.0);  // c, cents
  ScalarDistribution tempo = ScalarDistribution::Fixed(1.0);        // a > 0
  ScalarDistribution time_shift = ScalarDistribution::Fixed(0.0);   // s, frames
};

// The most elements an enumerated audio law may list.
inline constexpr int64_t kMaxEnumeratedAudioShifts = 40320;

// The integer shifts of an enumerated law (above), as AudioTransform
// elements {b·1200/bins_per_octave, 1, s}. INVALID_ARGUMENT naming the field
// ("group.enumerate needs group.audio.tempo unset or fixed at 1, got ...")
// when tempo is not fixed at 1, pitch_cents or time_shift is neither fixed
// nor uniform, a range holds no whole shift, or the list would exceed
// kMaxEnumeratedAudioShifts elements.
absl::StatusOr<std::vector<GroupElement>> IntegerShifts(const AudioTransform& action,
                                                        const AudioTransformLaw& law);

class AudioTransformDistribution final : public GroupDistribution {
 public:
  // `action` must not be null; `law.tempo` must only produce a > 0.
  AudioTransformDistribution(std::unique_ptr<AudioTransform> action, AudioTransformLaw law)
      : action_(std::move(action)), law_(law) {}
  // The enumerated law: uniform over `elements` (IntegerShifts; not empty).
  AudioTransformDistribution(std::unique_ptr<AudioTransform> action, AudioTransformLaw law,
                             std::vector<GroupElement> elements)
      : action_(std::move(action)), law_(law), elements_(std::move(elements)) {}

  const GroupAction& action() const override { return *action_; }
  const AudioTransformLaw& law() const { return law_; }
  std::string name() const override;
  // Each draw samples c, a, s in that order (ScalarDistribution::Sample);
  // enumerated: one uniform pick from the list per draw.
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override;
  bool enumerable() const override { return !elements_.empty(); }
  std::vector<GroupElement> Enumerate() const override { return elements_; }

 private:
  std::unique_ptr<AudioTransform> action_;
  AudioTransformLaw law_;
  std::vector<GroupElement> elements_;  // not empty: the enumerated law
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_AUDIO_DISTRIBUTION_H_
