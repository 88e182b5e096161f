// The enumerated audio group (group.enumerate on AudioTransformGroup): every
// whole frequency-bin shift of the pitch range × every whole frame shift.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/random.h"
#include "core/groups/audio_distribution.h"
#include "core/groups/audio_transform.h"
#include "core/groups/group_factory.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/unit/groups/group_test_util.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<GroupDistribution>> Make(const std::string& text) {
  v1::GroupSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return MakeGroupDistribution(spec);
}

// (bin shift, frame shift) of each listed element.
std::vector<std::pair<long, long>> Shifts(const GroupDistribution& q) {
  const auto& action = dynamic_cast<const AudioTransform&>(q.action());
  std::vector<std::pair<long, long>> out;
  for (const GroupElement& g : q.Enumerate()) {
    EXPECT_EQ(g.params[1], 1.0);
    out.emplace_back(std::lround(action.PitchBins(g.params[0])), std::lround(g.params[2]));
  }
  return out;
}

TEST(AudioEnumerateTest, ListsEveryWholeBinShiftTimesEveryWholeFrameShift) {
  // 24 bins per octave: 50 cents a bin; [-120, 160] cents holds bins -2..3;
  // [-2.5, 1.5] frames holds -2..1.
  auto q = Make(
      "audio { frequency_bins: 16 frames: 20 bins_per_octave: 24"
      " pitch_cents { uniform { low: -120 high: 160 } }"
      " time_shift { uniform { low: -2.5 high: 1.5 } } } enumerate: true");
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_TRUE((*q)->enumerable());
  const auto shifts = Shifts(**q);
  ASSERT_EQ(shifts.size(), 6u * 4u);
  size_t i = 0;
  for (long b = -2; b <= 3; ++b) {
    for (long s = -2; s <= 1; ++s) EXPECT_EQ(shifts[i++], std::make_pair(b, s));
  }
  EXPECT_FALSE((*q)->symmetric());  // bin 3 has no −3
  EXPECT_THAT((*q)->name(), HasSubstr("uniform over 24 integer shifts"));

  // Draws are picks from the list.
  Rng rng(7);
  const std::vector<GroupElement> listed = (*q)->Enumerate();
  for (const GroupElement& g : (*q)->Sample(50, rng)) {
    EXPECT_NE(std::find(listed.begin(), listed.end(), g), listed.end());
  }
}

TEST(AudioEnumerateTest, RangeEndsOnWholeShiftsCountAndUnsetLawsAreZero) {
  // 36 bins per octave: −100 cents is exactly bin −3 (up to rounding).
  auto q = Make(
      "audio { frequency_bins: 8 frames: 8 bins_per_octave: 36"
      " pitch_cents { uniform { low: -100 high: 100 } } } enumerate: true");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ((*q)->Enumerate().size(), 7u);
  EXPECT_TRUE((*q)->symmetric());
  for (const auto& [b, s] : Shifts(**q)) EXPECT_EQ(s, 0);

  auto identity = Make("audio { frequency_bins: 8 frames: 8 bins_per_octave: 12 } enumerate: true");
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(Shifts(**identity), (std::vector<std::pair<long, long>>{{0, 0}}));

  auto fixed_tempo = Make(
      "audio { frequency_bins: 8 frames: 8 bins_per_octave: 12 tempo { fixed { value: 1 } }"
      " time_shift { uniform { low: -1 high: 1 } } } enumerate: true");
  ASSERT_TRUE(fixed_tempo.ok()) << fixed_tempo.status();
  EXPECT_EQ((*fixed_tempo)->Enumerate().size(), 3u);
}

TEST(AudioEnumerateTest, IntegerShiftsCopyValuesExactlyWithZeroFill) {
  constexpr int64_t kF = 12, kT = 10;
  auto q = Make(
      "audio { frequency_bins: 12 frames: 10 bins_per_octave: 36"
      " pitch_cents { uniform { low: -200 high: 200 } }"
      " time_shift { uniform { low: -3 high: 3 } } } enumerate: true");
  ASSERT_TRUE(q.ok()) << q.status();
  const std::vector<float> x = testing_util::RandomVectors(1, kF * kT, 11);
  const auto shifts = Shifts(**q);
  const std::vector<GroupElement> elements = (*q)->Enumerate();
  ASSERT_EQ(elements.size(), 13u * 7u);
  for (size_t k = 0; k < elements.size(); ++k) {
    const auto [b, s] = shifts[k];
    const std::vector<float> y = testing_util::Act((*q)->action(), elements[k], x);
    for (int64_t f = 0; f < kF; ++f) {
      for (int64_t t = 0; t < kT; ++t) {
        const int64_t f0 = f - b, t0 = t - s;
        const float want = f0 >= 0 && f0 < kF && t0 >= 0 && t0 < kT ? x[f0 * kT + t0] : 0.0f;
        ASSERT_EQ(y[f * kT + t], want) << "b=" << b << " s=" << s << " f=" << f << " t=" << t;
      }
    }
  }
}

TEST(AudioEnumerateTest, RejectsLawsThatAreNotWholeShiftsNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tempo { uniform { low: 0.9 high: 1.1 } }",
       "group.enumerate needs group.audio.tempo unset or fixed at 1, got uniform"},
      {"tempo { fixed { value: 1.5 } }", "group.enumerate needs group.audio.tempo"},
      {"pitch_cents { normal { mean: 0 stddev: 100 } }",
       "group.enumerate needs group.audio.pitch_cents unset, fixed or uniform, got normal"},
      {"time_shift { normal { mean: 0 stddev: 2 } }",
       "group.enumerate needs group.audio.time_shift unset, fixed or uniform"},
      {"pitch_cents { uniform { low: 10 high: 90 } }",
       "group.enumerate needs group.audio.pitch_cents to hold a whole shift"},
      {"time_shift { fixed { value: 0.5 } }",
       "group.enumerate needs group.audio.time_shift to hold a whole shift"},
      {"time_shift { uniform { low: -100000 high: 100000 } }", "more than 40320"},
  };
  for (const auto& [law, message] : cases) {
    const std::string text =
        "audio { frequency_bins: 8 frames: 8 bins_per_octave: 12 " + law + " } enumerate: true";
    const auto made = Make(text);
    ASSERT_FALSE(made.ok()) << text;
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(made.status().message()), HasSubstr(message)) << text;
  }
  // Without enumerate the same laws stay continuous and valid.
  auto sampled = Make(
      "audio { frequency_bins: 8 frames: 8 bins_per_octave: 12"
      " tempo { uniform { low: 0.9 high: 1.1 } } }");
  ASSERT_TRUE(sampled.ok());
  EXPECT_FALSE((*sampled)->enumerable());
}

}  // namespace
}  // namespace invariant
