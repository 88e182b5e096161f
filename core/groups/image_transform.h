// image_transform.h: rotations, translations and isotropic scalings of 2-D
// images (the similarity group of the plane) acting on pixel grids.
//
// Layout: an image is height × width × channels floats, row-major, channels
// last: value (row, col, ch) is at ((row·width + col)·channels + ch).
// Pixel coordinates are u = (u_x, u_y) = (col, row); pixel centres sit on
// integers and the image centre is c = ((width−1)/2, (height−1)/2).
//
// Element: params = {θ, t_x, t_y, a} (radians, pixels, pixels, scale a > 0):
//   g(u) = a·R(θ)·(u − c) + c + t,   R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]
// (with rows growing downwards, θ > 0 turns the picture clockwise on screen),
//   (g·I)(u) = |J_g|^{-1/2} · I(g⁻¹(u)) = (1/a) · I(g⁻¹(u))
// (Raj et al. 2017, Lemma 2.1: |J_g| = a², so intensities are divided by a),
// evaluated by bilinear interpolation with zero outside the image. A sample
// position within 1e-9 px of a pixel centre is snapped to it, so rotations by
// multiples of 90° on square images and integer translations are exact.
//
// Compose and Inverse are exact similarity-transform algebra (the set is
// closed under composition); angles are wrapped to [−π, π]:
//   a∘b = (θ_a + θ_b, t_a + a_a·R(θ_a)·t_b, a_a·a_b)
//   g⁻¹ = (−θ, −(1/a)·R(−θ)·t, 1/a)
// The pixel action is only approximately a group action and approximately
// unitary (interpolation blurs, the border clips): exactly_unitary() = false.
#ifndef INVARIANT_CORE_GROUPS_IMAGE_TRANSFORM_H_
#define INVARIANT_CORE_GROUPS_IMAGE_TRANSFORM_H_

#include <cstdint>
#include <string>

#include "core/groups/group.h"

namespace invariant {

class ImageTransform final : public GroupAction {
 public:
  // height, width, channels ≥ 1.
  ImageTransform(int64_t height, int64_t width, int64_t channels)
      : height_(height), width_(width), channels_(channels) {}

  // The element {angle, tx, ty, scale}; scale must be > 0.
  static GroupElement Similarity(double angle, double tx, double ty, double scale);

  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  int64_t channels() const { return channels_; }

  int64_t dim() const override { return height_ * width_ * channels_; }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
  GroupElement Identity() const override { return Similarity(0.0, 0.0, 0.0, 1.0); }
  GroupElement Inverse(const GroupElement& g) const override;
  GroupElement Compose(const GroupElement& a, const GroupElement& b) const override;
  bool exactly_unitary() const override { return false; }

 private:
  int64_t height_;
  int64_t width_;
  int64_t channels_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_IMAGE_TRANSFORM_H_
