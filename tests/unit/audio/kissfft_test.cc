// fft_kissfft.cc's real transform is kiss_fftr's source arithmetic with
// the output as the scratch (kiss_fftr's own scratch is in the
// configuration, so it cannot be shared by threads): the values of
// kiss_fftr itself at the sizes of the front end and the constant-Q bank,
// to rounding (Debian builds the library with -ffast-math, which
// reassociates kiss_fftr's split pass, so not bit for bit: within 1e-6 of
// the largest value; measured below 1e-7). Built on KissFFT only.
#include <kiss_fftr.h>

#include <algorithm>
#include <complex>
#include <iostream>
#include <memory>
#include <vector>

#include "core/audio/fft.h"
#include "core/base/random.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

struct FreeConfig {
  void operator()(kiss_fftr_cfg cfg) const { kiss_fftr_free(cfg); }
};

TEST(KissFftTest, RealForwardGivesTheValuesOfKissFftr) {
  for (const int n : {2, 4, 30, 128, 256, 1920, 9216, 61440}) {
    auto fft = RealForwardFft::Create(n);
    ASSERT_TRUE(fft.ok()) << fft.status();
    std::unique_ptr<kiss_fftr_state, FreeConfig> cfg(kiss_fftr_alloc(n, 0, nullptr, nullptr));
    ASSERT_NE(cfg, nullptr);
    FftBuffer<float> x(static_cast<size_t>(n));
    Rng rng(static_cast<uint64_t>(n) + 5);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(rng.Normal());
    FftBuffer<std::complex<float>> ours(static_cast<size_t>(n / 2 + 1));
    std::vector<kiss_fft_cpx> theirs(static_cast<size_t>(n / 2 + 1));
    (*fft)->Execute(x.data(), ours.data());
    kiss_fftr(cfg.get(), x.data(), theirs.data());
    double largest = 0, difference = 0;
    for (int j = 0; j <= n / 2; ++j) {
      const std::complex<float> other(theirs[j].r, theirs[j].i);
      largest = std::max(largest, double{std::abs(other)});
      difference = std::max(difference, double{std::abs(ours[j] - other)});
    }
    std::cout << n << " points: " << difference / largest << " of the largest value\n";
    EXPECT_LE(difference, 1e-6 * largest) << n;
  }
}

}  // namespace
}  // namespace invariant::audio
