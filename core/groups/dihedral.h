// dihedral.h: the dihedral symmetries of height × width × channels images.
//
// group.proto DihedralGroup. Images are row-major, channels last; every
// element permutes pixels exactly (channels move together), so the action is
// exactly unitary. Element: params = {t, f}, t ∈ {0, 1, 2, 3} quarter turns
// counter-clockwise, f ∈ {0, 1}; it acts as "mirror left–right if f, then
// turn t times":
//   mirror M:  (M·x)[y][x'] = x[y][W − 1 − x']
//   turn R:    (R·x)[y][x'] = x[x'][W − 1 − y]   (numpy.rot90; needs H = W)
// so g = Rᵗ Mᶠ. Compose: (Rᵃ Mᵖ)(Rᵇ M^q) = R^{a + (−1)ᵖ b} M^{p ⊕ q};
// Inverse: R^{−t} when f = 0, the element itself when f = 1.
//
// Enumeration order (group.proto): turns only: t = 0..3; flips only:
// {0, 0}, {0, 1}; both: t = 0..3 with f = 0, then t = 0..3 with f = 1.
// Draws are uniform over the enumerated elements; symmetric.
//
// Thread-safety: immutable; Apply is const and thread-safe.
#ifndef INVARIANT_CORE_GROUPS_DIHEDRAL_H_
#define INVARIANT_CORE_GROUPS_DIHEDRAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/groups/group.h"

namespace invariant {

class DihedralAction final : public GroupAction {
 public:
  // Sizes ≥ 1; turns other than 0 and 2 need height == width (validated by
  // the factory; Apply of such a turn on a non-square image is undefined).
  DihedralAction(int64_t height, int64_t width, int64_t channels)
      : height_(height), width_(width), channels_(channels) {}

  // The element "mirror if `mirror`, then turn `quarter_turns` times
  // counter-clockwise" (any integer, stored mod 4).
  static GroupElement Element(int64_t quarter_turns, bool mirror);

  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  int64_t channels() const { return channels_; }

  // source[i] = the pixel (y·W + x) of the input that lands on output pixel
  // i under g (H·W entries; multiply by channels for float offsets).
  std::vector<int64_t> SourcePixels(const GroupElement& g) const;

  int64_t dim() const override { return height_ * width_ * channels_; }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
  GroupElement Identity() const override { return Element(0, false); }
  GroupElement Inverse(const GroupElement& g) const override;
  GroupElement Compose(const GroupElement& a, const GroupElement& b) const override;
  bool exactly_unitary() const override { return true; }

 private:
  int64_t height_;
  int64_t width_;
  int64_t channels_;
};

// Uniform over the turns (C4), the mirror ({e, M}) or both (D4), in the
// order documented above. At least one of turns, flips.
class UniformDihedral final : public GroupDistribution {
 public:
  UniformDihedral(std::unique_ptr<DihedralAction> action, bool turns, bool flips);

  const GroupAction& action() const override { return *action_; }
  std::string name() const override;
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override { return true; }
  bool enumerable() const override { return true; }
  std::vector<GroupElement> Enumerate() const override { return elements_; }

 private:
  std::unique_ptr<DihedralAction> action_;
  bool turns_;
  bool flips_;
  std::vector<GroupElement> elements_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_DIHEDRAL_H_
