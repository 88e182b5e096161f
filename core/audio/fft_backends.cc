// fft_backends.h for the library this file is built against (once in each
// invariant_audio_<library>).
#include "core/audio/fft_backends.h"

#include <memory>
#include <utility>

#include "core/audio/fft.h"
#include "core/audio/front_end.h"

namespace invariant::audio::backends::INVARIANT_FFT_NAMESPACE {

Backend Get() {
  Backend b;
  b.library = FftLibrary();
  b.real_forward = [](int n) -> absl::StatusOr<Backend::RealForward> {
    auto fft = RealForwardFft::Create(n);
    if (!fft.ok()) return fft.status();
    std::shared_ptr<const RealForwardFft> shared = *std::move(fft);
    return [shared](const float* in, std::complex<float>* out) { shared->Execute(in, out); };
  };
  b.complex_inverse = [](int n) -> absl::StatusOr<Backend::ComplexInverse> {
    auto fft = ComplexInverseFft::Create(n);
    if (!fft.ok()) return fft.status();
    std::shared_ptr<const ComplexInverseFft> shared = *std::move(fft);
    return [shared](const std::complex<float>* in, std::complex<float>* out) {
      shared->Execute(in, out);
    };
  };
  b.front_end = [](const v1::AudioFrontEnd& spec) -> absl::StatusOr<FrontEnd> {
    auto front = AudioFrontEnd::Create(spec);
    if (!front.ok()) return front.status();
    std::shared_ptr<const AudioFrontEnd> shared = *std::move(front);
    FrontEnd f;
    f.output_dim = shared->output_dim();
    f.apply = [shared](absl::Span<const float> samples, int rate, float* row) {
      return shared->Apply(samples, rate, row, "clip");
    };
    return f;
  };
  return b;
}

}  // namespace invariant::audio::backends::INVARIANT_FFT_NAMESPACE
