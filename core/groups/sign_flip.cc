#include "core/groups/sign_flip.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace invariant {

std::string SignFlip::name() const { return absl::StrCat("sign_flip(", dim_, ")"); }

void SignFlip::Apply(const GroupElement& g, int64_t n, const float* x, float* out) const {
  for (int64_t row = 0; row < n; ++row) {
    const float* xr = x + row * dim_;
    float* orow = out + row * dim_;
    for (int64_t i = 0; i < dim_; ++i) {
      orow[i] = g.params[static_cast<size_t>(i)] < 0.0 ? -xr[i] : xr[i];
    }
  }
}

GroupElement SignFlip::Identity() const {
  return GroupElement{std::vector<double>(static_cast<size_t>(dim_), 1.0)};
}

GroupElement SignFlip::Compose(const GroupElement& a, const GroupElement& b) const {
  GroupElement ab;
  ab.params.resize(static_cast<size_t>(dim_));
  for (size_t i = 0; i < ab.params.size(); ++i) ab.params[i] = a.params[i] * b.params[i];
  return ab;
}

std::string UniformSignFlips::name() const {
  return absl::StrCat("uniform(", action_->name(), ")");
}

std::vector<GroupElement> UniformSignFlips::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) {
    GroupElement g;
    g.params.resize(static_cast<size_t>(action_->dim()));
    // One 64-bit draw covers 64 signs.
    uint64_t bits = 0;
    for (size_t i = 0; i < g.params.size(); ++i) {
      if (i % 64 == 0) bits = rng.NextU64();
      g.params[i] = (bits >> (i % 64)) & 1u ? -1.0 : 1.0;
    }
    draws.push_back(std::move(g));
  }
  return draws;
}

std::vector<GroupElement> UniformSignFlips::Enumerate() const {
  if (!enumerable()) return {};
  const int64_t d = action_->dim();
  std::vector<GroupElement> all;
  all.reserve(size_t{1} << d);
  for (uint64_t k = 0; k < (uint64_t{1} << d); ++k) {
    GroupElement g;
    g.params.resize(static_cast<size_t>(d));
    for (int64_t i = 0; i < d; ++i) g.params[static_cast<size_t>(i)] = (k >> i) & 1u ? -1.0 : 1.0;
    all.push_back(std::move(g));
  }
  return all;
}

}  // namespace invariant
