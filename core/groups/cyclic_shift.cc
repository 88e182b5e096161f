#include "core/groups/cyclic_shift.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

int64_t Mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

int64_t ShiftOf(const GroupElement& g) { return static_cast<int64_t>(g.params[0]); }

}  // namespace

GroupElement CyclicShift::Shift(int64_t shift) const {
  return GroupElement{{static_cast<double>(Mod(shift, length_))}};
}

std::string CyclicShift::name() const { return absl::StrCat("cyclic_shift(", length_, ")"); }

void CyclicShift::Apply(const GroupElement& g, int64_t n, const float* x, float* out) const {
  const int64_t s = Mod(ShiftOf(g), length_);
  const int64_t head = length_ - s;  // x[0..head) lands at out[s..L)
  for (int64_t row = 0; row < n; ++row) {
    const float* xr = x + row * length_;
    float* orow = out + row * length_;
    std::copy(xr, xr + head, orow + s);
    std::copy(xr + head, xr + length_, orow);
  }
}

GroupElement CyclicShift::Inverse(const GroupElement& g) const { return Shift(-ShiftOf(g)); }

GroupElement CyclicShift::Compose(const GroupElement& a, const GroupElement& b) const {
  return Shift(ShiftOf(a) + ShiftOf(b));
}

std::string UniformShifts::name() const {
  if (max_shift_ == 0) return absl::StrCat("uniform(", action_->name(), ")");
  return absl::StrCat("uniform(", action_->name(), ", |shift| <= ", max_shift_, ")");
}

std::vector<GroupElement> UniformShifts::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) {
    const int64_t s =
        max_shift_ == 0
            ? static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(action_->dim())))
            : static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(2 * max_shift_ + 1))) -
                  max_shift_;
    draws.push_back(action_->Shift(s));
  }
  return draws;
}

std::vector<GroupElement> UniformShifts::Enumerate() const {
  std::vector<GroupElement> all;
  if (max_shift_ == 0) {
    for (int64_t s = 0; s < action_->dim(); ++s) all.push_back(action_->Shift(s));
  } else {
    for (int64_t s = -max_shift_; s <= max_shift_; ++s) all.push_back(action_->Shift(s));
  }
  return all;
}

}  // namespace invariant
