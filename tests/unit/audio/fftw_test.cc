// The FFTW transforms of the front end against a direct DFT in double
// precision, their input kept, their size errors, and one plan shared by
// threads giving the same bits as one thread.
#include "core/audio/fftw.h"

#include <cmath>
#include <complex>
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

TEST(FftwTest, RealForwardEqualsADirectDft) {
  for (const int n : {2, 12, 90, 576}) {  // even sizes of radices 2, 3, 5
    auto fft = RealForwardFft::Create(n);
    ASSERT_TRUE(fft.ok()) << fft.status();
    FftwBuffer<float> x(static_cast<size_t>(n));
    FftwBuffer<std::complex<float>> y(static_cast<size_t>(n / 2 + 1));
    Rng rng(static_cast<uint64_t>(n));
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(rng.Normal());
    const std::vector<float> before(x.data(), x.data() + n);
    (*fft)->Execute(x.data(), y.data());
    EXPECT_EQ(std::vector<float>(x.data(), x.data() + n), before);  // the input is kept
    for (int j = 0; j <= n / 2; ++j) {
      std::complex<double> direct = 0;
      for (int i = 0; i < n; ++i) direct += double{x[i]} * std::polar(1.0, -2 * kPi * j * i / n);
      EXPECT_NEAR(y[j].real(), direct.real(), 1e-4 * n) << n << " " << j;
      EXPECT_NEAR(y[j].imag(), direct.imag(), 1e-4 * n) << n << " " << j;
    }
  }
}

TEST(FftwTest, ComplexInverseEqualsADirectUnnormalisedDft) {
  for (const int n : {3, 10, 576}) {
    auto fft = ComplexInverseFft::Create(n);
    ASSERT_TRUE(fft.ok()) << fft.status();
    FftwBuffer<std::complex<float>> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    Rng rng(7 + static_cast<uint64_t>(n));
    for (int i = 0; i < n; ++i) {
      x[i] = {static_cast<float>(rng.Normal()), static_cast<float>(rng.Normal())};
    }
    (*fft)->Execute(x.data(), y.data());
    for (int m = 0; m < n; ++m) {
      std::complex<double> direct = 0;
      for (int j = 0; j < n; ++j) {
        direct += std::complex<double>(x[j]) * std::polar(1.0, 2 * kPi * j * m / n);
      }
      EXPECT_NEAR(y[m].real(), direct.real(), 1e-4 * n) << n << " " << m;
      EXPECT_NEAR(y[m].imag(), direct.imag(), 1e-4 * n) << n << " " << m;
    }
  }
}

TEST(FftwTest, SizesAreChecked) {
  EXPECT_THAT(std::string(RealForwardFft::Create(7).status().message()), HasSubstr("even"));
  EXPECT_THAT(std::string(RealForwardFft::Create(0).status().message()), HasSubstr("even"));
  EXPECT_THAT(std::string(ComplexInverseFft::Create(1).status().message()), HasSubstr("n ≥ 2"));
}

TEST(FftwTest, ThreadsSharingAPlanGetTheBitsOfOne) {
  const int n = 9216;
  auto fft = RealForwardFft::Create(n);
  ASSERT_TRUE(fft.ok()) << fft.status();
  FftwBuffer<float> x(static_cast<size_t>(n));
  Rng rng(3);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(rng.Normal());
  FftwBuffer<std::complex<float>> reference(static_cast<size_t>(n / 2 + 1));
  (*fft)->Execute(x.data(), reference.data());
  std::vector<FftwBuffer<std::complex<float>>> outputs;
  for (int t = 0; t < 4; ++t) outputs.emplace_back(static_cast<size_t>(n / 2 + 1));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) (*fft)->Execute(x.data(), outputs[t].data());
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    for (int j = 0; j <= n / 2; ++j) ASSERT_EQ(outputs[t][j], reference[j]) << t << " " << j;
  }
}

}  // namespace
}  // namespace invariant::audio
