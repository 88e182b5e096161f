// band_energies.h: every kernel path gives the bits of one biquad at a time in
// the documented order, for banks of fewer and more filters than a lane group.
#include "core/audio/band_energies.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/base/kernel_path.h"
#include "core/base/random.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

// The reference: one filter at a time, scalar, the order band_energies.h states.
std::vector<double> OneFilter(const std::vector<float>& x, const Biquad& f, int64_t hop) {
  std::vector<double> blocks((x.size() + static_cast<size_t>(hop) - 1) / static_cast<size_t>(hop));
  double x1 = 0, x2 = 0, y1 = 0, y2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    const double y = f.b0 * xi + f.b1 * x1 + f.b2 * x2 - f.a1 * y1 - f.a2 * y2;
    x2 = x1, x1 = xi, y2 = y1, y1 = y;
    blocks[i / static_cast<size_t>(hop)] += y * y;
  }
  return blocks;
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

TEST_F(BandEnergiesTest, EveryPathGivesTheBitsOfOneFilterAtATime) {
  // 8 kHz: the high-pass and 5 bands (one partial group); 1 Hz: 12 bands
  // (two groups); a last block shorter than the hop.
  for (const auto& [rate, high_pass] :
       {std::pair{8000, 100.0}, std::pair{8000, 1.0}, std::pair{44100, 100.0}}) {
    const std::vector<Biquad> filters = DetectorFilters(high_pass, rate);
    const std::vector<float> x = Noise(static_cast<size_t>(rate / 3 + 17), 7);
    const int64_t hop = rate / 100;
    for (KernelPath path : SupportedKernelPaths()) {
      SCOPED_TRACE(KernelPathName(path));
      ASSERT_TRUE(SetKernelPath(path).ok());
      const std::vector<std::vector<double>> energies = BlockEnergies(x, filters, hop);
      ASSERT_EQ(energies.size(), filters.size());
      for (size_t k = 0; k < filters.size(); ++k) {
        const std::vector<double> want = OneFilter(x, filters[k], hop);
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
