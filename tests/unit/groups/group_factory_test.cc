#include "core/groups/group_factory.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;

v1::GroupSpec Spec(const std::string& text) {
  v1::GroupSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

std::unique_ptr<GroupDistribution> MustMake(const std::string& text) {
  auto made = MakeGroupDistribution(Spec(text));
  EXPECT_TRUE(made.ok()) << text << ": " << made.status();
  return made.ok() ? std::move(*made) : nullptr;
}

TEST(GroupFactoryTest, BuildsEveryKind) {
  struct Case {
    std::string spec;
    std::string action_name;
    int64_t dim;
    bool enumerable;
    bool symmetric;
    bool depends_on_input;
  };
  const std::vector<Case> cases = {
      {"permutation { dim: 6 }", "coordinate_permutation(6)", 6, true, true, false},
      {"permutation { dim: 100 }", "coordinate_permutation(100)", 100, false, true, false},
      {"block_permutation { num_blocks: 5 block_size: 8 }", "block_permutation(5x8)", 40, true,
       true, false},
      {"matrix_permutation { n: 23 }", "matrix_permutation(23x23)", 529, false, true, false},
      {"matrix_permutation { n: 23 noisy_sort_sigma: 1 }", "matrix_permutation(23x23)", 529, false,
       false, true},
      {"matrix_permutation { n: 23 sort_rows: true }", "matrix_permutation(23x23)", 529, false,
       false, true},
      {"cyclic_shift { length: 64 max_shift: 3 }", "cyclic_shift(64)", 64, true, true, false},
      {"sign_flip { dim: 10 }", "sign_flip(10)", 10, true, true, false},
      {"identity { dim: 784 }", "identity(784)", 784, true, true, false},
      {"image { height: 28 width: 28 channels: 1 rotation { von_mises { kappa: 0.2 } } }",
       "image_transform(28x28x1)", 784, false, true, false},
      {"image { height: 32 width: 32 channels: 3 rotation { von_mises { kappa: 9 } } "
       "translation_x { normal { stddev: 0.3 } } translation_y { normal { stddev: 0.3 } } "
       "scale { log_normal { log_stddev: 0.3 } } }",
       "image_transform(32x32x3)", 3072, false, false, false},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 }",
       "audio_transform(64x100, bpo=12)", 6400, false, true, false},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 pitch_cents { normal { "
       "stddev: 50 } } tempo { log_normal { log_stddev: 0.1 } } }",
       "audio_transform(64x100, bpo=12)", 6400, false, true, false},
      {"audio { frequency_bins: 48 frames: 81 bins_per_octave: 8 pitch_cents { uniform { low: "
       "-100 high: 100 } } tempo { uniform { low: 0.8 high: 1.25 } } time_shift { normal { "
       "stddev: 2 } } }",
       "audio_transform(48x81, bpo=8)", 3888, false, false, false},
  };
  for (const Case& c : cases) {
    auto dist = MustMake(c.spec);
    ASSERT_NE(dist, nullptr);
    EXPECT_EQ(dist->action().name(), c.action_name) << c.spec;
    EXPECT_EQ(dist->action().dim(), c.dim) << c.spec;
    EXPECT_EQ(dist->enumerable(), c.enumerable) << c.spec;
    EXPECT_EQ(dist->symmetric(), c.symmetric) << c.spec;
    EXPECT_EQ(dist->depends_on_input(), c.depends_on_input) << c.spec;
  }
}

TEST(GroupFactoryTest, TheIdentityGroupHasOneElementThatCopiesBitForBit) {
  auto dist = MustMake("identity { dim: 3 }");
  ASSERT_EQ(dist->Enumerate().size(), 1u);
  Rng rng(1);
  const std::vector<GroupElement> draws = dist->Sample(4, rng);
  ASSERT_EQ(draws.size(), 4u);
  const float x[6] = {1.5f, -0.0f, 3e-39f, 7.f, -2.25f, 1e30f};
  float out[6];
  for (const GroupElement& g : draws) {
    EXPECT_EQ(g, dist->action().Identity());
    dist->action().Apply(g, 2, x, out);
    EXPECT_EQ(std::memcmp(x, out, sizeof(x)), 0);
  }
}

TEST(GroupFactoryTest, RejectsBadSpecsNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "group must set one of permutation, block_permutation"},
      {"", "identity, audio; got none"},
      {"permutation { dim: 0 }", "group.permutation.dim must be in [1, 16777216], got 0"},
      {"block_permutation { num_blocks: 0 block_size: 8 }",
       "group.block_permutation.num_blocks must be in [1, 65536], got 0"},
      {"block_permutation { num_blocks: 5 block_size: -1 }",
       "group.block_permutation.block_size must be in [1, 16777216], got -1"},
      {"block_permutation { num_blocks: 60000 block_size: 1000 }",
       "group.block_permutation num_blocks*block_size must be at most 16777216 floats, got "
       "60000000"},
      {"matrix_permutation { n: 5000 }",
       "group.matrix_permutation.n must be in [1, 4096], got 5000"},
      {"matrix_permutation { n: 5 noisy_sort_sigma: -1 }",
       "group.matrix_permutation.noisy_sort_sigma must be finite and >= 0, got -1"},
      {"cyclic_shift { length: 10 max_shift: 5 }",
       "group.cyclic_shift.max_shift must be in [0, 4], got 5"},
      {"cyclic_shift { length: 0 }", "group.cyclic_shift.length must be in [1, 16777216], got 0"},
      {"sign_flip { dim: -3 }", "group.sign_flip.dim must be in [1, 16777216], got -3"},
      {"identity { }", "group.identity.dim must be in [1, 16777216], got 0"},
      {"image { height: 0 width: 28 channels: 1 }",
       "group.image.height must be in [1, 16384], got 0"},
      {"image { height: 28 width: 28 channels: 0 }",
       "group.image.channels must be in [1, 64], got 0"},
      {"image { height: 28 width: 28 channels: 1 rotation { log_normal { log_stddev: 1 } } }",
       "group.image.rotation must set one of fixed, uniform, von_mises, normal; got log_normal"},
      {"image { height: 28 width: 28 channels: 1 rotation { } }",
       "group.image.rotation must set one of fixed, uniform, von_mises, normal; got none"},
      {"image { height: 28 width: 28 channels: 1 rotation { uniform { low: 0 high: 7 } } }",
       "group.image.rotation.uniform must span at most 2*pi radians, got low=0, high=7"},
      {"image { height: 28 width: 28 channels: 1 rotation { von_mises { kappa: -1 } } }",
       "group.image.rotation.von_mises.kappa must be >= 0, got -1"},
      {"image { height: 28 width: 28 channels: 1 translation_x { uniform { low: 3 high: -3 } } }",
       "group.image.translation_x.uniform must have low < high, got low=3, high=-3"},
      {"image { height: 28 width: 28 channels: 1 translation_y { von_mises { kappa: 1 } } }",
       "group.image.translation_y must set one of fixed, uniform, normal; got von_mises"},
      {"image { height: 28 width: 28 channels: 1 translation_y { normal { stddev: 0 } } }",
       "group.image.translation_y.normal.stddev must be > 0, got 0"},
      {"image { height: 28 width: 28 channels: 1 translation_x { fixed { value: inf } } }",
       "group.image.translation_x.fixed.value must be finite"},
      {"image { height: 28 width: 28 channels: 1 scale { fixed { value: 0 } } }",
       "group.image.scale.fixed.value must be > 0, got 0"},
      {"image { height: 28 width: 28 channels: 1 scale { normal { stddev: 1 } } }",
       "group.image.scale must set one of fixed, uniform, log_normal; got normal"},
      {"image { height: 28 width: 28 channels: 1 scale { uniform { low: -1 high: 2 } } }",
       "group.image.scale.uniform.low must be > 0 for a scale, got -1"},
      {"image { height: 28 width: 28 channels: 1 scale { log_normal { log_stddev: 0 } } }",
       "group.image.scale.log_normal.log_stddev must be in (0, 10], got 0"},
      {"audio { frames: 100 bins_per_octave: 12 }",
       "group.audio.frequency_bins must be in [1, 16384], got 0"},
      {"audio { frequency_bins: 64 frames: -1 bins_per_octave: 12 }",
       "group.audio.frames must be in [1, 1048576], got -1"},
      {"audio { frequency_bins: 16384 frames: 2000 bins_per_octave: 12 }",
       "group.audio frequency_bins*frames must be at most 16777216 floats, got 32768000"},
      {"audio { frequency_bins: 64 frames: 100 }",
       "group.audio.bins_per_octave must be > 0, got 0"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: nan }",
       "group.audio.bins_per_octave must be finite"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 pitch_cents { log_normal { "
       "log_stddev: 1 } } }",
       "group.audio.pitch_cents must set one of fixed, uniform, normal; got log_normal"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 pitch_cents { uniform { low: 1 "
       "high: 1 } } }",
       "group.audio.pitch_cents.uniform must have low < high, got low=1, high=1"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 tempo { fixed { value: -2 } } }",
       "group.audio.tempo.fixed.value must be > 0, got -2"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 tempo { uniform { low: 0 high: "
       "2 } } }",
       "group.audio.tempo.uniform.low must be > 0 for a scale, got 0"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 tempo { normal { stddev: 1 } } "
       "}",
       "group.audio.tempo must set one of fixed, uniform, log_normal; got normal"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 time_shift { von_mises { "
       "kappa: 1 } } }",
       "group.audio.time_shift must set one of fixed, uniform, normal; got von_mises"},
      {"audio { frequency_bins: 64 frames: 100 bins_per_octave: 12 time_shift { normal { stddev: "
       "-1 } } }",
       "group.audio.time_shift.normal.stddev must be > 0, got -1"},
      {"permutation { dim: 9 } enumerate: true",
       "group.enumerate requires an enumerable group: permutation.dim must be <= 8"},
      {"sign_flip { dim: 21 } enumerate: true",
       "group.enumerate requires an enumerable group: sign_flip.dim must be <= 20"},
      {"matrix_permutation { n: 4 noisy_sort_sigma: 1 } enumerate: true",
       "group.enumerate requires an enumerable group: the (noisy) sort"},
      {"image { height: 8 width: 8 channels: 1 } enumerate: true",
       "group.enumerate requires an enumerable group: image transforms"},
      {"audio { frequency_bins: 8 frames: 8 bins_per_octave: 4 tempo { fixed { value: 2 } } } "
       "enumerate: true",
       "group.enumerate needs group.audio.tempo unset or fixed at 1"},
  };
  for (const auto& [text, message] : cases) {
    const auto made = MakeGroupDistribution(Spec(text));
    ASSERT_FALSE(made.ok()) << text;
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(made.status().message()), HasSubstr(message)) << text;
  }
}

TEST(GroupFactoryTest, ResolvesPlacement) {
  auto perms = MustMake("block_permutation { num_blocks: 5 block_size: 8 }");
  auto sort = MustMake("matrix_permutation { n: 5 noisy_sort_sigma: 1 }");
  ASSERT_NE(perms, nullptr);
  ASSERT_NE(sort, nullptr);
  v1::GroupSpec spec;
  EXPECT_EQ(*ResolvePlacement(spec, *perms), Placement::kTemplates);
  EXPECT_EQ(*ResolvePlacement(spec, *sort), Placement::kInput);
  spec.set_placement(v1::GroupSpec::PLACEMENT_INPUT);
  EXPECT_EQ(*ResolvePlacement(spec, *perms), Placement::kInput);
  EXPECT_EQ(*ResolvePlacement(spec, *sort), Placement::kInput);
  spec.set_placement(v1::GroupSpec::PLACEMENT_TEMPLATES);
  EXPECT_EQ(*ResolvePlacement(spec, *perms), Placement::kTemplates);
  const auto bad = ResolvePlacement(spec, *sort);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("group.placement PLACEMENT_TEMPLATES is not allowed"));
  spec.set_placement(static_cast<v1::GroupSpec::Placement>(7));
  const auto unknown = ResolvePlacement(spec, *perms);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("group.placement must be one of PLACEMENT_AUTO, PLACEMENT_TEMPLATES, "
                        "PLACEMENT_INPUT, got 7"));
}

TEST(GroupFactoryTest, DrawElementsEnumeratesOrSamples) {
  auto xperm = MustMake("block_permutation { num_blocks: 5 block_size: 8 } enumerate: true");
  ASSERT_NE(xperm, nullptr);
  Rng rng(1);
  EXPECT_EQ(DrawElements(*xperm, true, 7, rng).size(), 120u);
  Rng a(2), b(2);
  const std::vector<GroupElement> drawn = DrawElements(*xperm, false, 7, a);
  EXPECT_EQ(drawn.size(), 7u);
  EXPECT_EQ(drawn, xperm->Sample(7, b));
  // A non-enumerable distribution falls back to r draws.
  auto image = MustMake(
      "image { height: 8 width: 8 channels: 1 rotation { uniform { low: -1 "
      "high: 1 } } }");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(DrawElements(*image, true, 5, rng).size(), 5u);
  EXPECT_TRUE(DrawElements(*image, false, 0, rng).empty());
}

// Each factor of an audio spec reaches the distribution in the unit the
// proto names (cents, factor, frames); unset factors stay the identity.
TEST(GroupFactoryTest, AudioSpecsCarryTheirLaws) {
  auto full = MustMake(
      "audio { frequency_bins: 40 frames: 50 bins_per_octave: 10 pitch_cents { uniform { low: "
      "-150 high: 150 } } tempo { fixed { value: 1.5 } } time_shift { fixed { value: -3 } } }");
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(full->name(),
            "audio_transform(40x50, bpo=10) ~ pitch_cents uniform(-150, 150) x tempo fixed(1.5) x "
            "time_shift fixed(-3)");
  Rng rng(5);
  for (const GroupElement& g : full->Sample(50, rng)) {
    ASSERT_EQ(g.params.size(), 3u);
    EXPECT_GE(g.params[0], -150.0);
    EXPECT_LT(g.params[0], 150.0);
    EXPECT_EQ(g.params[1], 1.5);
    EXPECT_EQ(g.params[2], -3.0);
  }
  auto bare = MustMake("audio { frequency_bins: 4 frames: 3 bins_per_octave: 0.5 }");
  ASSERT_NE(bare, nullptr);
  for (const GroupElement& g : bare->Sample(3, rng)) EXPECT_EQ(g, bare->action().Identity());
}

TEST(GroupFactoryTest, SeededSpecsDrawTheSameElementsBitForBit) {
  for (const std::string text :
       {"permutation { dim: 12 }", "cyclic_shift { length: 30 max_shift: 4 }",
        "sign_flip { dim: 40 }",
        "image { height: 16 width: 16 channels: 1 rotation { von_mises { kappa: 9 } } "
        "translation_x { normal { stddev: 0.3 } } scale { log_normal { log_stddev: 0.3 } } }",
        "audio { frequency_bins: 16 frames: 20 bins_per_octave: 4 pitch_cents { normal { stddev: "
        "30 } } tempo { log_normal { log_stddev: 0.1 } } time_shift { uniform { low: -2 high: 2 "
        "} } }"}) {
    auto d1 = MustMake(text);
    auto d2 = MustMake(text);
    ASSERT_NE(d1, nullptr);
    Rng a(11), b(11);
    EXPECT_EQ(d1->Sample(25, a), d2->Sample(25, b)) << text;
  }
}

}  // namespace
}  // namespace invariant

namespace invariant {
namespace {

TEST(StratifiedRotationTest, AnglesFormAShiftedGridOverTheRange) {
  auto q = MakeGroupDistribution(Spec(
      "image { height: 8 width: 8 channels: 1 rotation { uniform { low: 0 high: 6.283185307179586 "
      "} } stratified_rotation: true }"));
  ASSERT_TRUE(q.ok()) << q.status();
  Rng rng(3);
  const std::vector<GroupElement> g = (*q)->Sample(16, rng);
  ASSERT_EQ(g.size(), 16u);
  const double step = 2 * M_PI / 16;
  EXPECT_GE(g[0].params[0], 0.0);
  EXPECT_LT(g[0].params[0], step);
  for (size_t k = 1; k < g.size(); ++k) {
    EXPECT_NEAR(g[k].params[0] - g[k - 1].params[0], step, 1e-12);
  }
  // Another draw shifts the grid.
  EXPECT_NE((*q)->Sample(16, rng)[0].params[0], g[0].params[0]);
}

TEST(StratifiedRotationTest, NeedsAUniformRotationLaw) {
  auto q = MakeGroupDistribution(
      Spec("image { height: 8 width: 8 channels: 1 rotation { von_mises { mean: 0 kappa: 1 } } "
           "stratified_rotation: true }"));
  EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(q.status().message(), HasSubstr("group.image.stratified_rotation"));
}

}  // namespace
}  // namespace invariant
