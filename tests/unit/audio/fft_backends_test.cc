// The two FFT libraries against each other in one binary (fft_backends.h):
// their transforms at the front ends' sizes, and the rows of the shipped
// spoken-digit front end (train/configs/spoken_digits.textproto: 8 kHz,
// 1 s, constant-Q, 64 bins, both alignments) and of its STFT variant on
// speech-like clips at 8 and 16 kHz. They agree to float rounding, not bit
// for bit (fft.h): within 1e-6 of the largest value for a transform and
// 1e-4 of the largest value for a row (measured: up to 2.2e-7 and 1.1e-6).
#include "core/audio/fft_backends.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "gtest/gtest.h"
#include "invariant/v1/train_config.pb.h"

namespace invariant::audio::backends {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTransformTolerance = 1e-6;  // of the largest |value|
constexpr double kRowTolerance = 1e-4;        // of the largest |value|

v1::AudioFrontEnd ShippedFrontEnd() {
  std::ifstream in(std::string(INVARIANT_SOURCE_DIR) + "/train/configs/spoken_digits.textproto");
  std::stringstream text;
  text << in.rdbuf();
  v1::TrainConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &config));
  EXPECT_TRUE(config.data().audio().has_front_end());
  return config.data().audio().front_end();
}

// 1 s at `rate`: faint noise, then 0.6 s of a voiced glide (f0 100 → 150
// Hz, 20 harmonics under two formants), then noise.
std::vector<float> SpeechLikeClip(int rate, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(rate));
  double phase = 0;
  for (int i = 0; i < rate; ++i) {
    const double t = static_cast<double>(i) / rate;
    double v = 0.003 * rng.Normal();
    if (t >= 0.2 && t < 0.8) {
      const double u = (t - 0.2) / 0.6;
      phase += 2 * kPi * (100 + 50 * u) / rate;
      for (int h = 1; h <= 20; ++h) {
        const double f = h * (100 + 50 * u);
        const double gain = std::exp(-std::pow((f - 500) / 250, 2)) +
                            0.5 * std::exp(-std::pow((f - 1500) / 400, 2)) + 0.03;
        v += 0.3 * std::sin(kPi * u) * gain * std::sin(h * phase);
      }
    }
    x[static_cast<size_t>(i)] = static_cast<float>(v);
  }
  return x;
}

// max |a − b| over max |a|.
template <typename T>
double RelativeDifference(const T* a, const T* b, int n) {
  double largest = 0, difference = 0;
  for (int i = 0; i < n; ++i) {
    largest = std::max(largest, static_cast<double>(std::abs(a[i])));
    difference = std::max(difference, static_cast<double>(std::abs(a[i] - b[i])));
  }
  return difference / largest;
}

TEST(FftBackendsTest, TransformsAgree) {
  const Backend kiss = kissfft::Get(), fftw = fftw::Get();
  std::cout << kiss.library << " against " << fftw.library << "\n";
  // The STFT's 128 and 256 points, the shipped constant-Q bank's N = 9216
  // and M = 9216 / 16 = 576 (its transform lengths), a large power of two.
  for (const int n : {128, 256, 576, 9216, 65536}) {
    FftBuffer<float> x(static_cast<size_t>(n));
    FftBuffer<std::complex<float>> z(static_cast<size_t>(n));
    Rng rng(static_cast<uint64_t>(n));
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>(rng.Normal());
      z[i] = {static_cast<float>(rng.Normal()), static_cast<float>(rng.Normal())};
    }
    FftBuffer<std::complex<float>> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    (*kiss.real_forward(n))(x.data(), a.data());
    (*fftw.real_forward(n))(x.data(), b.data());
    const double real = RelativeDifference(a.data(), b.data(), n / 2 + 1);
    (*kiss.complex_inverse(n))(z.data(), a.data());
    (*fftw.complex_inverse(n))(z.data(), b.data());
    const double inverse = RelativeDifference(a.data(), b.data(), n);
    std::cout << n << " points: real forward " << real << ", complex inverse " << inverse << "\n";
    EXPECT_LE(real, kTransformTolerance) << n;
    EXPECT_LE(inverse, kTransformTolerance) << n;
  }
}

// The rows of `spec` from both libraries on 4 clips at each rate.
void ExpectRowsAgree(const v1::AudioFrontEnd& spec, const std::string& name) {
  auto kiss = kissfft::Get().front_end(spec);
  auto fftw = fftw::Get().front_end(spec);
  ASSERT_TRUE(kiss.ok()) << kiss.status();
  ASSERT_TRUE(fftw.ok()) << fftw.status();
  ASSERT_EQ(kiss->output_dim, fftw->output_dim);
  const int d = static_cast<int>(kiss->output_dim);
  std::vector<float> a(static_cast<size_t>(d)), b(static_cast<size_t>(d));
  double worst = 0;
  for (const int rate : {8000, 16000}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const std::vector<float> clip = SpeechLikeClip(rate, seed);
      ASSERT_TRUE(kiss->apply(clip, rate, a.data()).ok());
      ASSERT_TRUE(fftw->apply(clip, rate, b.data()).ok());
      const double difference = RelativeDifference(a.data(), b.data(), d);
      worst = std::max(worst, difference);
      EXPECT_LE(difference, kRowTolerance) << name << ", " << rate << " Hz, clip " << seed;
    }
  }
  std::cout << name << ": rows of " << d << " values differ by at most " << worst
            << " of the largest\n";
}

TEST(FftBackendsTest, ShippedSpokenDigitRowsAgree) {
  const v1::AudioFrontEnd spec = ShippedFrontEnd();
  ASSERT_EQ(spec.filterbank(), v1::AudioFrontEnd::FILTERBANK_CONSTANT_Q);
  ASSERT_EQ(spec.sample_rate(), 8000);
  ASSERT_EQ(spec.frequency_bins(), 64);
  ExpectRowsAgree(spec, "spoken_digits (constant-Q)");
}

TEST(FftBackendsTest, StftRowsAgree) {
  v1::AudioFrontEnd spec = ShippedFrontEnd();
  spec.set_filterbank(v1::AudioFrontEnd::FILTERBANK_STFT);
  spec.clear_bandwidth_octaves();
  spec.set_align_frequency(false);
  spec.clear_align_bin();
  spec.set_align_time(false);
  ExpectRowsAgree(spec, "spoken_digits with the STFT");
}

}  // namespace
}  // namespace invariant::audio::backends
