// constant_q.h: the constant-Q filter bank of the audio front end
// (v1::AudioFrontEnd.filterbank = FILTERBANK_CONSTANT_Q; docs/math.md §9).
//
// Bin k has centre c_k = min_frequency · 2^(k / b) (b = bins_per_octave) and
// the zero-phase filter H_k(f) = exp(−½ (log₂(f / c_k) / σ)²), σ =
// bandwidth_octaves, kept where |log₂(f / c_k)| ≤ kSupportSigmas · σ (and
// f ≤ Nyquist). Every filter is the same shape in log frequency, so
// multiplying every frequency of a clip by 2^(c/1200) translates the bins by
// c·b/1200 at every frequency (the STFT's fixed window does not: its
// resolution is the same number of Hz everywhere).
//
// For a clip x of L samples (the front end's clip after trimming,
// normalising and the clip policy), zero-padded to N (TransformLength:
// the smallest even N = d·M ≥ L + the longest filter's reach, so no filter
// wraps around into the clip, with M's prime factors 2, 3 and 5 only),
// X = rfft(x), and bin k's analytic output is
//   y_k(n) = (2 / N) Σ_j X(j) H_k(j R / N) e^{2πi j n / N}
// (a sine of amplitude A at c_k gives |y_k| ≈ A). It is computed exactly at
// every d-th sample by folding the filter's support modulo M = N / d and one
// inverse complex FFT of size M (d the largest power of two that divides
// frame_length and hop_length and leaves kSamplesPerFrame samples in a
// frame; the same d for every bin, so a translated band is read at the same
// instants). Frame t's magnitude is the mean of |y_k| over those samples in
// [t·hop, t·hop + frame_length), times frame_length / 4: a full-scale sine at
// a centre gives about frame_length / 4, as with the STFT, so
// compression_gain means the same for both filterbanks.
//
// Errors: TransformLength refuses a bank whose longest filter (the lowest
// centre's, about 1 / (2π c_0 σ ln 2) seconds per standard deviation) needs
// a transform longer than AudioFrontEnd::kMaxFftLength, with
// INVALID_ARGUMENT naming bandwidth_octaves.
//
// Work: the forward FFT on the calling thread, then the bands in blocks of
// kBandsPerTask, one ParallelFor task each (core/base/thread_pool.h): a
// clip uses every core of the default pool. Every band is computed by the
// same code whichever thread runs it, so the bits do not depend on the
// threads.
//
// Thread-safety: a created bank is immutable; Apply may run on any number of
// threads at once, each with its own Workspace (NewWorkspace).
#ifndef INVARIANT_CORE_AUDIO_CONSTANT_Q_H_
#define INVARIANT_CORE_AUDIO_CONSTANT_Q_H_

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/audio/fft.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant::audio {
inline namespace INVARIANT_FFT_NAMESPACE {

class ConstantQBank {
 public:
  // Filters are kept to ±kSupportSigmas standard deviations (H ≥ 1.1e-2 ·
  // its peak there; the same cut in octaves at every centre).
  static constexpr double kSupportSigmas = 3.0;
  // Each side of the clip is padded by kReachSigmas time-domain standard
  // deviations of the lowest (longest) filter.
  static constexpr double kReachSigmas = 4.0;
  // A frame's magnitude is the mean of at least this many samples of |y_k|
  // (all of them when the frame is shorter).
  static constexpr int kSamplesPerFrame = 8;

  // The transform length N for a completed spec (bandwidth_octaves set).
  static absl::StatusOr<int64_t> TransformLength(const v1::AudioFrontEnd& spec);
  // The decimation d for a spec (frame_length and hop_length set).
  static int Decimation(const v1::AudioFrontEnd& spec);
  // `spec` completed by AudioFrontEnd::Complete with FILTERBANK_CONSTANT_Q.
  static absl::StatusOr<std::unique_ptr<const ConstantQBank>> Create(const v1::AudioFrontEnd& spec);
  ~ConstantQBank();

  struct Workspace;
  struct WorkspaceDeleter {
    void operator()(Workspace* w) const;
  };
  using WorkspacePtr = std::unique_ptr<Workspace, WorkspaceDeleter>;
  WorkspacePtr NewWorkspace() const;

  // Bands per ParallelFor task.
  static constexpr int64_t kBandsPerTask = 16;

  // clip[0, L) → magnitudes[k · frames + t] (before compression) for the
  // frames t in [first_frame, end_frame) (0 ≤ first_frame ≤ end_frame ≤
  // frames); the other frames are set to 0. Once bands [k0, k1) are
  // written, done(k0, k1) runs in the same task (e.g. to compress them):
  // on any of the pool's threads, at the same time as other blocks' calls,
  // so it must touch only its own bands' values.
  void Apply(const float* clip, Workspace& w, int64_t first_frame, int64_t end_frame,
             float* magnitudes, absl::FunctionRef<void(int64_t, int64_t)> done) const;

  int64_t transform_length() const { return n_; }

 private:
  ConstantQBank() = default;
  struct BandBuffers;
  int64_t num_tasks() const;
  // Band k of the clip whose spectrum is `spectrum` → magnitudes[t], t < frames.
  void ApplyBand(const std::complex<float>* spectrum, size_t k, int64_t first_frame,
                 int64_t end_frame, BandBuffers& b, float* magnitudes) const;
  struct Band {
    int first_bin = 0;           // support: FFT bins [first_bin, first_bin + weights.size())
    std::vector<float> weights;  // H_k at those bins, times 2 / N
  };
  int64_t n_ = 0;
  int64_t clip_samples_ = 0;
  int64_t frames_ = 0;
  int frame_length_ = 0;
  int hop_ = 0;
  int decimation_ = 1;  // d
  int size_ = 0;        // M = N / d
  std::vector<Band> bands_;
  std::unique_ptr<const RealForwardFft> forward_;     // N
  std::unique_ptr<const ComplexInverseFft> inverse_;  // M
};

}  // namespace INVARIANT_FFT_NAMESPACE
}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_CONSTANT_Q_H_
