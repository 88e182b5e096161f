// The contract of fft.h, for whichever FFT library the test is built on
// (audio_test: the default; audio_<other>_test: the other one): both
// transforms against a direct DFT in double precision over sizes of the
// radices the front end uses (2, 3, 5; small, odd-factored, powers of two,
// large), their signs and scale on impulses, their input kept, their size
// errors, the buffers' alignment, and one plan shared by threads giving the
// bits of one thread.
#include "core/audio/fft.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "core/base/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;

// Sizes: 2; 30 = 2·3·5; 3·5·2^k; 2^10; 61440 = 15·2^12 and 131072 = 2^17
// (AudioFrontEnd::kMaxFftLength, the longest the constant-Q bank asks for).
const std::vector<int> kRealSizes = {2, 4, 30, 240, 1024, 1920, 61440, 131072};
// The inverse also runs at odd sizes (the bank's M = N / d).
const std::vector<int> kComplexSizes = {2, 3, 5, 15, 30, 240, 1024, 1920, 61440};

// Float rounding of an FFT of n points: the error of each output value,
// over the 2-norm of the input, stays below kTolerance · log2(n) (measured
// worst: about 5e-8 · log2(n) for either library).
constexpr double kTolerance = 1e-6;

// e^{sign·2πi·jm/n}, the angle reduced exactly first (j·m mod n), so a
// large n loses nothing.
std::complex<double> Root(int sign, int64_t j, int64_t m, int64_t n) {
  return std::polar(1.0, sign * 2 * kPi * static_cast<double>((j * m) % n) / n);
}

// The output indices checked: all of them up to 2048 points, else 0, the
// last and 62 seeded ones (a direct DFT of every index would take minutes).
std::vector<int> Checked(int count, uint64_t seed) {
  std::vector<int> js;
  if (count <= 2049) {
    for (int j = 0; j < count; ++j) js.push_back(j);
    return js;
  }
  Rng rng(seed);
  js = {0, count - 1};
  for (int i = 0; i < 62; ++i) js.push_back(static_cast<int>(rng.Uniform() * count));
  return js;
}

TEST(FftTest, RealForwardEqualsADirectDft) {
  for (const int n : kRealSizes) {
    auto fft = RealForwardFft::Create(n);
    ASSERT_TRUE(fft.ok()) << fft.status();
    FftBuffer<float> x(static_cast<size_t>(n));
    FftBuffer<std::complex<float>> y(static_cast<size_t>(n / 2 + 1));
    Rng rng(static_cast<uint64_t>(n));
    double norm = 0;
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>(rng.Normal());
      norm += double{x[i]} * x[i];
    }
    const double tolerance = kTolerance * std::sqrt(norm) * std::max(1.0, std::log2(n));
    const std::vector<float> before(x.data(), x.data() + n);
    (*fft)->Execute(x.data(), y.data());
    EXPECT_EQ(std::vector<float>(x.data(), x.data() + n), before) << n;  // the input is kept
    for (const int j : Checked(n / 2 + 1, static_cast<uint64_t>(n))) {
      std::complex<double> direct = 0;
      for (int i = 0; i < n; ++i) direct += double{x[i]} * Root(-1, j, i, n);
      ASSERT_NEAR(y[j].real(), direct.real(), tolerance) << n << " " << j;
      ASSERT_NEAR(y[j].imag(), direct.imag(), tolerance) << n << " " << j;
    }
  }
}

TEST(FftTest, ComplexInverseEqualsADirectUnnormalisedDft) {
  for (const int n : kComplexSizes) {
    auto fft = ComplexInverseFft::Create(n);
    ASSERT_TRUE(fft.ok()) << fft.status();
    FftBuffer<std::complex<float>> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    Rng rng(7 + static_cast<uint64_t>(n));
    double norm = 0;
    for (int i = 0; i < n; ++i) {
      x[i] = {static_cast<float>(rng.Normal()), static_cast<float>(rng.Normal())};
      norm += std::norm(std::complex<double>(x[i]));
    }
    const double tolerance = kTolerance * std::sqrt(norm) * std::max(1.0, std::log2(n));
    const std::vector<std::complex<float>> before(x.data(), x.data() + n);
    (*fft)->Execute(x.data(), y.data());
    EXPECT_EQ(std::vector<std::complex<float>>(x.data(), x.data() + n), before) << n;
    for (const int m : Checked(n, static_cast<uint64_t>(n))) {
      std::complex<double> direct = 0;
      for (int j = 0; j < n; ++j) direct += std::complex<double>(x[j]) * Root(+1, j, m, n);
      ASSERT_NEAR(y[m].real(), direct.real(), tolerance) << n << " " << m;
      ASSERT_NEAR(y[m].imag(), direct.imag(), tolerance) << n << " " << m;
    }
  }
}

// The conventions one can read off: x = δ(n − 1) gives X(j) = e^{−2πij/N}
// (the minus sign, no 1/N), and Y = δ(j − 1) gives y(n) = e^{+2πin/N} (the
// plus sign, unnormalised: |y| = 1, not 1/N).
TEST(FftTest, ImpulsesShowTheSignsAndTheScale) {
  const int n = 30;
  FftBuffer<float> x(n);
  FftBuffer<std::complex<float>> spectrum(n / 2 + 1), delta(n), y(n);
  x[1] = 1.0f;
  (**RealForwardFft::Create(n)).Execute(x.data(), spectrum.data());
  delta[1] = 1.0f;
  (**ComplexInverseFft::Create(n)).Execute(delta.data(), y.data());
  for (int j = 0; j <= n / 2; ++j) {
    EXPECT_NEAR(spectrum[j].real(), std::cos(2 * kPi * j / n), 1e-6) << j;
    EXPECT_NEAR(spectrum[j].imag(), -std::sin(2 * kPi * j / n), 1e-6) << j;
  }
  for (int m = 0; m < n; ++m) {
    EXPECT_NEAR(y[m].real(), std::cos(2 * kPi * m / n), 1e-6) << m;
    EXPECT_NEAR(y[m].imag(), std::sin(2 * kPi * m / n), 1e-6) << m;
  }
}

TEST(FftTest, SizesAreChecked) {
  EXPECT_THAT(std::string(RealForwardFft::Create(7).status().message()), HasSubstr("even"));
  EXPECT_THAT(std::string(RealForwardFft::Create(0).status().message()), HasSubstr("even"));
  EXPECT_THAT(std::string(ComplexInverseFft::Create(1).status().message()), HasSubstr("n ≥ 2"));
}

TEST(FftTest, BuffersAreAlignedAndZeroed) {
  for (const size_t n : {1, 3, 129, 4097}) {
    FftBuffer<float> real(n);
    FftBuffer<std::complex<float>> complex(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(real.data()) % 64, 0u) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(complex.data()) % 64, 0u) << n;
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(real[i], 0.0f) << i;
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(complex[i], std::complex<float>()) << i;
  }
}

// `execute(out)` from 4 threads at once, 20 times each, into their own
// buffers: every output has the bits of `reference`.
template <typename Execute>
void ExpectThreadsGetTheReference(const FftBuffer<std::complex<float>>& reference, int count,
                                  Execute execute) {
  std::vector<FftBuffer<std::complex<float>>> outputs;
  for (int t = 0; t < 4; ++t) outputs.emplace_back(static_cast<size_t>(count));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) execute(outputs[t].data());
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    for (int j = 0; j < count; ++j) ASSERT_EQ(outputs[t][j], reference[j]) << t << " " << j;
  }
}

TEST(FftTest, ThreadsSharingAPlanGetTheBitsOfOne) {
  const int n = 9216;  // 2^10 · 9
  FftBuffer<float> x(static_cast<size_t>(n));
  FftBuffer<std::complex<float>> z(static_cast<size_t>(n));
  Rng rng(3);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(rng.Normal());
    z[i] = {static_cast<float>(rng.Normal()), static_cast<float>(rng.Normal())};
  }
  auto real = RealForwardFft::Create(n);
  auto inverse = ComplexInverseFft::Create(n);
  ASSERT_TRUE(real.ok() && inverse.ok());
  FftBuffer<std::complex<float>> spectrum(static_cast<size_t>(n / 2 + 1));
  FftBuffer<std::complex<float>> signal(static_cast<size_t>(n));
  (*real)->Execute(x.data(), spectrum.data());
  (*inverse)->Execute(z.data(), signal.data());
  ExpectThreadsGetTheReference(spectrum, n / 2 + 1,
                               [&](std::complex<float>* out) { (*real)->Execute(x.data(), out); });
  ExpectThreadsGetTheReference(
      signal, n, [&](std::complex<float>* out) { (*inverse)->Execute(z.data(), out); });
  // A second plan of the same size: the same bits.
  FftBuffer<std::complex<float>> again(static_cast<size_t>(n / 2 + 1));
  (**RealForwardFft::Create(n)).Execute(x.data(), again.data());
  for (int j = 0; j <= n / 2; ++j) ASSERT_EQ(again[j], spectrum[j]) << j;
}

TEST(FftTest, NamesTheLibrary) {
  EXPECT_FALSE(std::string(FftLibrary()).empty());
  std::cout << "FFT library: " << FftLibrary() << "\n";
}

}  // namespace
}  // namespace invariant::audio
