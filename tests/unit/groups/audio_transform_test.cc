#include "core/groups/audio_transform.h"

#include <cmath>
#include <memory>
#include <vector>

#include "core/base/random.h"
#include "core/groups/audio_distribution.h"
#include "core/groups/scalar_distribution.h"
#include "gtest/gtest.h"
#include "tests/unit/groups/group_test_util.h"

namespace invariant {
namespace {

using SD = ScalarDistribution;
using testing_util::Act;
using testing_util::Dot;

constexpr int64_t kBins = 32;
constexpr int64_t kFrames = 65;  // odd: the centre frame t_c = 32 is a grid point
constexpr double kBpo = 12.0;    // 100 cents = 1 bin
constexpr int64_t kCentreFrame = (kFrames - 1) / 2;
constexpr double kCentre = 0.5 * (kFrames - 1);

// A smooth spectrogram that is ~0 near the border: a Gaussian blob of widths
// (sigma_f, sigma_t) centred at (centre bin + df, centre frame + dt).
std::vector<float> Blob(double sigma_f, double sigma_t, double df = 0.0, double dt = 0.0) {
  std::vector<float> x(static_cast<size_t>(kBins * kFrames));
  const double cf = 0.5 * (kBins - 1);
  for (int64_t f = 0; f < kBins; ++f) {
    for (int64_t t = 0; t < kFrames; ++t) {
      const double u = (f - cf - df) / sigma_f, v = (t - kCentre - dt) / sigma_t;
      x[f * kFrames + t] = static_cast<float>(std::exp(-0.5 * (u * u + v * v)));
    }
  }
  return x;
}

double Norm(const std::vector<float>& v) {
  return std::sqrt(Dot(v.data(), v.data(), static_cast<int64_t>(v.size())));
}

// ‖a − b‖ / ‖b‖.
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s) / Norm(b);
}

// The time part of the point map documented in audio_transform.h.
double MapFrame(const GroupElement& g, double t) {
  return kCentre + (t - kCentre) / g.params[1] + g.params[2];
}

TEST(AudioTransformTest, LayoutNameIdentityAndNotExactlyUnitary) {
  AudioTransform action(kBins, kFrames, kBpo);
  EXPECT_EQ(action.dim(), kBins * kFrames);
  EXPECT_EQ(action.name(), "audio_transform(32x65, bpo=12)");
  EXPECT_FALSE(action.exactly_unitary());
  EXPECT_EQ(action.Identity(), AudioTransform::Element(0, 1, 0));
  const std::vector<float> x = testing_util::RandomVectors(3, action.dim(), 1);
  EXPECT_EQ(Act(action, action.Identity(), x), x);
}

// Pitch up by k bins: row f of the output is row f − k of the input, the k
// lowest rows are silence. Also for bins_per_octave = 7, where 1200/7 cents
// is not a whole number and the bin position is snapped.
TEST(AudioTransformTest, WholeBinPitchShiftsMoveRowsExactlyWithZeroFill) {
  for (double bpo : {12.0, 7.0, 24.0}) {
    AudioTransform action(kBins, kFrames, bpo);
    const std::vector<float> x = testing_util::RandomVectors(2, action.dim(), 2);
    for (int k : {1, 3, -2, -5, 40}) {
      const GroupElement g = AudioTransform::Element(k * 1200.0 / bpo, 1.0, 0.0);
      const std::vector<float> out = Act(action, g, x);
      for (int64_t v = 0; v < 2; ++v) {
        for (int64_t f = 0; f < kBins; ++f) {
          for (int64_t t = 0; t < kFrames; ++t) {
            const int64_t src = f - k;
            const float want =
                (src >= 0 && src < kBins) ? x[(v * kBins + src) * kFrames + t] : 0.0f;
            ASSERT_EQ(out[(v * kBins + f) * kFrames + t], want)
                << "bpo " << bpo << " k " << k << " at " << f << "," << t;
          }
        }
      }
    }
  }
}

TEST(AudioTransformTest, WholeFrameTimeShiftsMoveColumnsLaterExactly) {
  AudioTransform action(kBins, kFrames, kBpo);
  const std::vector<float> x = testing_util::RandomVectors(1, action.dim(), 3);
  for (int s : {1, 4, -7}) {
    // A whole-bin pitch shift at the same time: both moves are exact.
    const std::vector<float> out = Act(action, AudioTransform::Element(-200, 1.0, s), x);
    for (int64_t f = 0; f < kBins; ++f) {
      for (int64_t t = 0; t < kFrames; ++t) {
        const int64_t sf = f + 2, st = t - s;
        const float want = (sf < kBins && st >= 0 && st < kFrames) ? x[sf * kFrames + st] : 0.0f;
        ASSERT_EQ(out[f * kFrames + t], want) << "s " << s << " at " << f << "," << t;
      }
    }
  }
}

// Tempo 2 plays twice as fast: a word of 21 frames about the centre takes 11
// frames, sampled at every other input frame and scaled by √2.
TEST(AudioTransformTest, TempoTwoHalvesTheFramesAboutTheCentreAndScalesBySqrtTwo) {
  AudioTransform action(kBins, kFrames, kBpo);
  std::vector<float> x(static_cast<size_t>(action.dim()), 0.0f);
  Rng rng(4);
  const int64_t half = 10;
  for (int64_t f = 0; f < kBins; ++f) {
    for (int64_t t = kCentreFrame - half; t <= kCentreFrame + half; ++t) {
      x[f * kFrames + t] = static_cast<float>(1.0 + rng.Uniform());
    }
  }
  const std::vector<float> out = Act(action, AudioTransform::Element(0, 2.0, 0), x);
  for (int64_t f = 0; f < kBins; ++f) {
    for (int64_t t = 0; t < kFrames; ++t) {
      const int64_t dt = t - kCentreFrame;
      const float got = out[f * kFrames + t];
      if (std::abs(dt) > half / 2) {  // |dt| > 5
        ASSERT_EQ(got, 0.0f) << f << "," << t;
      } else {
        const float src = x[f * kFrames + kCentreFrame + 2 * dt];
        ASSERT_NEAR(got, std::sqrt(2.0) * src, 1e-6) << f << "," << t;
      }
    }
  }
}

// The temporal width (standard deviation of the blob's profile along t)
// scales by 1/a and the peak by √a, so the energy is kept. Measured worst
// cases: width 2.2e-3 relative, norm 1.1e-3.
TEST(AudioTransformTest, TempoScalesTheWidthByOneOverAAndThePeakBySqrtA) {
  AudioTransform action(kBins, kFrames, kBpo);
  const std::vector<float> x = Blob(3.0, 6.0);
  const int64_t row = kBins / 2;
  auto width = [&](const std::vector<float>& v) {
    double m0 = 0.0, m2 = 0.0;
    for (int64_t t = 0; t < kFrames; ++t) {
      const double w = v[row * kFrames + t], dt = t - kCentre;
      m0 += w;
      m2 += w * dt * dt;
    }
    return std::sqrt(m2 / m0);
  };
  auto peak = [&](const std::vector<float>& v) { return v[row * kFrames + kCentreFrame]; };
  for (double a : {2.0, 0.8, 1.3}) {
    const std::vector<float> gx = Act(action, AudioTransform::Element(0, a, 0), x);
    EXPECT_NEAR(width(gx) / width(x), 1.0 / a, 0.005 / a) << "a=" << a;
    EXPECT_NEAR(peak(gx) / peak(x), std::sqrt(a), 1e-6) << "a=" << a;
    EXPECT_NEAR(Norm(gx) / Norm(x), 1.0, 0.003) << "a=" << a;
  }
}

TEST(AudioTransformTest, ComposeAndInverseAreExactParameterAlgebra) {
  AudioTransform action(kBins, kFrames, kBpo);
  const GroupElement a = AudioTransform::Element(130, 1.25, 2.5);
  const GroupElement b = AudioTransform::Element(-45, 0.7, -3.75);
  const GroupElement ab = action.Compose(a, b);
  const GroupElement a_inv = action.Inverse(a);
  EXPECT_DOUBLE_EQ(ab.params[0], 85.0);
  EXPECT_DOUBLE_EQ(ab.params[1], 1.25 * 0.7);
  for (double t : {0.0, 13.5, 32.0, 64.0}) {
    EXPECT_NEAR(MapFrame(ab, t), MapFrame(a, MapFrame(b, t)), 1e-12) << t;
    EXPECT_NEAR(MapFrame(a_inv, MapFrame(a, t)), t, 1e-12) << t;
    EXPECT_NEAR(MapFrame(a, MapFrame(a_inv, t)), t, 1e-12) << t;
  }
  const GroupElement e = action.Compose(a, a_inv);
  const GroupElement id = action.Identity();
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(e.params[k], id.params[k], 1e-12) << k;
  EXPECT_NEAR(action.PitchBins(130), 1.3, 1e-12);
}

// Bounds measured on these 32 × 65 blobs (σ ≈ 3 bins, 5 frames; < 1e-5 at
// the border) and stated with about 2× headroom; they bound interpolation
// blur, not border clipping. Measured worst cases: composed vs sequential
// 1.16e-2, g⁻¹·(g·x) vs x 2.33e-2, norm 9.0e-3, inner product 1.65e-2.
TEST(AudioTransformTest, ComposedElementMatchesSequentialApplicationAndInverseUndoes) {
  AudioTransform action(kBins, kFrames, kBpo);
  const std::vector<float> x = Blob(3.0, 5.0, 1.0, -2.0);
  const GroupElement a = AudioTransform::Element(70, 1.15, 1.3);
  const GroupElement b = AudioTransform::Element(-135, 0.9, -2.6);
  const std::vector<float> sequential = Act(action, a, Act(action, b, x));
  const std::vector<float> composed = Act(action, action.Compose(a, b), x);
  EXPECT_LT(RelativeError(sequential, composed), 0.025);
  const std::vector<float> back = Act(action, action.Inverse(a), Act(action, a, x));
  EXPECT_LT(RelativeError(back, x), 0.05);
  // A non-trivial element does change the pattern: the bounds are not vacuous.
  EXPECT_GT(RelativeError(Act(action, a, x), x), 0.2);  // measured 0.30
}

TEST(AudioTransformTest, SmoothPatternsAwayFromTheBorderKeepInnerProducts) {
  AudioTransform action(kBins, kFrames, kBpo);
  const std::vector<float> x = Blob(3.0, 5.0);
  const std::vector<float> z = Blob(2.5, 6.0, 1.5, -3.0);
  const double nx = Norm(x), xz = Dot(x.data(), z.data(), action.dim());
  for (double c : {0.0, 35.0, -160.0}) {
    for (double a : {1.0, 0.85, 1.2}) {
      for (double s : {0.0, 0.4, -2.7}) {
        const GroupElement g = AudioTransform::Element(c, a, s);
        const std::vector<float> gx = Act(action, g, x), gz = Act(action, g, z);
        EXPECT_NEAR(Norm(gx) / nx, 1.0, 0.02) << c << " " << a << " " << s;
        EXPECT_NEAR(Dot(gx.data(), gz.data(), action.dim()) / xz, 1.0, 0.035)
            << c << " " << a << " " << s;
      }
    }
  }
}

TEST(AudioTransformTest, ActsOnEachVectorOfTheBatchAlike) {
  AudioTransform action(kBins, kFrames, kBpo);
  const std::vector<float> x = testing_util::RandomVectors(3, action.dim(), 5);
  const GroupElement g = AudioTransform::Element(37, 1.1, -0.6);
  const std::vector<float> all = Act(action, g, x);
  for (int64_t v = 0; v < 3; ++v) {
    const std::vector<float> one(x.begin() + v * action.dim(), x.begin() + (v + 1) * action.dim());
    const std::vector<float> got = Act(action, g, one);
    for (int64_t i = 0; i < action.dim(); ++i) ASSERT_EQ(all[v * action.dim() + i], got[i]);
  }
}

AudioTransformDistribution MakeAudioDist(AudioTransformLaw law) {
  return AudioTransformDistribution(std::make_unique<AudioTransform>(kBins, kFrames, kBpo), law);
}

TEST(AudioTransformDistributionTest, SymmetricExactlyWhenInverseHasTheSameLaw) {
  AudioTransformLaw law;
  EXPECT_TRUE(MakeAudioDist(law).symmetric());  // point mass at the identity
  law.pitch_cents = SD::Normal(0, 50);
  EXPECT_TRUE(MakeAudioDist(law).symmetric());
  law.tempo = SD::LogNormal(0, 0.1);
  EXPECT_TRUE(MakeAudioDist(law).symmetric());  // (c, a, 0)⁻¹ = (−c, 1/a, 0)
  law.time_shift = SD::Uniform(-3, 3);
  EXPECT_FALSE(MakeAudioDist(law).symmetric());  // s⁻¹ = −a·s couples s with a
  law.tempo = SD::Fixed(1);
  EXPECT_TRUE(MakeAudioDist(law).symmetric());  // shifts only, symmetric ranges
  law.time_shift = SD::Uniform(-1, 3);
  EXPECT_FALSE(MakeAudioDist(law).symmetric());
  law.time_shift = SD::Fixed(0);
  law.tempo = SD::Uniform(0.8, 1.25);
  EXPECT_FALSE(MakeAudioDist(law).symmetric());  // 1/a is not uniform
  law.tempo = SD::LogNormal(0.1, 0.1);
  EXPECT_FALSE(MakeAudioDist(law).symmetric());
  law.tempo = SD::Fixed(1);
  law.pitch_cents = SD::Uniform(0, 100);
  EXPECT_FALSE(MakeAudioDist(law).symmetric());
}

// E[s(g⁻¹)²] = E[a²]·E[s²] = e^{2σ²}·E[s²] with a random tempo: the law is
// not symmetric, as symmetric() says; with a fixed tempo the moments agree.
TEST(AudioTransformDistributionTest, InverseMomentsAgreeWithSymmetric) {
  const AudioTransform action(kBins, kFrames, kBpo);
  AudioTransformLaw law;
  law.time_shift = SD::Normal(0, 2.0);
  const double ls = 0.4;
  for (bool random_tempo : {false, true}) {
    law.tempo = random_tempo ? SD::LogNormal(0, ls) : SD::Fixed(1);
    const AudioTransformDistribution dist = MakeAudioDist(law);
    Rng rng(6);
    double fwd = 0.0, inv = 0.0;
    const int n = 40000;
    for (const GroupElement& g : dist.Sample(n, rng)) {
      fwd += g.params[2] * g.params[2];
      const double s = action.Inverse(g).params[2];
      inv += s * s;
    }
    EXPECT_EQ(dist.symmetric(), !random_tempo);
    EXPECT_NEAR(inv / fwd, random_tempo ? std::exp(2 * ls * ls) : 1.0, 0.05);
  }
}

TEST(AudioTransformDistributionTest, DrawsFollowTheFactorsAndRepeatPerSeed) {
  AudioTransformLaw law;
  law.pitch_cents = SD::Normal(20, 50);
  law.tempo = SD::LogNormal(0.05, 0.1);
  law.time_shift = SD::Uniform(-4, 2);
  const AudioTransformDistribution dist = MakeAudioDist(law);
  EXPECT_FALSE(dist.enumerable());
  EXPECT_FALSE(dist.depends_on_input());
  EXPECT_EQ(dist.name(),
            "audio_transform(32x65, bpo=12) ~ pitch_cents normal(mean=20, stddev=50) x tempo "
            "log_normal(log_mean=0.05, log_stddev=0.1) x time_shift uniform(-4, 2)");
  Rng rng(7);
  const int n = 20000;
  const std::vector<GroupElement> draws = dist.Sample(n, rng);
  ASSERT_EQ(draws.size(), static_cast<size_t>(n));
  double c1 = 0, c2 = 0, l1 = 0, l2 = 0, s1 = 0;
  for (const GroupElement& g : draws) {
    ASSERT_EQ(g.params.size(), 3u);
    ASSERT_GT(g.params[1], 0.0);
    ASSERT_GE(g.params[2], -4.0);
    ASSERT_LT(g.params[2], 2.0);
    c1 += g.params[0];
    c2 += g.params[0] * g.params[0];
    l1 += std::log(g.params[1]);
    l2 += std::log(g.params[1]) * std::log(g.params[1]);
    s1 += g.params[2];
  }
  c1 /= n, c2 /= n, l1 /= n, l2 /= n, s1 /= n;
  // Standard errors: 50/√n = 0.35, 0.1/√n = 7e-4, 6/√(12n) = 0.012.
  EXPECT_NEAR(c1, 20.0, 1.5);
  EXPECT_NEAR(std::sqrt(c2 - c1 * c1), 50.0, 1.5);
  EXPECT_NEAR(l1, 0.05, 3e-3);
  EXPECT_NEAR(std::sqrt(l2 - l1 * l1), 0.1, 3e-3);
  EXPECT_NEAR(s1, -1.0, 0.05);
  Rng a(8), b(8);
  EXPECT_EQ(dist.Sample(30, a), dist.Sample(30, b));
}

TEST(AudioTransformDistributionTest, UnsetFactorsAreTheIdentity) {
  const AudioTransformDistribution dist = MakeAudioDist(AudioTransformLaw{});
  Rng rng(9);
  for (const GroupElement& g : dist.Sample(5, rng)) EXPECT_EQ(g, dist.action().Identity());
}

}  // namespace
}  // namespace invariant
