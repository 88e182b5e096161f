// identity_group.h: the trivial group {e} acting on vectors of length dim.
//
// Element: params = () (the only element); e·x = x, copied bit for bit.
// An encoder over the identity group with r = 1 is the plain, non-invariant
// map of the textbook (random Fourier: ω_j stored as drawn; CDF and Nyström:
// templates untransformed): the honest baseline, independent of any group law.
// Exactly unitary, enumerable (one element).
#ifndef INVARIANT_CORE_GROUPS_IDENTITY_GROUP_H_
#define INVARIANT_CORE_GROUPS_IDENTITY_GROUP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/groups/group.h"

namespace invariant {

class IdentityAction final : public GroupAction {
 public:
  // dim ≥ 1.
  explicit IdentityAction(int64_t dim) : dim_(dim) {}

  int64_t dim() const override { return dim_; }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
  GroupElement Identity() const override { return {}; }
  GroupElement Inverse(const GroupElement& g) const override { return {}; }
  GroupElement Compose(const GroupElement& a, const GroupElement& b) const override { return {}; }
  bool exactly_unitary() const override { return true; }

 private:
  int64_t dim_;
};

// Every draw is the identity; symmetric; Enumerate() lists the one element.
class IdentityDistribution final : public GroupDistribution {
 public:
  explicit IdentityDistribution(std::unique_ptr<IdentityAction> action)
      : action_(std::move(action)) {}

  const GroupAction& action() const override { return *action_; }
  std::string name() const override;
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override { return true; }
  bool enumerable() const override { return true; }
  std::vector<GroupElement> Enumerate() const override { return {GroupElement{}}; }

 private:
  std::unique_ptr<IdentityAction> action_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_IDENTITY_GROUP_H_
