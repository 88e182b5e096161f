#include "core/groups/dihedral.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/groups/group_factory.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/unit/groups/group_test_util.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;
using testing_util::Act;
using testing_util::ExpectClosedEnumeration;
using testing_util::ExpectExactGroupAxioms;
using testing_util::RandomVectors;

v1::GroupSpec Spec(const std::string& text) {
  v1::GroupSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

// A 3 × 3 × 2 image whose pixel (y, x) holds (10y + x, −(10y + x)).
std::vector<float> Crafted3x3x2() {
  std::vector<float> img;
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 3; ++x) {
      img.push_back(static_cast<float>(10 * y + x));
      img.push_back(-static_cast<float>(10 * y + x));
    }
  }
  return img;
}

// The first channel of a 3 × 3 × 2 image, as rows.
std::vector<float> FirstChannel(const std::vector<float>& img) {
  std::vector<float> c;
  for (size_t i = 0; i < img.size(); i += 2) {
    EXPECT_EQ(img[i + 1], -img[i]) << "channels were separated";
    c.push_back(img[i]);
  }
  return c;
}

TEST(DihedralTest, MirrorAndTurnMoveCraftedPixels) {
  DihedralAction action(3, 3, 2);
  const std::vector<float> img = Crafted3x3x2();
  // Left–right mirror: each row reversed.
  EXPECT_EQ(FirstChannel(Act(action, DihedralAction::Element(0, true), img)),
            (std::vector<float>{2, 1, 0, 12, 11, 10, 22, 21, 20}));
  // A quarter turn counter-clockwise: the last column becomes the first row.
  EXPECT_EQ(FirstChannel(Act(action, DihedralAction::Element(1, false), img)),
            (std::vector<float>{2, 12, 22, 1, 11, 21, 0, 10, 20}));
  // Half turn: reversed raster order.
  EXPECT_EQ(FirstChannel(Act(action, DihedralAction::Element(2, false), img)),
            (std::vector<float>{22, 21, 20, 12, 11, 10, 2, 1, 0}));
  // Mirror, then a quarter turn: the transpose.
  EXPECT_EQ(FirstChannel(Act(action, DihedralAction::Element(1, true), img)),
            (std::vector<float>{0, 10, 20, 1, 11, 21, 2, 12, 22}));
}

TEST(DihedralTest, FourTurnsAreTheIdentity) {
  DihedralAction action(5, 5, 3);
  const std::vector<float> x = RandomVectors(2, action.dim(), 7);
  const GroupElement turn = DihedralAction::Element(1, false);
  std::vector<float> y = x;
  for (int k = 0; k < 4; ++k) {
    y = Act(action, turn, y);
    if (k < 3) EXPECT_NE(y, x) << k + 1 << " turns";
  }
  EXPECT_EQ(y, x);
}

TEST(DihedralTest, EveryElementIsAPixelPermutation) {
  DihedralAction action(4, 4, 2);
  UniformDihedral all(std::make_unique<DihedralAction>(4, 4, 2), true, true);
  for (const GroupElement& g : all.Enumerate()) {
    std::vector<int64_t> source = action.SourcePixels(g);
    std::sort(source.begin(), source.end());
    for (int64_t i = 0; i < 16; ++i) ASSERT_EQ(source[static_cast<size_t>(i)], i);
  }
}

TEST(DihedralTest, GroupLawsOfD4C4AndTheMirror) {
  UniformDihedral d4(std::make_unique<DihedralAction>(5, 5, 3), true, true);
  ExpectClosedEnumeration(d4, 8);
  ExpectExactGroupAxioms(d4.action(), d4.Enumerate(), 1);
  UniformDihedral c4(std::make_unique<DihedralAction>(4, 4, 1), true, false);
  ExpectClosedEnumeration(c4, 4);
  ExpectExactGroupAxioms(c4.action(), c4.Enumerate(), 2);
  // Flips alone act on any rectangle.
  UniformDihedral mirror(std::make_unique<DihedralAction>(3, 6, 2), false, true);
  ExpectClosedEnumeration(mirror, 2);
  ExpectExactGroupAxioms(mirror.action(), mirror.Enumerate(), 3);
}

TEST(DihedralTest, ComposeMatchesApplyingTwiceForEveryPair) {
  UniformDihedral d4(std::make_unique<DihedralAction>(4, 4, 2), true, true);
  const GroupAction& action = d4.action();
  const std::vector<float> x = RandomVectors(1, action.dim(), 11);
  std::set<std::vector<float>> images;
  for (const GroupElement& a : d4.Enumerate()) {
    images.insert(Act(action, a, x));
    for (const GroupElement& b : d4.Enumerate()) {
      ASSERT_EQ(Act(action, action.Compose(a, b), x), Act(action, a, Act(action, b, x)));
    }
  }
  EXPECT_EQ(images.size(), 8u);  // the 8 elements act differently
}

TEST(DihedralTest, EnumerationOrderIsTheDocumentedOne) {
  UniformDihedral d4(std::make_unique<DihedralAction>(3, 3, 1), true, true);
  const std::vector<GroupElement> all = d4.Enumerate();
  ASSERT_EQ(all.size(), 8u);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(all[k], DihedralAction::Element(k % 4, k >= 4));
  UniformDihedral flips(std::make_unique<DihedralAction>(3, 3, 1), false, true);
  EXPECT_EQ(flips.Enumerate(), (std::vector<GroupElement>{DihedralAction::Element(0, false),
                                                          DihedralAction::Element(0, true)}));
}

TEST(DihedralTest, DrawsAreUniformAndSeeded) {
  UniformDihedral d4(std::make_unique<DihedralAction>(3, 3, 1), true, true);
  Rng rng(5), again(5);
  const int draws = 8000;
  const std::vector<GroupElement> sample = d4.Sample(draws, rng);
  EXPECT_EQ(sample, d4.Sample(draws, again));
  std::vector<int> counts(8, 0);
  const std::vector<GroupElement> all = d4.Enumerate();
  for (const GroupElement& g : sample) {
    const auto it = std::find(all.begin(), all.end(), g);
    ASSERT_NE(it, all.end());
    ++counts[static_cast<size_t>(it - all.begin())];
  }
  for (int c : counts) EXPECT_NEAR(c, draws / 8, 150);
}

TEST(DihedralTest, FactoryBuildsAndEnumerates) {
  auto made = MakeGroupDistribution(
      Spec("dihedral { height: 6 width: 6 channels: 3 turns: true flips: true } enumerate: true"));
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ((*made)->action().dim(), 108);
  EXPECT_EQ((*made)->Enumerate().size(), 8u);
  EXPECT_TRUE((*made)->symmetric());
  auto flips =
      MakeGroupDistribution(Spec("dihedral { height: 2 width: 7 channels: 1 flips: true }"));
  ASSERT_TRUE(flips.ok()) << flips.status();
  EXPECT_EQ((*flips)->Enumerate().size(), 2u);
}

TEST(DihedralTest, FactoryRejectsBadSpecsNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dihedral { height: 0 width: 3 channels: 1 flips: true }",
       "group.dihedral.height must be in [1, 16384], got 0"},
      {"dihedral { height: 3 width: -1 channels: 1 flips: true }",
       "group.dihedral.width must be in [1, 16384], got -1"},
      {"dihedral { height: 3 width: 3 channels: 0 flips: true }",
       "group.dihedral.channels must be in [1, 64], got 0"},
      {"dihedral { height: 3 width: 3 channels: 1 }",
       "group.dihedral must set turns, flips or both"},
      {"dihedral { height: 3 width: 4 channels: 1 turns: true }",
       "group.dihedral.turns needs height == width, got height=3, width=4"},
  };
  for (const auto& [text, message] : cases) {
    const auto made = MakeGroupDistribution(Spec(text));
    ASSERT_FALSE(made.ok()) << text;
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(made.status().message()), HasSubstr(message)) << text;
  }
}

}  // namespace
}  // namespace invariant
