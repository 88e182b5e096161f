#include "core/audio/resample.h"

#include <array>
#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;

std::vector<float> Sine(double frequency, int rate, int n, double amplitude = 0.5) {
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = static_cast<float>(amplitude * std::sin(2 * kPi * frequency * i / rate));
  return x;
}

// Upward zero crossings per second over [begin, end).
double CrossingFrequency(const std::vector<float>& x, int rate, int begin, int end) {
  int first = -1, last = -1, count = 0;
  for (int i = begin + 1; i < end; ++i) {
    if (x[i - 1] < 0 && x[i] >= 0) {
      if (first < 0) first = i;
      last = i;
      ++count;
    }
  }
  return (count - 1) * static_cast<double>(rate) / (last - first);
}

TEST(ResampleTest, OutputLengthIsTheRoundedRatio) {
  for (const auto& [n, from, to, want] :
       std::vector<std::array<int, 4>>{{1001, 16000, 8000, 501},
                                       {1000, 8000, 16000, 2000},
                                       {3, 44100, 16000, 1},
                                       {1, 48000, 1000, 1},
                                       {999, 22050, 16000, 725}}) {
    const auto y = Resample(std::vector<float>(n, 0.1f), from, to, "x");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(static_cast<int>(y->size()), want) << n << " " << from << "→" << to;
  }
}

TEST(ResampleTest, EqualRatesAreTheIdentity) {
  const std::vector<float> x = Sine(123, 8000, 777);
  const auto y = Resample(x, 8000, 8000, "x");
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(*y, x);
}

TEST(ResampleTest, ASineKeepsItsFrequencyAndAmplitude) {
  const std::vector<float> x = Sine(440, 16000, 16000);
  const auto y = Resample(x, 16000, 8000, "x");
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 8000u);
  EXPECT_NEAR(CrossingFrequency(*y, 8000, 1000, 7000), 440.0, 0.5);
  float peak = 0;
  for (int i = 1000; i < 7000; ++i) peak = std::max(peak, std::fabs((*y)[i]));
  EXPECT_NEAR(peak, 0.5, 0.01);
  // And upward, to a rate that is not a multiple.
  const auto z = Resample(x, 16000, 22050, "x");
  ASSERT_TRUE(z.ok());
  EXPECT_NEAR(CrossingFrequency(*z, 22050, 2000, 20000), 440.0, 0.5);
}

TEST(ResampleTest, IsDeterministic) {
  const std::vector<float> x = Sine(1000, 44100, 4410);
  const auto a = Resample(x, 44100, 16000, "x");
  const auto b = Resample(x, 44100, 16000, "x");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(ResampleTest, RefusesBadRatesAndRatios) {
  const std::vector<float> x(10, 0.0f);
  const auto low = Resample(x, 500, 8000, "clip 3");
  EXPECT_EQ(low.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(low.status().message(), HasSubstr("clip 3: sample rate 500 Hz outside"));
  const auto ratio = Resample(x, 1000, 384000, "clip 3");
  EXPECT_EQ(ratio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ratio.status().message(), HasSubstr("ratio"));
  EXPECT_TRUE(Resample(x, 1000, 64000, "clip 3").ok());
}

}  // namespace
}  // namespace invariant::audio
