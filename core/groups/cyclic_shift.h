// cyclic_shift.h: the cyclic group Z_L acting on 1-D signals of L samples.
//
// Element: params = {s}, an integer shift normalised to [0, L).
//   (g·x)[(i + s) mod L] = x[i]     (a positive s moves the signal right)
// Compose adds shifts mod L, Inverse negates mod L. Exactly unitary.
// Apply also accepts an unnormalised integer s (it reduces it mod L).
#ifndef INVARIANT_CORE_GROUPS_CYCLIC_SHIFT_H_
#define INVARIANT_CORE_GROUPS_CYCLIC_SHIFT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/groups/group.h"

namespace invariant {

class CyclicShift final : public GroupAction {
 public:
  // length ≥ 1.
  explicit CyclicShift(int64_t length) : length_(length) {}

  // The element shifting by `shift` samples (any integer; stored mod L).
  GroupElement Shift(int64_t shift) const;

  int64_t dim() const override { return length_; }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
  GroupElement Identity() const override { return Shift(0); }
  GroupElement Inverse(const GroupElement& g) const override;
  GroupElement Compose(const GroupElement& a, const GroupElement& b) const override;
  bool exactly_unitary() const override { return true; }

 private:
  int64_t length_;
};

// Shifts drawn uniformly from {−k, …, k} (k = max_shift), or from all of Z_L
// when max_shift = 0. Requires max_shift = 0 or 2k + 1 ≤ L, so the support
// has distinct elements; symmetric (q(s) = q(−s)); always enumerable: the L
// shifts 0..L−1 (max_shift = 0) or the 2k + 1 shifts −k..k, in that order.
class UniformShifts final : public GroupDistribution {
 public:
  UniformShifts(std::unique_ptr<CyclicShift> action, int64_t max_shift)
      : action_(std::move(action)), max_shift_(max_shift) {}

  const GroupAction& action() const override { return *action_; }
  std::string name() const override;
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override { return true; }
  bool enumerable() const override { return true; }
  std::vector<GroupElement> Enumerate() const override;

 private:
  std::unique_ptr<CyclicShift> action_;
  int64_t max_shift_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_CYCLIC_SHIFT_H_
