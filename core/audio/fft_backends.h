// fft_backends.h: both FFT libraries' transforms and front ends in one
// binary, for the tests and benchmarks that compare them
// (tests/unit/audio/fft_backends_test.cc, bench/audio/fft_bench.cc).
//
// Contract: kissfft::Get() and fftw::Get() return the FFTs and the audio
// front end of invariant_audio_kissfft and invariant_audio_fftw, behind
// std::function, so the caller includes neither library's headers (whose
// names differ by library: fft.h) and needs no INVARIANT_FFT_NAMESPACE.
// Each Get() is defined in its library (fft_backends.cc, built into both);
// a binary links the ones it calls, with $<LINK_ONLY:...> when its own
// sources are built against the other library. Shipped binaries call
// neither, so the linker leaves this code out of them.
//
// Errors: the factories return Create's status (fft.h, front_end.h).
//
// Thread-safety: every function returned may be called from any number of
// threads at once, as the classes behind them allow (each FFT call with its
// own buffers).
#ifndef INVARIANT_CORE_AUDIO_FFT_BACKENDS_H_
#define INVARIANT_CORE_AUDIO_FFT_BACKENDS_H_

#include <complex>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/audio/fft_buffer.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant::audio::backends {

struct FrontEnd {
  int64_t output_dim = 0;
  // AudioFrontEnd::Apply.
  std::function<absl::Status(absl::Span<const float> samples, int sample_rate, float* row)> apply;
};

struct Backend {
  std::string library;  // FftLibrary()
  using RealForward = std::function<void(const float* in, std::complex<float>* out)>;
  using ComplexInverse =
      std::function<void(const std::complex<float>* in, std::complex<float>* out)>;
  // RealForwardFft / ComplexInverseFft::Create(n), then Execute on FftBuffers.
  std::function<absl::StatusOr<RealForward>(int n)> real_forward;
  std::function<absl::StatusOr<ComplexInverse>(int n)> complex_inverse;
  // AudioFrontEnd::Create(spec).
  std::function<absl::StatusOr<FrontEnd>(const v1::AudioFrontEnd& spec)> front_end;
};

namespace kissfft {
Backend Get();
}  // namespace kissfft

namespace fftw {
Backend Get();
}  // namespace fftw

}  // namespace invariant::audio::backends

#endif  // INVARIANT_CORE_AUDIO_FFT_BACKENDS_H_
