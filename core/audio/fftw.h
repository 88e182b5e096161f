// fftw.h: FFTW (single precision) transforms of one size, planned once and
// executed by any number of threads at once, and the buffers they run on.
//
// Contract: RealForwardFft computes X(j) = Σ_n x(n) e^{−2πijn/N} for
// j = 0 … N/2 (N even); ComplexInverseFft computes
// y(n) = Σ_j Y(j) e^{+2πijn/N}, unnormalised. Neither changes its input.
// Plans are made with FFTW_ESTIMATE: no timing, so the same size gives the
// same plan, hence the same bits, in every process on a machine (FFTW picks
// its SIMD codelets by CPU, so another CPU may differ in the last bits).
//
// Buffers: Execute's arrays must come from FftwBuffer (fftwf_malloc), which
// gives them the SIMD alignment the plans were made for, as FFTW's new-array
// execute functions require; they must not overlap.
//
// Errors: Create returns INVALID_ARGUMENT for a size below 2 (or odd, for
// the real transform) and INTERNAL when FFTW makes no plan.
//
// Thread-safety: FFTW's planner is not thread-safe, so Create and the
// destructors take one process-wide mutex; Execute is const and may run on
// any number of threads at once with distinct buffers.
#ifndef INVARIANT_CORE_AUDIO_FFTW_H_
#define INVARIANT_CORE_AUDIO_FFTW_H_

#include <complex>
#include <cstddef>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"

namespace invariant::audio {

// n values of T (float or std::complex<float>), zeroed, SIMD-aligned.
template <typename T>
class FftwBuffer {
 public:
  FftwBuffer() = default;
  explicit FftwBuffer(size_t n);
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  struct Free {
    void operator()(T* p) const;
  };
  std::unique_ptr<T[], Free> data_;
};

// An fftwf_plan, destroyed under the planner's mutex.
struct FftwPlanDestroyer {
  void operator()(void* plan) const;
};
using FftwPlan = std::unique_ptr<void, FftwPlanDestroyer>;

class RealForwardFft {
 public:
  static absl::StatusOr<std::unique_ptr<const RealForwardFft>> Create(int n);
  // in: n floats; out: n/2 + 1 values.
  void Execute(const float* in, std::complex<float>* out) const;

 private:
  explicit RealForwardFft(FftwPlan plan) : plan_(std::move(plan)) {}
  FftwPlan plan_;
};

class ComplexInverseFft {
 public:
  static absl::StatusOr<std::unique_ptr<const ComplexInverseFft>> Create(int n);
  // in, out: n values each.
  void Execute(const std::complex<float>* in, std::complex<float>* out) const;

 private:
  explicit ComplexInverseFft(FftwPlan plan) : plan_(std::move(plan)) {}
  FftwPlan plan_;
};

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_FFTW_H_
