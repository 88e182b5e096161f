// Orbits on the input with elements fixed in the model
// (Projector::OverInputOrbit, OrbitOperator): the extracted sparse maps are
// the group action, every input gets the same elements, and the features
// match the template placement's (exactly for permutation groups, up to
// interpolation for image rotations).
#include <cmath>
#include <cstring>
#include <vector>

#include "core/base/kernel_path.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "core/encoders/orbit_operator.h"
#include "core/encoders/projector.h"
#include "core/groups/image_transform.h"
#include "gtest/gtest.h"
#include "tests/unit/encoders/test_util.h"

namespace invariant {
namespace {

using testing::EncodeAll;
using testing::MakeGroup;
using testing::MaxAbsDiff;
using testing::UnitRows;

v1::GroupSpec RotationSpec(int side) {
  v1::GroupSpec s;
  v1::ImageTransformGroup* img = s.mutable_image();
  img->set_height(side);
  img->set_width(side);
  img->set_channels(1);
  img->mutable_rotation()->mutable_uniform()->set_low(0);
  img->mutable_rotation()->mutable_uniform()->set_high(2 * M_PI);
  img->set_stratified_rotation(true);
  return s;
}

std::vector<GroupElement> Draw(const GroupDistribution& q, int64_t r, bool enumerate) {
  Rng rng(4);
  auto elements = DrawGroupElements(q, r, enumerate, rng);
  EXPECT_TRUE(elements.ok()) << elements.status();
  return *elements;
}

TEST(OrbitOperatorTest, SparseMapsReproduceTheAction) {
  // Permutations: one tap per coordinate, exactly the action.
  auto perms = MakeGroup(testing::BlockPermutationSpec(5, 8, true));
  const std::vector<GroupElement> all = Draw(*perms, 0, true);
  auto op = OrbitOperator::Build(perms->action(), all);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->num_elements(), 120);
  const FloatMatrix x = UnitRows(3, 40, 2);
  std::vector<float> y(static_cast<size_t>(3 * 120 * 40)), want(40);
  op->Apply(3, x.data(), 40, y.data());
  for (int64_t k = 0; k < 120; ++k) {
    EXPECT_EQ(op->taps(k), 1);
    for (int64_t i = 0; i < 3; ++i) {
      perms->action().Apply(all[static_cast<size_t>(k)], 1, x.row(i), want.data());
      ASSERT_EQ(0, std::memcmp(want.data(), y.data() + (i * 120 + k) * 40, 40 * sizeof(float)));
    }
  }
  // Image rotations: ≤ 4 bilinear taps, equal to the action up to rounding.
  auto rot = MakeGroup(RotationSpec(14));
  const std::vector<GroupElement> turns = Draw(*rot, 8, false);
  auto rop = OrbitOperator::Build(rot->action(), turns);
  ASSERT_TRUE(rop.ok());
  const FloatMatrix img = UnitRows(2, 196, 3);
  std::vector<float> yr(static_cast<size_t>(2 * 8 * 196)), wr(196);
  rop->Apply(2, img.data(), 196, yr.data());
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_LE(rop->taps(k), 4);
    for (int64_t i = 0; i < 2; ++i) {
      rot->action().Apply(turns[static_cast<size_t>(k)], 1, img.row(i), wr.data());
      for (int64_t u = 0; u < 196; ++u) {
        ASSERT_NEAR(yr[static_cast<size_t>((i * 8 + k) * 196 + u)], wr[static_cast<size_t>(u)],
                    1e-6);
      }
    }
  }
  EXPECT_FALSE(OrbitOperator::Build(rot->action(), {}).ok());
}

TEST(OrbitOperatorTest, EveryPathGivesTheSameBits) {
  auto rot = MakeGroup(RotationSpec(13));  // 169 pixels: not a multiple of 8
  auto op = OrbitOperator::Build(rot->action(), Draw(*rot, 6, false));
  ASSERT_TRUE(op.ok());
  const FloatMatrix x = UnitRows(4, 169, 6);
  std::vector<float> want(static_cast<size_t>(4 * 6 * 169)), got(want.size());
  ASSERT_TRUE(SetKernelPath(KernelPath::kScalar).ok());
  op->Apply(4, x.data(), 169, want.data());
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    op->Apply(4, x.data(), 169, got.data());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
        << KernelPathName(path);
  }
  ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok());
}

// With the same elements, ⟨t, g·x⟩ = ⟨g⁻¹·t, x⟩ exactly for permutations: the
// input placement's CDF features equal the template placement's.
TEST(InputOrbitTest, PermutationsMatchTheTemplatePlacementExactly) {
  auto perms = MakeGroup(testing::BlockPermutationSpec(5, 8, true));
  const std::vector<GroupElement> all = Draw(*perms, 0, true);
  Rng rng(9);
  auto templates = SampleGaussianRejectionTemplates(7, 40, 0.1, rng);
  ASSERT_TRUE(templates.ok());
  auto bank = TemplateBank::Build(*templates, perms->action(), all);
  ASSERT_TRUE(bank.ok());
  CdfOptions o;
  o.num_bins = 5;
  o.range = 1.0;
  auto on_templates = CdfEncoder::Create(o, Projector::OverBank(*bank));
  auto orbit = Projector::OverInputOrbit(*templates, perms, all);
  ASSERT_TRUE(orbit.ok()) << orbit.status();
  EXPECT_EQ(orbit->placement(), Placement::kInput);
  EXPECT_EQ(orbit->num_group_elements(), 120);
  auto on_input = CdfEncoder::Create(o, *orbit);
  ASSERT_TRUE(on_templates.ok() && on_input.ok());
  const FloatMatrix x = UnitRows(50, 40, 10);
  // Permuting coordinates permutes the terms of each dot product, so the
  // sums may round differently; CDF counts only move when a projection sits
  // within rounding of a threshold, which these inputs never do.
  EXPECT_EQ(MaxAbsDiff(EncodeAll(**on_templates, x), EncodeAll(**on_input, x)), 0.0);
}

// Image rotations: the same features as the template placement up to
// interpolation, and a stratified grid keeps exact quarter-turn invariance.
TEST(InputOrbitTest, RotationsAreCloseToTheTemplatePlacementAndInvariant) {
  auto rot = MakeGroup(RotationSpec(12));
  const std::vector<GroupElement> turns = Draw(*rot, 8, false);
  Rng rng(5);
  auto freqs = SampleGaussianTemplates(40, 144, 1.0, rng);
  ASSERT_TRUE(freqs.ok());
  auto bank = TemplateBank::Build(*freqs, rot->action(), turns);
  ASSERT_TRUE(bank.ok());
  auto on_templates = RandomFourierEncoder::Create({1.0}, Projector::OverBank(*bank));
  auto orbit = Projector::OverInputOrbit(*freqs, rot, turns);
  ASSERT_TRUE(orbit.ok());
  auto on_input = RandomFourierEncoder::Create({1.0}, *orbit);
  ASSERT_TRUE(on_templates.ok() && on_input.ok());
  const FloatMatrix x = UnitRows(6, 144, 5);
  const FloatMatrix a = EncodeAll(**on_input, x);
  // Bilinear interpolation is not exactly unitary: close, not equal.
  EXPECT_LT(MaxAbsDiff(a, EncodeAll(**on_templates, x)), 0.05);
  ImageTransform turn(12, 12, 1);
  const FloatMatrix turned =
      testing::Transform(turn, ImageTransform::Similarity(M_PI / 2, 0, 0, 1), x);
  EXPECT_LT(MaxAbsDiff(a, EncodeAll(**on_input, turned)), 1e-5);
}

}  // namespace
}  // namespace invariant
