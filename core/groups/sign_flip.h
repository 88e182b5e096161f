// sign_flip.h: the group {±1}^d of coordinate sign flips.
//
// Element: params = (s_0, …, s_{d−1}), each +1.0 or −1.0; (g·x)_i = s_i·x_i.
// Compose multiplies signs, every element is its own inverse. Exactly unitary.
#ifndef INVARIANT_CORE_GROUPS_SIGN_FLIP_H_
#define INVARIANT_CORE_GROUPS_SIGN_FLIP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/groups/group.h"

namespace invariant {

// Largest dim whose 2^dim sign patterns Enumerate() lists.
inline constexpr int64_t kMaxEnumerableSignFlipDim = 20;

class SignFlip final : public GroupAction {
 public:
  // dim ≥ 1.
  explicit SignFlip(int64_t dim) : dim_(dim) {}

  int64_t dim() const override { return dim_; }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
  GroupElement Identity() const override;
  GroupElement Inverse(const GroupElement& g) const override { return g; }
  GroupElement Compose(const GroupElement& a, const GroupElement& b) const override;
  bool exactly_unitary() const override { return true; }

 private:
  int64_t dim_;
};

// Each sign independently ±1 with probability ½ (uniform on the group);
// symmetric. Enumerable when dim ≤ kMaxEnumerableSignFlipDim: pattern k
// flips coordinate i iff bit i of k is set, k = 0..2^dim − 1 (identity first).
class UniformSignFlips final : public GroupDistribution {
 public:
  explicit UniformSignFlips(std::unique_ptr<SignFlip> action) : action_(std::move(action)) {}

  const GroupAction& action() const override { return *action_; }
  std::string name() const override;
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override { return true; }
  bool enumerable() const override { return action_->dim() <= kMaxEnumerableSignFlipDim; }
  std::vector<GroupElement> Enumerate() const override;

 private:
  std::unique_ptr<SignFlip> action_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_SIGN_FLIP_H_
