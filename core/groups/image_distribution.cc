#include "core/groups/image_distribution.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace invariant {

std::string ImageTransformDistribution::name() const {
  return absl::StrCat(action_->name(), " ~ rotation ", law_.rotation.name(),
                      law_.stratified_rotation ? " (stratified)" : "", " x translation_x ",
                      law_.translation_x.name(), " x translation_y ", law_.translation_y.name(),
                      " x scale ", law_.scale.name());
}

std::vector<GroupElement> ImageTransformDistribution::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  const bool grid =
      law_.stratified_rotation && law_.rotation.kind() == ScalarDistribution::Kind::kUniform;
  const double u = grid ? rng.Uniform() : 0.0;
  for (int64_t k = 0; k < r; ++k) {
    const double theta = grid ? law_.rotation.p0() + (static_cast<double>(k) + u) *
                                                         (law_.rotation.p1() - law_.rotation.p0()) /
                                                         static_cast<double>(r)
                              : law_.rotation.Sample(rng);
    const double tx = law_.translation_x.Sample(rng);
    const double ty = law_.translation_y.Sample(rng);
    const double a = law_.scale.Sample(rng);
    draws.push_back(ImageTransform::Similarity(theta, tx, ty, a));
  }
  return draws;
}

bool ImageTransformDistribution::symmetric() const {
  const ScalarDistribution& rot = law_.rotation;
  const ScalarDistribution& tx = law_.translation_x;
  const ScalarDistribution& ty = law_.translation_y;
  if (!rot.SymmetricAngle() || !law_.scale.SymmetricUnderReciprocal()) return false;
  if (tx.IsFixedAt(0.0) && ty.IsFixedAt(0.0)) return true;
  if (!law_.scale.IsFixedAt(1.0)) return false;
  if (rot.kind() == ScalarDistribution::Kind::kFixed) {
    // SymmetricAngle() left θ ≡ 0 or θ ≡ π.
    const bool half_turn = std::abs(std::cos(rot.p0()) + 1.0) < 1e-12;
    return half_turn || (tx.SymmetricAboutZero() && ty.SymmetricAboutZero());
  }
  return tx.kind() == ScalarDistribution::Kind::kNormal &&
         ty.kind() == ScalarDistribution::Kind::kNormal && tx.p0() == 0.0 && ty.p0() == 0.0 &&
         tx.p1() == ty.p1();
}

}  // namespace invariant
