#include "core/audio/constant_q.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/audio/fftw.h"
#include "core/audio/front_end.h"
#include "core/base/status_macros.h"

namespace invariant::audio {
namespace {

constexpr double kPi = 3.14159265358979323846;

}  // namespace

struct ConstantQBank::Workspace {
  FftwBuffer<float> padded;                  // N; the tail past the clip stays 0
  FftwBuffer<std::complex<float>> spectrum;  // N / 2 + 1
  FftwBuffer<std::complex<float>> folded;    // M
  FftwBuffer<std::complex<float>> output;    // M
};

void ConstantQBank::WorkspaceDeleter::operator()(Workspace* w) const { delete w; }

int ConstantQBank::Decimation(const v1::AudioFrontEnd& spec) {
  // One decimation for every bin, so that a translated band is sampled at
  // the same instants: the largest power of two dividing frame_length and
  // hop_length that leaves kSamplesPerFrame samples in a frame.
  const int common = std::gcd(spec.frame_length(), spec.hop_length());
  int d = 1;
  while (common % (2 * d) == 0 && spec.frame_length() / (2 * d) >= kSamplesPerFrame) d *= 2;
  return d;
}

absl::StatusOr<int64_t> ConstantQBank::TransformLength(const v1::AudioFrontEnd& spec) {
  constexpr int64_t max_length = AudioFrontEnd::kMaxFftLength;
  // The lowest filter is about a Gaussian of σ_f = c_0 σ ln 2 Hz, whose
  // impulse response has σ_t = 1 / (2π σ_f) seconds.
  const double sigma_f = spec.min_frequency() * spec.bandwidth_octaves() * std::log(2.0);
  const double reach = kReachSigmas * spec.sample_rate() / (2.0 * kPi * sigma_f);
  const double needed = static_cast<double>(AudioFrontEnd::ClipSamples(spec)) + std::ceil(reach);
  // N = d·M with M's only prime factors 2, 3 and 5 (fast radices)
  // and N even (the real FFT's condition): at most 1.25× `needed` where a
  // power of two can be 2×.
  const int64_t d = Decimation(spec);
  const auto smooth = [](int64_t m) {
    for (const int64_t p : {2, 3, 5}) {
      while (m % p == 0) m /= p;
    }
    return m == 1;
  };
  int64_t m = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(needed / d)));
  while (m * d <= max_length && (!smooth(m) || (m * d) % 2 != 0)) ++m;
  const int64_t n = m * d;
  if (n > max_length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "audio.bandwidth_octaves: ", spec.bandwidth_octaves(), " octaves at ", spec.min_frequency(),
        " Hz make filters ", std::ceil(reach), " samples long; with the ",
        AudioFrontEnd::ClipSamples(spec), "-sample clip the transform would exceed ", max_length,
        " samples (widen the bands or raise min_frequency)"));
  }
  return n;
}

absl::StatusOr<std::unique_ptr<const ConstantQBank>> ConstantQBank::Create(
    const v1::AudioFrontEnd& spec) {
  auto status_or_n = TransformLength(spec);
  if (!status_or_n.ok()) return status_or_n.status();
  std::unique_ptr<ConstantQBank> bank(new ConstantQBank());
  bank->n_ = *status_or_n;
  bank->clip_samples_ = AudioFrontEnd::ClipSamples(spec);
  bank->frames_ = spec.frames();
  bank->frame_length_ = spec.frame_length();
  bank->hop_ = spec.hop_length();
  const int64_t n = bank->n_;
  const int64_t last_bin = n / 2;
  const double df = static_cast<double>(spec.sample_rate()) / n;
  const double sigma = spec.bandwidth_octaves();
  const int d = Decimation(spec);
  bank->decimation_ = d;
  bank->size_ = static_cast<int>(n / d);
  ASSIGN_OR_RETURN(bank->forward_, RealForwardFft::Create(static_cast<int>(n)));
  ASSIGN_OR_RETURN(bank->inverse_, ComplexInverseFft::Create(bank->size_));
  for (int k = 0; k < spec.frequency_bins(); ++k) {
    const double c = spec.min_frequency() * std::exp2(k / spec.bins_per_octave());
    const double low = c * std::exp2(-kSupportSigmas * sigma);
    const double high = c * std::exp2(kSupportSigmas * sigma);
    const int64_t first = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(low / df)));
    const int64_t last = std::min<int64_t>(last_bin, static_cast<int64_t>(std::floor(high / df)));
    Band band;
    band.first_bin = static_cast<int>(first);
    for (int64_t j = first; j <= last; ++j) {
      const double z = std::log2(j * df / c) / sigma;
      band.weights.push_back(static_cast<float>(std::exp(-0.5 * z * z) * 2.0 / n));
    }
    // A centre below Nyquist has its nearest FFT bin in the support when
    // the support is wider than one bin; keep the nearest bin otherwise.
    if (band.weights.empty()) {
      band.first_bin = static_cast<int>(std::clamp<int64_t>(std::llround(c / df), 1, last_bin));
      const double z = std::log2(band.first_bin * df / c) / sigma;
      band.weights.push_back(static_cast<float>(std::exp(-0.5 * z * z) * 2.0 / n));
    }
    bank->bands_.push_back(std::move(band));
  }
  return std::unique_ptr<const ConstantQBank>(std::move(bank));
}

ConstantQBank::~ConstantQBank() = default;

ConstantQBank::WorkspacePtr ConstantQBank::NewWorkspace() const {
  WorkspacePtr w(new Workspace());
  w->padded = FftwBuffer<float>(static_cast<size_t>(n_));
  w->spectrum = FftwBuffer<std::complex<float>>(static_cast<size_t>(n_ / 2 + 1));
  w->folded = FftwBuffer<std::complex<float>>(static_cast<size_t>(size_));
  w->output = FftwBuffer<std::complex<float>>(static_cast<size_t>(size_));
  return w;
}

void ConstantQBank::Apply(const float* clip, Workspace& w, float* magnitudes) const {
  std::copy(clip, clip + clip_samples_, w.padded.data());  // the tail stays 0
  forward_->Execute(w.padded.data(), w.spectrum.data());
  const float scale = frame_length_ / 4.0f;
  const int size = size_, d = decimation_, per_frame = frame_length_ / decimation_;
  for (size_t k = 0; k < bands_.size(); ++k) {
    const Band& band = bands_[k];
    std::fill_n(w.folded.data(), size, std::complex<float>{});
    // y_k at every d-th sample: the support folded modulo M (r = j mod M,
    // kept without a division), one inverse FFT.
    const std::complex<float>* x = w.spectrum.data() + band.first_bin;
    std::complex<float>* folded = w.folded.data();
    int r = band.first_bin % size;
    for (size_t i = 0; i < band.weights.size(); ++i) {
      folded[r] += band.weights[i] * x[i];
      if (++r == size) r = 0;
    }
    inverse_->Execute(w.folded.data(), w.output.data());
    for (int64_t t = 0; t < frames_; ++t) {
      const int64_t start = t * hop_ / d;
      float sum = 0.0f;
      for (int m = 0; m < per_frame; ++m) {
        const std::complex<float> y = w.output[static_cast<size_t>(start + m)];
        sum += std::sqrt(y.real() * y.real() + y.imag() * y.imag());
      }
      magnitudes[static_cast<int64_t>(k) * frames_ + t] = scale * sum / per_frame;
    }
  }
}

}  // namespace invariant::audio
