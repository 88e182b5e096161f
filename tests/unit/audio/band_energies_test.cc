// band_energies.h: every kernel path gives the same bits; without runs, those
// of one biquad at a time in the documented order, for banks of fewer and more
// filters than a lane group; with runs side by side, those to rounding.
#include "core/audio/band_energies.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/base/kernel_path.h"
#include "core/base/random.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

// The reference: one filter at a time, scalar, the order band_energies.h states
// (in float: T = float), or the same recurrence in double (T = double).
template <typename T>
std::vector<double> OneFilter(const std::vector<float>& x, const Biquad& biquad, int64_t hop) {
  const T b0 = static_cast<T>(biquad.b0), b1 = static_cast<T>(biquad.b1),
          b2 = static_cast<T>(biquad.b2), a1 = static_cast<T>(biquad.a1),
          a2 = static_cast<T>(biquad.a2);
  std::vector<T> blocks((x.size() + static_cast<size_t>(hop) - 1) / static_cast<size_t>(hop));
  T x1 = 0, x2 = 0, y1 = 0, y2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const T xi = x[i];
    const T y = b0 * xi + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
    x2 = x1, x1 = xi, y2 = y1, y1 = y;
    blocks[i / static_cast<size_t>(hop)] += y * y;
  }
  return std::vector<double>(blocks.begin(), blocks.end());
}

std::vector<float> Noise(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(n);
  for (float& v : x) v = static_cast<float>(0.3 * rng.Normal());
  return x;
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class BandEnergiesTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok()); }
};

TEST_F(BandEnergiesTest, WithoutRunsEveryPathGivesTheBitsOfOneFilterAtATime) {
  // 8 kHz: the high-pass and 5 bands (one partial group); 1 Hz: 12 bands
  // (two groups); a last block shorter than the hop. A third of a second is
  // shorter than four runs and their warm-up.
  for (const auto& [rate, high_pass] :
       {std::pair{8000, 100.0}, std::pair{8000, 1.0}, std::pair{44100, 100.0}}) {
    const std::vector<Biquad> filters = DetectorFilters(high_pass, rate);
    const std::vector<float> x = Noise(static_cast<size_t>(rate / 3 + 17), 7);
    const int64_t hop = rate / 100;
    ASSERT_EQ(BlocksPerRun(filters, static_cast<int64_t>(x.size()), hop), 0);
    for (KernelPath path : SupportedKernelPaths()) {
      SCOPED_TRACE(KernelPathName(path));
      ASSERT_TRUE(SetKernelPath(path).ok());
      const std::vector<std::vector<double>> energies = BlockEnergies(x, filters, hop);
      ASSERT_EQ(energies.size(), filters.size());
      for (size_t k = 0; k < filters.size(); ++k) {
        const std::vector<double> want = OneFilter<float>(x, filters[k], hop);
        ASSERT_EQ(energies[k].size(), want.size());
        for (size_t b = 0; b < want.size(); ++b) {
          ASSERT_TRUE(SameBits(energies[k][b], want[b]))
              << "rate " << rate << " filter " << k << " block " << b << ": " << energies[k][b]
              << " against " << want[b];
        }
      }
    }
  }
}

// Noise with a burst 40 dB louder in the middle of the second run, so a run
// starts right after a loud past and a quiet block follows a loud one.
std::vector<float> NoiseWithABurst(size_t n, uint64_t seed) {
  std::vector<float> x = Noise(n, seed);
  for (size_t i = 3 * n / 8; i < n / 2; ++i) x[i] *= 100;
  return x;
}

TEST_F(BandEnergiesTest, RunsSideBySideGiveOnePassToRoundingOnEveryPath) {
  // 3 s at 8 kHz (6 filters: two passes of 3) and at 16 kHz (7: 4 and 3),
  // 1.5 s at 44.1 kHz (the slowest pole: a long warm-up); blocks after the
  // runs, the last shorter than the hop.
  for (const auto& [rate, seconds] :
       {std::pair{8000, 3.0}, std::pair{16000, 3.0}, std::pair{44100, 1.5}}) {
    SCOPED_TRACE(rate);
    const std::vector<Biquad> filters = DetectorFilters(100, rate);
    const std::vector<float> x = NoiseWithABurst(static_cast<size_t>(rate * seconds) + 17, 9);
    const int64_t hop = rate / 100;
    const int64_t per_run = BlocksPerRun(filters, static_cast<int64_t>(x.size()), hop);
    ASSERT_GT(per_run, 0);
    ASSERT_GE(per_run * hop, WarmUpSamples(filters));
    std::vector<std::vector<double>> first_path;
    for (KernelPath path : SupportedKernelPaths()) {
      SCOPED_TRACE(KernelPathName(path));
      ASSERT_TRUE(SetKernelPath(path).ok());
      const std::vector<std::vector<double>> energies = BlockEnergies(x, filters, hop);
      ASSERT_EQ(energies.size(), filters.size());
      for (size_t k = 0; k < filters.size(); ++k) {
        const std::vector<double> want = OneFilter<float>(x, filters[k], hop);
        ASSERT_EQ(energies[k].size(), want.size());
        const std::vector<double> exact = OneFilter<double>(x, filters[k], hop);
        for (size_t b = 0; b < want.size(); ++b) {
          // Run 0 is one pass from x[0]: the same bits; the others to a
          // float's rounding; all of them close to the recurrence in double.
          if (static_cast<int64_t>(b) < per_run) {
            ASSERT_TRUE(SameBits(energies[k][b], want[b])) << "filter " << k << " block " << b;
          }
          ASSERT_NEAR(energies[k][b], want[b], 1e-3 * want[b]) << "filter " << k << " block " << b;
          ASSERT_NEAR(energies[k][b], exact[b], 1e-3 * exact[b])
              << "filter " << k << " block " << b;
        }
      }
      if (first_path.empty()) first_path = energies;
      for (size_t k = 0; k < filters.size(); ++k) {
        for (size_t b = 0; b < energies[k].size(); ++b) {
          ASSERT_TRUE(SameBits(energies[k][b], first_path[k][b]))
              << "filter " << k << " block " << b;
        }
      }
    }
  }
}

TEST_F(BandEnergiesTest, TheWarmUpFollowsTheSlowestPole) {
  // 100 Hz at 8 kHz: poles at |p| ≈ 0.946, 10^−9 after about 370 samples;
  // 1 Hz: |p| ≈ 0.9994, some 37,000 (longer than a run of a 3 s recording).
  const int64_t fast = WarmUpSamples(DetectorFilters(100, 8000));
  EXPECT_GT(fast, 330);
  EXPECT_LT(fast, 420);
  const std::vector<Biquad> slow = DetectorFilters(1, 8000);
  EXPECT_GT(WarmUpSamples(slow), 30000);
  EXPECT_EQ(BlocksPerRun(slow, 3 * 8000, 80), 0);
  EXPECT_EQ(BlocksPerRun(DetectorFilters(100, 8000), 3 * 8000 + 79, 80), 37);
  Biquad unstable;
  unstable.a2 = 1;  // poles on the unit circle
  EXPECT_EQ(WarmUpSamples({unstable}), -1);
  EXPECT_EQ(BlocksPerRun({unstable}, 1 << 20, 80), 0);
}

TEST_F(BandEnergiesTest, TheBankIsTheHighPassThenOctaves) {
  const std::vector<Biquad> filters = DetectorFilters(100, 8000);
  ASSERT_EQ(filters.size(), 6u);  // 200, 400, 800, 1600, 3200 Hz under 3600
  // The high-pass passes nothing at DC: b0 + b1 + b2 = 0; a band-pass: b1 = 0, b2 = −b0.
  EXPECT_NEAR(filters[0].b0 + filters[0].b1 + filters[0].b2, 0, 1e-15);
  for (size_t k = 1; k < filters.size(); ++k) {
    EXPECT_EQ(filters[k].b1, 0);
    EXPECT_EQ(filters[k].b2, -filters[k].b0);
  }
  // A tone at a band's centre comes out of that band at 0 dB (power ½ of a
  // unit sine) and well down in the next octave's.
  const int rate = 8000;
  std::vector<float> tone(rate);
  for (int i = 0; i < rate; ++i) tone[i] = static_cast<float>(std::sin(2 * M_PI * 800 * i / rate));
  const std::vector<std::vector<double>> e = BlockEnergies(tone, filters, rate / 2);
  EXPECT_NEAR(e[3][1] / (rate / 2), 0.5, 0.01);  // the 800 Hz band, past its onset
  EXPECT_LT(e[4][1], e[3][1] / 4);               // 1600 Hz: more than 6 dB down
  EXPECT_TRUE(BlockEnergies({}, filters, 80)[0].empty());
}

}  // namespace
}  // namespace invariant::audio
