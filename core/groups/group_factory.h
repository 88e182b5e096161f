// group_factory.h: the one entry point other modules use to turn an
// invariant.v1.GroupSpec into a GroupDistribution (and its GroupAction), to
// decide where its draws are applied, and to draw the elements.
//
// MakeGroupDistribution validates every field before building anything and
// returns INVALID_ARGUMENT naming the field, the allowed values and the value
// received, e.g.
//   "group.block_permutation.num_blocks must be in [1, 65536], got 0".
// What each GroupSpec kind becomes:
//   permutation          UniformPermutations(CoordinatePermutation(dim))
//   block_permutation    UniformPermutations(BlockPermutation(num_blocks, block_size))
//   matrix_permutation   NoisySort(MatrixPermutation(n), σ) when noisy_sort_sigma > 0,
//                        NoisySort(…, 0) when sigma = 0 and sort_rows,
//                        UniformPermutations(MatrixPermutation(n)) otherwise
//   cyclic_shift         UniformShifts(CyclicShift(length), max_shift)
//   sign_flip            UniformSignFlips(SignFlip(dim))
//   image                ImageTransformDistribution(ImageTransform(h, w, c), law);
//                        an unset factor is the identity (θ = 0, t = 0, a = 1)
//   audio                AudioTransformDistribution(AudioTransform(bins, frames, bpo), law);
//                        an unset factor is the identity (c = 0, a = 1, s = 0)
//   dihedral             UniformDihedral(DihedralAction(h, w, c), turns, flips)
//                        (core/groups/dihedral.h); turns need h == w, and at
//                        least one of turns, flips is set
//   identity             IdentityDistribution(IdentityAction(dim)): the plain,
//                        non-invariant encoders (core/groups/identity_group.h)
// The element conventions are documented in each action's header.
#ifndef INVARIANT_CORE_GROUPS_GROUP_FACTORY_H_
#define INVARIANT_CORE_GROUPS_GROUP_FACTORY_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/random.h"
#include "core/groups/group.h"
#include "invariant/v1/group.pb.h"

namespace invariant {

// Largest vector length (floats) any action built from a spec may act on.
inline constexpr int64_t kMaxGroupDim = int64_t{1} << 24;

// Builds the distribution a spec describes. Errors (INVALID_ARGUMENT) when:
//   * no kind is set, or a size is out of range (limits in the messages and
//     kMaxGroupDim for the vector length);
//   * a scalar law is of a kind not allowed for its field (rotation: fixed,
//     uniform, von_mises, normal; translation_x/y, pitch_cents, time_shift:
//     fixed, uniform, normal; scale, tempo: fixed, uniform, log_normal) or has
//     bad parameters (non-finite, low ≥ high, a rotation range wider than 2π,
//     stddev ≤ 0, kappa < 0, a scale or tempo ≤ 0);
//   * audio.bins_per_octave is not finite and > 0;
//   * cyclic_shift.max_shift is outside [0, (length − 1) / 2];
//   * spec.enumerate is set and the distribution is not enumerable()
//     (permutations of more than 8 items, more than 20 sign flips, the
//     noisy sort, image and audio transforms).
// Never returns null on success.
absl::StatusOr<std::unique_ptr<GroupDistribution>> MakeGroupDistribution(const v1::GroupSpec& spec);

// Where the draws of `distribution` (built from `spec`) are applied:
//   PLACEMENT_AUTO       kInput if distribution.depends_on_input(), else kTemplates
//   PLACEMENT_TEMPLATES  kTemplates; INVALID_ARGUMENT if the distribution
//                        depends on the input (the noisy sort)
//   PLACEMENT_INPUT      kInput
// Any other enum value is INVALID_ARGUMENT naming group.placement.
absl::StatusOr<Placement> ResolvePlacement(const v1::GroupSpec& spec,
                                           const GroupDistribution& distribution);

// The elements an encoder uses when the draws do not depend on the input:
// distribution.Enumerate() (every element, equal weights) when `enumerate`
// is true and the distribution is enumerable(), otherwise
// distribution.Sample(r, rng) (r ≥ 0 draws). MakeGroupDistribution already
// rejects spec.enumerate for a non-enumerable distribution, so passing
// spec.enumerate() is safe. Input-dependent distributions need SampleFor.
std::vector<GroupElement> DrawElements(const GroupDistribution& distribution, bool enumerate,
                                       int64_t r, Rng& rng);

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_GROUP_FACTORY_H_
