#include "core/audio/time_stretch.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/data/synthetic_clips.h"

namespace invariant::audio {
namespace {

using ::testing::HasSubstr;

constexpr double kStretchPi = 3.14159265358979323846;

std::vector<float> StretchSine(double frequency, int rate, int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] =
        static_cast<float>(0.5 * std::sin(2 * kStretchPi * frequency * i / rate));
  }
  return x;
}

// The frequency of a steady tone over the middle half of x.
double MiddleFrequency(const std::vector<float>& x, int rate) {
  return testing::UpwardCrossingRate(x, x.size() / 4, 3 * x.size() / 4, rate);
}

double MiddleRms(const std::vector<float>& x) {
  double sum = 0;
  const size_t begin = x.size() / 4, end = 3 * x.size() / 4;
  for (size_t i = begin; i < end; ++i) sum += static_cast<double>(x[i]) * x[i];
  return std::sqrt(sum / static_cast<double>(end - begin));
}

TEST(TimeStretchTest, LengthIsTheRoundedQuotientAndPitchIsKept) {
  const std::vector<float> x = StretchSine(440, 8000, 8000);
  for (double a : {0.5, 0.8, 1.25, 2.0, 3.5}) {
    absl::StatusOr<std::vector<float>> y = TimeStretch(x, 8000, a, "clip");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(static_cast<int64_t>(y->size()), std::llround(8000 / a)) << a;
    EXPECT_NEAR(MiddleFrequency(*y, 8000), 440, 440 * 0.005) << a;
    EXPECT_NEAR(MiddleRms(*y), 0.5 / std::sqrt(2.0), 0.05) << a;
  }
}

TEST(TimeStretchTest, FactorOneAndEmptyReturnTheInput) {
  const std::vector<float> x = StretchSine(300, 16000, 1234);
  EXPECT_EQ(*TimeStretch(x, 16000, 1.0, "clip"), x);
  EXPECT_TRUE(TimeStretch({}, 16000, 1.7, "clip")->empty());
}

TEST(TimeStretchTest, AWordKeepsItsShapeAtAnotherTempo) {
  // A 200 Hz burst from 0.25 s to 0.5 s of a second of silence: twice as fast,
  // it lies from 0.125 s to 0.25 s of half a second.
  std::vector<float> x(8000, 0.0f);
  const std::vector<float> burst = StretchSine(200, 8000, 2000);
  std::copy(burst.begin(), burst.end(), x.begin() + 2000);
  const std::vector<float> y = *TimeStretch(x, 8000, 2.0, "clip");
  ASSERT_EQ(y.size(), 4000u);
  auto energy = [&](size_t begin, size_t end) {
    double e = 0;
    for (size_t i = begin; i < end; ++i) e += static_cast<double>(y[i]) * y[i];
    return e;
  };
  const double inside = energy(1000, 2000);
  EXPECT_GT(inside, 100 * (energy(0, 800) + energy(2200, 4000)));
}

TEST(PitchShiftTest, EveryFrequencyMovesByTheRatioAndTheLengthStays) {
  for (int rate : {8000, 16000, 44100}) {
    const std::vector<float> x = StretchSine(330, rate, rate);
    for (double cents : {400.0, -700.0, 50.0, 1200.0}) {
      absl::StatusOr<std::vector<float>> y = PitchShift(x, rate, cents, "clip");
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_NEAR(static_cast<double>(y->size()), rate, 2) << rate << " " << cents;
      const double want = 330 * std::exp2(cents / 1200);
      EXPECT_NEAR(MiddleFrequency(*y, rate), want, want * 0.004) << rate << " " << cents;
    }
  }
}

TEST(PitchShiftTest, IsDeterministicAndZeroIsTheIdentity) {
  const std::vector<float> x = StretchSine(250, 8000, 5000);
  EXPECT_EQ(*PitchShift(x, 8000, 0, "clip"), x);
  EXPECT_EQ(*PitchShift(x, 8000, 333, "clip"), *PitchShift(x, 8000, 333, "clip"));
}

TEST(TimeStretchTest, OutOfRangeArgumentsNameTheClip) {
  const std::vector<float> x(100, 0.1f);
  for (double a : {0.0, -1.0, 5.0, 0.2, std::nan("")}) {
    absl::StatusOr<std::vector<float>> y = TimeStretch(x, 8000, a, "clips/a.wav");
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << a;
    EXPECT_THAT(y.status().message(), HasSubstr("clips/a.wav: tempo factor")) << a;
  }
  EXPECT_THAT(TimeStretch(x, 500, 1.2, "c").status().message(), HasSubstr("c: sample rate 500"));
  EXPECT_THAT(PitchShift(x, 8000, 3000, "c").status().message(), HasSubstr("beyond"));
  EXPECT_THAT(PitchShift(x, 1000, -100, "c").status().message(), HasSubstr("needs a rate of"));
}

}  // namespace
}  // namespace invariant::audio
