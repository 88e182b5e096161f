// fft.h on KissFFT (Debian's libkissfft-float, BSD-3-Clause).
//
// The real transform is kiss_fftr's algorithm: a complex FFT of N/2 points
// of the samples packed as complex values (even real, odd imaginary), then
// one split pass with the "super twiddles" e^{−πi(k/(N/2) + ½)}, its
// arithmetic kept term for term, but with the output array as the scratch:
// kiss_fftr keeps its scratch in the configuration, so one configuration
// could not serve two threads at once. It matches kiss_fftr to rounding, not
// bit for bit (Debian builds the library with -ffast-math, which
// reassociates kiss_fftr's split pass; tests/unit/audio/kissfft_test.cc).
#include "core/audio/fft.h"

#include <kiss_fft.h>

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace invariant::audio {
inline namespace INVARIANT_FFT_NAMESPACE {
namespace {

struct FreeConfig {
  void operator()(kiss_fft_state* cfg) const { kiss_fft_free(cfg); }
};
using Config = std::unique_ptr<kiss_fft_state, FreeConfig>;

// kiss_fft_alloc(n, inverse), or INTERNAL naming `what`.
absl::StatusOr<Config> MakeConfig(int n, bool inverse, const char* what) {
  Config cfg(kiss_fft_alloc(n, inverse ? 1 : 0, nullptr, nullptr));
  if (cfg == nullptr) {
    return absl::InternalError(absl::StrCat("KissFFT set up no ", what, " of ", n, " points"));
  }
  return cfg;
}

kiss_fft_cpx* Cpx(std::complex<float>* x) { return reinterpret_cast<kiss_fft_cpx*>(x); }
const kiss_fft_cpx* Cpx(const std::complex<float>* x) {
  return reinterpret_cast<const kiss_fft_cpx*>(x);
}

}  // namespace

const char* FftLibrary() { return "KissFFT 131"; }

struct RealForwardFft::State {
  int half = 0;                                     // N / 2
  Config sub;                                       // complex forward FFT of N / 2 points
  std::vector<std::complex<float>> super_twiddles;  // N / 4, as kiss_fftr_alloc's
};

RealForwardFft::RealForwardFft(std::unique_ptr<State> state) : state_(std::move(state)) {}
RealForwardFft::~RealForwardFft() = default;

absl::StatusOr<std::unique_ptr<const RealForwardFft>> RealForwardFft::Create(int n) {
  if (n < 2 || n % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("real FFT of ", n, " points: needs an even n ≥ 2"));
  }
  auto state = std::make_unique<State>();
  state->half = n / 2;
  auto sub = MakeConfig(state->half, false, "real FFT's half-size transform");
  if (!sub.ok()) return sub.status();
  state->sub = *std::move(sub);
  // kiss_fftr_alloc's twiddles: the phase in double, cos and sin rounded to float.
  for (int i = 0; i < state->half / 2; ++i) {
    const double phase =
        -3.14159265358979323846264338327 * (static_cast<double>(i + 1) / state->half + 0.5);
    state->super_twiddles.emplace_back(static_cast<float>(std::cos(phase)),
                                       static_cast<float>(std::sin(phase)));
  }
  return std::unique_ptr<const RealForwardFft>(new RealForwardFft(std::move(state)));
}

void RealForwardFft::Execute(const float* in, std::complex<float>* out) const {
  const int half = state_->half;
  // The N reals as N/2 complex values (even samples real, odd imaginary),
  // transformed into out[0, N/2); kiss_fft reads only the configuration.
  kiss_fft(state_->sub.get(), reinterpret_cast<const kiss_fft_cpx*>(in), Cpx(out));
  // kiss_fftr's split, in place: each step reads out[k] and out[N/2 − k]
  // before writing them.
  const std::complex<float> dc = out[0];
  out[0] = {dc.real() + dc.imag(), 0.0f};
  out[half] = {dc.real() - dc.imag(), 0.0f};
  const std::complex<float>* tw = state_->super_twiddles.data();
  for (int k = 1; k <= half / 2; ++k) {
    const kiss_fft_cpx fpk = *Cpx(out + k);
    const kiss_fft_cpx fpnk = {Cpx(out + half - k)->r, -Cpx(out + half - k)->i};
    const kiss_fft_cpx f1k = {fpk.r + fpnk.r, fpk.i + fpnk.i};
    const kiss_fft_cpx f2k = {fpk.r - fpnk.r, fpk.i - fpnk.i};
    const float twr = tw[k - 1].real(), twi = tw[k - 1].imag();
    const kiss_fft_cpx t = {f2k.r * twr - f2k.i * twi, f2k.r * twi + f2k.i * twr};
    out[k] = {(f1k.r + t.r) * 0.5f, (f1k.i + t.i) * 0.5f};
    out[half - k] = {(f1k.r - t.r) * 0.5f, (t.i - f1k.i) * 0.5f};
  }
}

struct ComplexInverseFft::State {
  Config cfg;  // inverse: e^{+2πijn/N}, unnormalised
};

ComplexInverseFft::ComplexInverseFft(std::unique_ptr<State> state) : state_(std::move(state)) {}
ComplexInverseFft::~ComplexInverseFft() = default;

absl::StatusOr<std::unique_ptr<const ComplexInverseFft>> ComplexInverseFft::Create(int n) {
  if (n < 2) {
    return absl::InvalidArgumentError(absl::StrCat("complex FFT of ", n, " points: needs n ≥ 2"));
  }
  auto cfg = MakeConfig(n, true, "inverse complex FFT");
  if (!cfg.ok()) return cfg.status();
  auto state = std::make_unique<State>();
  state->cfg = *std::move(cfg);
  return std::unique_ptr<const ComplexInverseFft>(new ComplexInverseFft(std::move(state)));
}

void ComplexInverseFft::Execute(const std::complex<float>* in, std::complex<float>* out) const {
  // Distinct in and out: kiss_fft reads only the configuration (with
  // in == out it would copy through a scratch array of its own).
  kiss_fft(state_->cfg.get(), Cpx(in), Cpx(out));
}

}  // namespace INVARIANT_FFT_NAMESPACE
}  // namespace invariant::audio
