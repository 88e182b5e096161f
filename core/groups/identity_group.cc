#include "core/groups/identity_group.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace invariant {

std::string IdentityAction::name() const { return absl::StrCat("identity(", dim_, ")"); }

void IdentityAction::Apply(const GroupElement& /*g*/, int64_t n, const float* x, float* out) const {
  std::copy(x, x + n * dim_, out);
}

std::string IdentityDistribution::name() const {
  return absl::StrCat("identity(", action_->dim(), ")");
}

std::vector<GroupElement> IdentityDistribution::Sample(int64_t r, Rng& /*rng*/) const {
  return std::vector<GroupElement>(static_cast<size_t>(std::max<int64_t>(r, 0)));
}

}  // namespace invariant
