#include "core/audio/fftw.h"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <string>

#include "absl/functional/function_ref.h"
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

// `make` run under the planner's mutex; INTERNAL naming `what` when FFTW
// makes no plan.
absl::StatusOr<FftwPlan> MakePlan(absl::FunctionRef<fftwf_plan()> make, const std::string& what) {
  FftwPlan plan;
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    plan.reset(make());
  }
  if (plan == nullptr) return absl::InternalError(absl::StrCat("FFTW made no plan for ", what));
  return plan;
}

fftwf_plan Raw(const FftwPlan& plan) { return static_cast<fftwf_plan>(plan.get()); }

fftwf_complex* Complex(std::complex<float>* x) { return reinterpret_cast<fftwf_complex*>(x); }

}  // namespace

template <typename T>
FftwBuffer<T>::FftwBuffer(size_t n)
    : data_(static_cast<T*>(fftwf_malloc(std::max<size_t>(n, 1) * sizeof(T)))) {
  if (data_ == nullptr) throw std::bad_alloc();
  std::fill_n(data_.get(), n, T{});
}

template <typename T>
void FftwBuffer<T>::Free::operator()(T* p) const {
  fftwf_free(p);
}

template class FftwBuffer<float>;
template class FftwBuffer<std::complex<float>>;

void FftwPlanDestroyer::operator()(void* plan) const {
  std::lock_guard<std::mutex> lock(PlannerMutex());
  fftwf_destroy_plan(static_cast<fftwf_plan>(plan));
}

absl::StatusOr<std::unique_ptr<const RealForwardFft>> RealForwardFft::Create(int n) {
  if (n < 2 || n % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("real FFT of ", n, " points: needs an even n ≥ 2"));
  }
  FftwBuffer<float> in(static_cast<size_t>(n));
  FftwBuffer<std::complex<float>> out(static_cast<size_t>(n / 2 + 1));
  auto plan =
      MakePlan([&] { return fftwf_plan_dft_r2c_1d(n, in.data(), Complex(out.data()), kFlags); },
               absl::StrCat("a real FFT of ", n, " points"));
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<const RealForwardFft>(new RealForwardFft(*std::move(plan)));
}

void RealForwardFft::Execute(const float* in, std::complex<float>* out) const {
  // PRESERVE_INPUT: the plan reads `in` only.
  fftwf_execute_dft_r2c(Raw(plan_), const_cast<float*>(in), Complex(out));
}

absl::StatusOr<std::unique_ptr<const ComplexInverseFft>> ComplexInverseFft::Create(int n) {
  if (n < 2) {
    return absl::InvalidArgumentError(absl::StrCat("complex FFT of ", n, " points: needs n ≥ 2"));
  }
  FftwBuffer<std::complex<float>> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  auto plan = MakePlan(
      [&] {
        return fftwf_plan_dft_1d(n, Complex(in.data()), Complex(out.data()), FFTW_BACKWARD, kFlags);
      },
      absl::StrCat("a complex FFT of ", n, " points"));
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<const ComplexInverseFft>(new ComplexInverseFft(*std::move(plan)));
}

void ComplexInverseFft::Execute(const std::complex<float>* in, std::complex<float>* out) const {
  fftwf_execute_dft(Raw(plan_), Complex(const_cast<std::complex<float>*>(in)), Complex(out));
}

}  // namespace invariant::audio
