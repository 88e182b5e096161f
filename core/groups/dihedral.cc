#include "core/groups/dihedral.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

int64_t Mod4(int64_t a) { return ((a % 4) + 4) % 4; }
int64_t TurnsOf(const GroupElement& g) { return Mod4(static_cast<int64_t>(g.params[0])); }
bool MirrorOf(const GroupElement& g) { return g.params.size() > 1 && g.params[1] != 0.0; }

}  // namespace

GroupElement DihedralAction::Element(int64_t quarter_turns, bool mirror) {
  return GroupElement{{static_cast<double>(Mod4(quarter_turns)), mirror ? 1.0 : 0.0}};
}

std::string DihedralAction::name() const {
  return absl::StrCat("dihedral(", height_, "x", width_, "x", channels_, ")");
}

std::vector<int64_t> DihedralAction::SourcePixels(const GroupElement& g) const {
  const int64_t t = TurnsOf(g);
  const bool mirror = MirrorOf(g);
  std::vector<int64_t> source(static_cast<size_t>(height_ * width_));
  for (int64_t y = 0; y < height_; ++y) {
    for (int64_t x = 0; x < width_; ++x) {
      // The pixel of v = Mᶠ·x that Rᵗ moves onto (y, x): R·v[a][b] = v[b][W − 1 − a].
      int64_t a = y, b = x;
      switch (t) {
        case 1:
          a = x;
          b = width_ - 1 - y;
          break;
        case 2:  // a half turn is defined on any rectangle
          a = height_ - 1 - y;
          b = width_ - 1 - x;
          break;
        case 3:
          a = width_ - 1 - x;
          b = y;
          break;
        default:
          break;
      }
      if (mirror) b = width_ - 1 - b;
      source[static_cast<size_t>(y * width_ + x)] = a * width_ + b;
    }
  }
  return source;
}

void DihedralAction::Apply(const GroupElement& g, int64_t n, const float* x, float* out) const {
  const std::vector<int64_t> source = SourcePixels(g);
  const int64_t d = dim();
  const int64_t c = channels_;
  for (int64_t row = 0; row < n; ++row) {
    const float* xr = x + row * d;
    float* orow = out + row * d;
    for (size_t i = 0; i < source.size(); ++i) {
      std::memcpy(orow + static_cast<int64_t>(i) * c, xr + source[i] * c,
                  static_cast<size_t>(c) * sizeof(float));
    }
  }
}

GroupElement DihedralAction::Inverse(const GroupElement& g) const {
  if (MirrorOf(g)) return Element(TurnsOf(g), true);
  return Element(-TurnsOf(g), false);
}

GroupElement DihedralAction::Compose(const GroupElement& a, const GroupElement& b) const {
  // M Rᵇ = R^{−b} M.
  const int64_t tb = MirrorOf(a) ? -TurnsOf(b) : TurnsOf(b);
  return Element(TurnsOf(a) + tb, MirrorOf(a) != MirrorOf(b));
}

UniformDihedral::UniformDihedral(std::unique_ptr<DihedralAction> action, bool turns, bool flips)
    : action_(std::move(action)), turns_(turns), flips_(flips) {
  const int64_t num_turns = turns_ ? 4 : 1;
  for (int f = 0; f <= (flips_ ? 1 : 0); ++f) {
    for (int64_t t = 0; t < num_turns; ++t) elements_.push_back(DihedralAction::Element(t, f == 1));
  }
}

std::string UniformDihedral::name() const {
  const char* what = turns_ && flips_ ? "turns and flips" : (turns_ ? "turns" : "flips");
  return absl::StrCat("uniform(", action_->name(), ", ", what, ")");
}

std::vector<GroupElement> UniformDihedral::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) {
    draws.push_back(elements_[rng.UniformInt(static_cast<uint64_t>(elements_.size()))]);
  }
  return draws;
}

}  // namespace invariant
