#include "core/audio/constant_q.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/audio/fft.h"
#include "core/audio/front_end.h"
#include "core/base/math_constants.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"

namespace invariant::audio {
inline namespace INVARIANT_FFT_NAMESPACE {
namespace {}  // namespace

// One task's buffers (a block of kBandsPerTask bands).
struct ConstantQBank::BandBuffers {
  FftBuffer<std::complex<float>> folded;  // M
  FftBuffer<std::complex<float>> output;  // M
  std::vector<float> magnitude;           // |output| at the samples frames read
};

struct ConstantQBank::Workspace {
  FftBuffer<float> padded;                  // N; the tail past the clip stays 0
  FftBuffer<std::complex<float>> spectrum;  // N / 2 + 1
  std::vector<BandBuffers> tasks;           // one per block of bands
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

int64_t ConstantQBank::num_tasks() const {
  return (static_cast<int64_t>(bands_.size()) + kBandsPerTask - 1) / kBandsPerTask;
}

ConstantQBank::WorkspacePtr ConstantQBank::NewWorkspace() const {
  WorkspacePtr w(new Workspace());
  w->padded = FftBuffer<float>(static_cast<size_t>(n_));
  w->spectrum = FftBuffer<std::complex<float>>(static_cast<size_t>(n_ / 2 + 1));
  w->tasks.resize(static_cast<size_t>(num_tasks()));
  for (BandBuffers& b : w->tasks) {
    b.folded = FftBuffer<std::complex<float>>(static_cast<size_t>(size_));
    b.output = FftBuffer<std::complex<float>>(static_cast<size_t>(size_));
    b.magnitude.resize(static_cast<size_t>(size_));
  }
  return w;
}

void ConstantQBank::Apply(const float* clip, Workspace& w, int64_t first_frame, int64_t end_frame,
                          float* magnitudes, absl::FunctionRef<void(int64_t, int64_t)> done) const {
  std::copy(clip, clip + clip_samples_, w.padded.data());  // the tail stays 0
  forward_->Execute(w.padded.data(), w.spectrum.data());
  const int64_t bins = static_cast<int64_t>(bands_.size());
  ParallelFor(num_tasks(), [&](int64_t task) {
    const int64_t k0 = task * kBandsPerTask, k1 = std::min(bins, k0 + kBandsPerTask);
    BandBuffers& b = w.tasks[static_cast<size_t>(task)];
    for (int64_t k = k0; k < k1; ++k) {
      ApplyBand(w.spectrum.data(), static_cast<size_t>(k), first_frame, end_frame, b,
                magnitudes + k * frames_);
    }
    done(k0, k1);
  });
}

void ConstantQBank::ApplyBand(const std::complex<float>* spectrum, size_t k, int64_t first_frame,
                              int64_t end_frame, BandBuffers& b, float* magnitudes) const {
  const int size = size_, d = decimation_, per_frame = frame_length_ / decimation_;
  const float scale = frame_length_ / 4.0f;
  const Band& band = bands_[k];
  std::fill_n(b.folded.data(), size, std::complex<float>{});
  // y_k at every d-th sample: the support folded modulo M, one inverse FFT.
  // The support is added in runs that do not wrap (each run a loop the
  // compiler vectorises); every folded value receives its terms in the
  // order of j, as one pass over j would add them.
  const std::complex<float>* x = spectrum + band.first_bin;
  const float* weight = band.weights.data();
  float* folded = reinterpret_cast<float*>(b.folded.data());
  const int count = static_cast<int>(band.weights.size());
  int r = band.first_bin % size;
  for (int i = 0; i < count;) {
    const int run = std::min(count - i, size - r);
    const float* xi = reinterpret_cast<const float*>(x + i);
    float* out = folded + 2 * r;
    for (int j = 0; j < run; ++j) {
      out[2 * j] += weight[i + j] * xi[2 * j];
      out[2 * j + 1] += weight[i + j] * xi[2 * j + 1];
    }
    i += run;
    r = 0;
  }
  inverse_->Execute(b.folded.data(), b.output.data());
  std::fill(magnitudes, magnitudes + first_frame, 0.0f);
  std::fill(magnitudes + end_frame, magnitudes + frames_, 0.0f);
  if (first_frame >= end_frame) return;
  // |y| of every sample the frames read, in one vectorised pass (sqrt is
  // correctly rounded in every lane), then each frame's mean in order.
  const int64_t begin = first_frame * hop_ / d;
  const int64_t used = (end_frame - 1) * hop_ / d + per_frame;
  const float* y = reinterpret_cast<const float*>(b.output.data());
  float* mag = b.magnitude.data();
  for (int64_t i = begin; i < used; ++i) {
    const float re = y[2 * i], im = y[2 * i + 1];
    mag[i] = std::sqrt(re * re + im * im);
  }
  for (int64_t t = first_frame; t < end_frame; ++t) {
    const float* frame = mag + t * hop_ / d;
    float sum = 0.0f;
    for (int m = 0; m < per_frame; ++m) sum += frame[m];
    magnitudes[t] = scale * sum / per_frame;
  }
}

}  // namespace INVARIANT_FFT_NAMESPACE
}  // namespace invariant::audio
