// fft.h on FFTW (single precision, libfftw3f; GPL-2.0-or-later): opt-in,
// -DINVARIANT_FFT=FFTW.
#include <fftw3.h>

#include <mutex>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "core/audio/fft.h"

namespace invariant::audio {
inline namespace INVARIANT_FFT_NAMESPACE {
namespace {

// FFTW's planner and plan destruction are not thread-safe.
std::mutex& PlannerMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

// An fftwf_plan, destroyed under the planner's mutex.
struct PlanDestroyer {
  void operator()(fftwf_plan_s* plan) const {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    fftwf_destroy_plan(plan);
  }
};
using Plan = std::unique_ptr<fftwf_plan_s, PlanDestroyer>;

// Plans are made on buffers of the size they will run on and executed with
// the new-array functions; the flags keep the input (the front end relies on
// the zero tails of its buffers).
constexpr unsigned kFlags = FFTW_ESTIMATE | FFTW_PRESERVE_INPUT;

// `make` run under the planner's mutex; INTERNAL naming `what` when FFTW
// makes no plan.
absl::StatusOr<Plan> MakePlan(absl::FunctionRef<fftwf_plan()> make, const std::string& what) {
  Plan plan;
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    plan.reset(make());
  }
  if (plan == nullptr) return absl::InternalError(absl::StrCat("FFTW made no plan for ", what));
  return plan;
}

fftwf_complex* Complex(std::complex<float>* x) { return reinterpret_cast<fftwf_complex*>(x); }

}  // namespace

const char* FftLibrary() { return fftwf_version; }

struct RealForwardFft::State {
  Plan plan;
};

RealForwardFft::RealForwardFft(std::unique_ptr<State> state) : state_(std::move(state)) {}
RealForwardFft::~RealForwardFft() = default;

absl::StatusOr<std::unique_ptr<const RealForwardFft>> RealForwardFft::Create(int n) {
  if (n < 2 || n % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("real FFT of ", n, " points: needs an even n ≥ 2"));
  }
  FftBuffer<float> in(static_cast<size_t>(n));
  FftBuffer<std::complex<float>> out(static_cast<size_t>(n / 2 + 1));
  auto plan =
      MakePlan([&] { return fftwf_plan_dft_r2c_1d(n, in.data(), Complex(out.data()), kFlags); },
               absl::StrCat("a real FFT of ", n, " points"));
  if (!plan.ok()) return plan.status();
  auto state = std::make_unique<State>();
  state->plan = *std::move(plan);
  return std::unique_ptr<const RealForwardFft>(new RealForwardFft(std::move(state)));
}

void RealForwardFft::Execute(const float* in, std::complex<float>* out) const {
  // PRESERVE_INPUT: the plan reads `in` only.
  fftwf_execute_dft_r2c(state_->plan.get(), const_cast<float*>(in), Complex(out));
}

struct ComplexInverseFft::State {
  Plan plan;
};

ComplexInverseFft::ComplexInverseFft(std::unique_ptr<State> state) : state_(std::move(state)) {}
ComplexInverseFft::~ComplexInverseFft() = default;

absl::StatusOr<std::unique_ptr<const ComplexInverseFft>> ComplexInverseFft::Create(int n) {
  if (n < 2) {
    return absl::InvalidArgumentError(absl::StrCat("complex FFT of ", n, " points: needs n ≥ 2"));
  }
  FftBuffer<std::complex<float>> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  auto plan = MakePlan(
      [&] {
        return fftwf_plan_dft_1d(n, Complex(in.data()), Complex(out.data()), FFTW_BACKWARD, kFlags);
      },
      absl::StrCat("a complex FFT of ", n, " points"));
  if (!plan.ok()) return plan.status();
  auto state = std::make_unique<State>();
  state->plan = *std::move(plan);
  return std::unique_ptr<const ComplexInverseFft>(new ComplexInverseFft(std::move(state)));
}

void ComplexInverseFft::Execute(const std::complex<float>* in, std::complex<float>* out) const {
  fftwf_execute_dft(state_->plan.get(), Complex(const_cast<std::complex<float>*>(in)),
                    Complex(out));
}

}  // namespace INVARIANT_FFT_NAMESPACE
}  // namespace invariant::audio
