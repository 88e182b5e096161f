#include "core/audio/fftw.h"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <new>

#include "absl/strings/str_cat.h"

namespace invariant::audio {
namespace {

// FFTW's planner and plan destruction are not thread-safe.
std::mutex& PlannerMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

// Plans are made on buffers of the size they will run on and executed with
// the new-array functions; the flags keep the input (the front end relies on
// the zero tails of its buffers).
constexpr unsigned kFlags = FFTW_ESTIMATE | FFTW_PRESERVE_INPUT;

}  // namespace

template <typename T>
FftwBuffer<T>::FftwBuffer(size_t n)
    : data_(static_cast<T*>(fftwf_malloc(std::max<size_t>(n, 1) * sizeof(T)))), size_(n) {
  if (data_ == nullptr) throw std::bad_alloc();
  std::fill_n(data_.get(), n, T{});
}

template <typename T>
void FftwBuffer<T>::Free::operator()(T* p) const {
  fftwf_free(p);
}

template class FftwBuffer<float>;
template class FftwBuffer<std::complex<float>>;

absl::StatusOr<std::unique_ptr<const RealForwardFft>> RealForwardFft::Create(int n) {
  if (n < 2 || n % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("real FFT of ", n, " points: needs an even n ≥ 2"));
  }
  FftwBuffer<float> in(static_cast<size_t>(n));
  FftwBuffer<std::complex<float>> out(static_cast<size_t>(n / 2 + 1));
  std::unique_ptr<RealForwardFft> fft(new RealForwardFft());
  fft->n_ = n;
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    fft->plan_ =
        fftwf_plan_dft_r2c_1d(n, in.data(), reinterpret_cast<fftwf_complex*>(out.data()), kFlags);
  }
  if (fft->plan_ == nullptr) {
    return absl::InternalError(absl::StrCat("FFTW made no plan for a real FFT of ", n, " points"));
  }
  return std::unique_ptr<const RealForwardFft>(std::move(fft));
}

RealForwardFft::~RealForwardFft() {
  std::lock_guard<std::mutex> lock(PlannerMutex());
  fftwf_destroy_plan(static_cast<fftwf_plan>(plan_));
}

void RealForwardFft::Execute(const float* in, std::complex<float>* out) const {
  // PRESERVE_INPUT: the plan reads `in` only.
  fftwf_execute_dft_r2c(static_cast<fftwf_plan>(plan_), const_cast<float*>(in),
                        reinterpret_cast<fftwf_complex*>(out));
}

absl::StatusOr<std::unique_ptr<const ComplexInverseFft>> ComplexInverseFft::Create(int n) {
  if (n < 2) {
    return absl::InvalidArgumentError(absl::StrCat("complex FFT of ", n, " points: needs n ≥ 2"));
  }
  FftwBuffer<std::complex<float>> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  std::unique_ptr<ComplexInverseFft> fft(new ComplexInverseFft());
  fft->n_ = n;
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    fft->plan_ =
        fftwf_plan_dft_1d(n, reinterpret_cast<fftwf_complex*>(in.data()),
                          reinterpret_cast<fftwf_complex*>(out.data()), FFTW_BACKWARD, kFlags);
  }
  if (fft->plan_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("FFTW made no plan for a complex FFT of ", n, " points"));
  }
  return std::unique_ptr<const ComplexInverseFft>(std::move(fft));
}

ComplexInverseFft::~ComplexInverseFft() {
  std::lock_guard<std::mutex> lock(PlannerMutex());
  fftwf_destroy_plan(static_cast<fftwf_plan>(plan_));
}

void ComplexInverseFft::Execute(const std::complex<float>* in, std::complex<float>* out) const {
  fftwf_execute_dft(static_cast<fftwf_plan>(plan_),
                    reinterpret_cast<fftwf_complex*>(const_cast<std::complex<float>*>(in)),
                    reinterpret_cast<fftwf_complex*>(out));
}

}  // namespace invariant::audio
