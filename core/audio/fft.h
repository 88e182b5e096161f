// fft.h: single-precision FFTs of one size, set up once and executed by any
// number of threads at once, on the arrays of fft_buffer.h. One interface,
// two implementations, chosen when the project is configured
// (INVARIANT_FFT): KissFFT (fft_kissfft.cc, BSD-3-Clause), the default, or
// FFTW (fft_fftw.cc, GPL-2.0-or-later), opt-in. Only the chosen library is
// linked.
//
// Contract: RealForwardFft computes X(j) = Σ_n x(n) e^{−2πijn/N} for
// j = 0 … N/2 (N even); ComplexInverseFft computes
// y(n) = Σ_j Y(j) e^{+2πijn/N}, unnormalised. Neither changes its input.
// Either library meets this to float rounding: every value within
// 1e-6 · log2(N) · ‖x‖₂ of the exact DFT (measured: 5e-8 · log2(N) · ‖x‖₂;
// tests/unit/audio/fft_test.cc). The two libraries agree with each other
// to about 2e-7 of the largest value, not bit for bit
// (fft_backends_test.cc). Within one library the same size gives the same
// bits in every process: KissFFT is plain C with no SIMD dispatch, so on
// every CPU (for one build of the library); FFTW plans with FFTW_ESTIMATE
// (no timing) but picks its SIMD codelets by CPU, so on one machine.
//
// Buffers: Execute's arrays must come from FftBuffer (64-byte aligned: the
// alignment FFTW's plans are made for, as its new-array execute functions
// require; KissFFT needs none and gets the same). They must not overlap.
//
// Errors: Create returns INVALID_ARGUMENT for a size below 2 (or odd, for
// the real transform) and INTERNAL when the library sets up nothing.
//
// Thread-safety: Execute is const and may run on any number of threads at
// once with distinct buffers; Create may run on any thread.
//   * KissFFT (checked in the 131.1.0 source, since its headers say
//     nothing): kiss_fft with distinct input and output only reads the
//     configuration (twiddles, factors) and allocates its own scratch for
//     radices above 5. kiss_fftr is not used: it writes a scratch array
//     inside its configuration on every call, so two threads sharing one
//     would race. The real transform here is kiss_fftr's algorithm with the
//     output array as the scratch.
//   * FFTW: its planner is not thread-safe, so Create and the destructors
//     take one process-wide mutex; the new-array execute functions are.
//
// Names: the library is part of the name of every class here and of the
// audio classes built on them (invariant::audio::kissfft::RealForwardFft,
// invariant::audio::fftw::AudioFrontEnd, ...): an inline namespace, so code
// still says invariant::audio::AudioFrontEnd. The invariant_audio_<library>
// target defines INVARIANT_FFT_NAMESPACE for whatever links it. So a test
// or a benchmark can hold both libraries' front ends in one binary
// (fft_backends.h), and no binary can mix the two by mistake.
#ifndef INVARIANT_CORE_AUDIO_FFT_H_
#define INVARIANT_CORE_AUDIO_FFT_H_

#include <complex>
#include <memory>

#include "absl/status/statusor.h"
#include "core/audio/fft_buffer.h"

#ifndef INVARIANT_FFT_NAMESPACE
#error "INVARIANT_FFT_NAMESPACE (kissfft or fftw) comes with the invariant_audio target: link it"
#endif

namespace invariant::audio {
inline namespace INVARIANT_FFT_NAMESPACE {

// The library the FFTs run on and its version ("KissFFT 131",
// "fftw-3.3.10-sse2-avx").
const char* FftLibrary();

class RealForwardFft {
 public:
  static absl::StatusOr<std::unique_ptr<const RealForwardFft>> Create(int n);
  ~RealForwardFft();
  // in: n floats; out: n/2 + 1 values.
  void Execute(const float* in, std::complex<float>* out) const;

 private:
  struct State;  // the library's plan or configuration
  explicit RealForwardFft(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

class ComplexInverseFft {
 public:
  static absl::StatusOr<std::unique_ptr<const ComplexInverseFft>> Create(int n);
  ~ComplexInverseFft();
  // in, out: n values each.
  void Execute(const std::complex<float>* in, std::complex<float>* out) const;

 private:
  struct State;
  explicit ComplexInverseFft(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace INVARIANT_FFT_NAMESPACE
}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_FFT_H_
