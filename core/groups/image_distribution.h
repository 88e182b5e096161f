// image_distribution.h: the product distribution over image similarity
// transforms (ImageTransform): rotation × translation_x × translation_y ×
// scale, each factor drawn independently (Raj et al. 2017 §5, CIFAR-10:
// von Mises rotation × Gaussian translation × log-normal scale; Mroueh et al.
// 2015, MNIST: uniform rotations in [−20°, 20°] × shifts up to 3 px).
//
// symmetric(): true exactly when g and g⁻¹ have the same law. With
// g⁻¹ = (−θ, −(1/a)·R(−θ)·t, 1/a) (image_transform.h), for independent
// factors that holds iff the rotation law is symmetric mod 2π
// (ScalarDistribution::SymmetricAngle), the scale law is symmetric under
// a ↦ 1/a (Fixed(1) or LogNormal(0, ·)), and one of:
//   * no translation (both Fixed(0));
//   * scale Fixed(1), rotation Fixed(≡ 0) and t_x, t_y each symmetric about 0;
//   * scale Fixed(1), rotation Fixed(≡ π) (then g⁻¹ = g);
//   * scale Fixed(1) and t isotropic: t_x, t_y both Normal(0, σ), same σ
//     (the only independent-coordinate law invariant under rotations).
// In particular the usual rotation × translation × scale product with a
// random scale and a non-zero translation is NOT symmetric: moving it onto
// the templates changes the kernel slightly (docs/math.md §1). Uniform
// translations with random rotations are not symmetric either.
#ifndef INVARIANT_CORE_GROUPS_IMAGE_DISTRIBUTION_H_
#define INVARIANT_CORE_GROUPS_IMAGE_DISTRIBUTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/groups/group.h"
#include "core/groups/image_transform.h"
#include "core/groups/scalar_distribution.h"

namespace invariant {

struct ImageTransformLaw {
  ScalarDistribution rotation = ScalarDistribution::Fixed(0.0);       // θ, radians
  ScalarDistribution translation_x = ScalarDistribution::Fixed(0.0);  // t_x, pixels (columns)
  ScalarDistribution translation_y = ScalarDistribution::Fixed(0.0);  // t_y, pixels (rows)
  ScalarDistribution scale = ScalarDistribution::Fixed(1.0);          // a > 0
  // Uniform rotation only: Sample(r) draws one u ~ U[0, 1) and returns the
  // angles low + (k + u)(high − low)/r, k = 0..r−1 (a shifted grid).
  bool stratified_rotation = false;
};

class ImageTransformDistribution final : public GroupDistribution {
 public:
  // `action` must not be null; `law.scale` must only produce a > 0.
  ImageTransformDistribution(std::unique_ptr<ImageTransform> action, ImageTransformLaw law)
      : action_(std::move(action)), law_(law) {}

  const GroupAction& action() const override { return *action_; }
  const ImageTransformLaw& law() const { return law_; }
  std::string name() const override;
  // Each draw samples θ, t_x, t_y, a in that order (ScalarDistribution::Sample).
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override;

 private:
  std::unique_ptr<ImageTransform> action_;
  ImageTransformLaw law_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_IMAGE_DISTRIBUTION_H_
