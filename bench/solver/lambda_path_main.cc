// invariant-bench-lambda-path: the ridge solve of a λ grid on accumulated
// sums (or, for dual_band, on the kept rows), per solver, at one feature
// count D (issue 25: the λ path at paper scale). Run by
// bench/solver/lambda_path.sh; one line per solver.
//
// Data: N rows x ∈ R^32 (standard normal), D random Fourier features
// φ_j(x) = √(2/D) cos(w_jᵀx / σ + b_j) (σ = √32, so the Gram's spectrum
// decays like the trainer's RF models'), T one-vs-all ±1 targets of T
// classes (argmax of a random linear map of x). The rows are featurized
// and accumulated in blocks (not timed in solve_s; the accumulation alone,
// ΦᵀΦ and ΦᵀY, is gram_s: the trainer pays it in its featurize stage for
// every primal solver, and not for dual_band), then for each solver of
// --solvers in turn: the solver built from the sums (dual_band: from the
// kept float rows, N × D) and every λ of the grid solved (largest first, as
// the trainer does), timed. "peak_gib" is the process's peak resident
// memory during that solver (VmHWM, reset before it through
// /proc/self/clear_refs), the inputs it held included: "inputs_gib" (the
// resident size at the reset) is the sums when only primal solvers run,
// sums + rows when dual_band runs beside them, the rows alone for
// --solvers=dual_band. The weights of every solver are
// compared with the first one's (max over λ of ‖W − W_ref‖_F / ‖W_ref‖_F).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "core/base/random.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/ridge.h"
#include "core/rls/ridge_band.h"

ABSL_FLAG(int64_t, features, 2000, "D: random Fourier features");
ABSL_FLAG(int64_t, rows, 10000, "N: training rows");
ABSL_FLAG(int64_t, targets, 10, "T: one-vs-all targets (classes)");
ABSL_FLAG(std::string, solvers, "cholesky,band",
          "comma-separated: eigen, cholesky, band, dual_band");
ABSL_FLAG(std::string, lambdas, "1e-8,1e-7,1e-6,1e-5,1e-4,1e-3,1e-2,1e-1,1",
          "the λ grid (the trainer's default nine)");

namespace invariant {
namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A /proc/self/status field in GiB (Linux), or −1.
double StatusGib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) {
      return std::stod(line.substr(prefix.size())) / (1024.0 * 1024.0);
    }
  }
  return -1;
}

double PeakGib() { return StatusGib("VmHWM"); }

// Resets VmHWM to the current resident size (Linux ≥ 4.0); false if refused.
bool ResetPeak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// The data: sums accumulated when `sums` is set (the time of Add alone in
// *gram_seconds), the float row blocks kept in *phi_blocks, *y_blocks when set.
absl::Status Generate(int64_t n, int64_t d, int64_t t, GramAccumulator* sums, double* gram_seconds,
                      std::vector<FloatMatrix>* phi_blocks, std::vector<FloatMatrix>* y_blocks) {
  constexpr int64_t kInput = 32;
  constexpr int64_t kBlock = 1000;
  Rng rng(25);
  std::vector<float> w(static_cast<size_t>(d * kInput)), b(static_cast<size_t>(d));
  const double sigma = std::sqrt(static_cast<double>(kInput));
  for (float& v : w) v = static_cast<float>(rng.Normal() / sigma);
  for (float& v : b) v = static_cast<float>(rng.Uniform(0, 2 * M_PI));
  std::vector<float> classes(static_cast<size_t>(t * kInput));
  for (float& v : classes) v = static_cast<float>(rng.Normal());
  *gram_seconds = 0;
  const float scale = static_cast<float>(std::sqrt(2.0 / static_cast<double>(d)));
  std::vector<float> x(kInput), phi, y;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    phi.assign(static_cast<size_t>(m * d), 0.0f);
    y.assign(static_cast<size_t>(m * t), -1.0f);
    for (int64_t i = 0; i < m; ++i) {
      for (float& v : x) v = static_cast<float>(rng.Normal());
      for (int64_t j = 0; j < d; ++j) {
        float dot = b[static_cast<size_t>(j)];
        for (int64_t k = 0; k < kInput; ++k) dot += w[static_cast<size_t>(j * kInput + k)] * x[k];
        phi[static_cast<size_t>(i * d + j)] = scale * std::cos(dot);
      }
      int64_t best = 0;
      float best_score = -1e30f;
      for (int64_t c = 0; c < t; ++c) {
        float s = 0;
        for (int64_t k = 0; k < kInput; ++k)
          s += classes[static_cast<size_t>(c * kInput + k)] * x[k];
        if (s > best_score) best_score = s, best = c;
      }
      y[static_cast<size_t>(i * t + best)] = 1.0f;
    }
    if (sums != nullptr) {
      const double add_start = Seconds();
      absl::Status added = sums->Add(m, phi.data(), y.data());
      if (!added.ok()) return added;
      *gram_seconds += Seconds() - add_start;
    }
    if (phi_blocks != nullptr) {
      phi_blocks->push_back(FloatMatrix::Zeros(m, d));
      std::copy(phi.begin(), phi.end(), phi_blocks->back().mutable_data());
      y_blocks->push_back(FloatMatrix::Zeros(m, t));
      std::copy(y.begin(), y.end(), y_blocks->back().mutable_data());
    }
  }
  return absl::OkStatus();
}

int Run() {
  const int64_t d = absl::GetFlag(FLAGS_features);
  const int64_t n = absl::GetFlag(FLAGS_rows);
  const int64_t t = absl::GetFlag(FLAGS_targets);
  std::vector<double> grid;
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_lambdas), ',')) {
    grid.push_back(std::stod(std::string(s)));
  }
  std::sort(grid.begin(), grid.end(), std::greater<double>());
  const std::string solvers = absl::GetFlag(FLAGS_solvers);
  bool dual = false, primal = false;  // dual_band wants the rows, the others the sums
  for (absl::string_view name : absl::StrSplit(solvers, ',')) {
    (name == "dual_band" ? dual : primal) = true;
  }
  double start = Seconds();
  absl::StatusOr<GramAccumulator> sums = GramAccumulator::Create(d, t);
  std::vector<FloatMatrix> phi_blocks, y_blocks;
  double gram_seconds = 0;
  absl::Status generated = sums.status();
  if (generated.ok()) {
    generated = Generate(n, d, t, primal ? &*sums : nullptr, &gram_seconds,
                         dual ? &phi_blocks : nullptr, dual ? &y_blocks : nullptr);
  }
  if (!generated.ok()) {
    std::fprintf(stderr, "%s\n", generated.ToString().c_str());
    return 1;
  }
  if (!primal) sums = GramAccumulator::Create(1, 1);  // not needed: free D × D
  std::printf("D=%lld N=%lld T=%lld lambdas=%zu generate_s=%.1f gram_s=%.1f load=%.2f\n",
              static_cast<long long>(d), static_cast<long long>(n), static_cast<long long>(t),
              grid.size(), Seconds() - start, gram_seconds, [] {
                double load[3] = {0, 0, 0};
                return getloadavg(load, 3) > 0 ? load[0] : -1.0;
              }());
  std::vector<Eigen::MatrixXd> reference;
  double reference_seconds = 0;
  for (absl::string_view name : absl::StrSplit(solvers, ',')) {
    const bool reset = ResetPeak();
    const double inputs = StatusGib("VmRSS");
    start = Seconds();
    absl::StatusOr<std::unique_ptr<RidgeSolver>> solver;
    if (name == "eigen") {
      solver = MakePrimalRidgeSolver(*sums);
    } else if (name == "cholesky") {
      solver = MakeCholeskyRidgeSolver(*sums);
    } else if (name == "band") {
      solver = MakeBandRidgeSolver(*sums);
    } else if (name == "dual_band") {
      solver = MakeDualBandRidgeSolver(phi_blocks, y_blocks);
    } else {
      std::fprintf(stderr, "unknown solver %s\n", std::string(name).c_str());
      return 1;
    }
    if (!solver.ok()) {
      std::fprintf(stderr, "%s\n", solver.status().ToString().c_str());
      return 1;
    }
    const double built = Seconds() - start;
    std::vector<Eigen::MatrixXd> weights;
    for (double lambda : grid) {
      absl::StatusOr<RidgeWeights> w = (*solver)->SolveWeights(lambda);
      if (!w.ok()) {
        std::fprintf(stderr, "%s\n", w.status().ToString().c_str());
        return 1;
      }
      weights.push_back(std::move(w->weights));
    }
    const double total = Seconds() - start;
    const double peak = PeakGib();
    solver->reset();
    double gap = 0;
    if (reference.empty()) {
      reference = weights;
      reference_seconds = total;
    } else {
      for (size_t i = 0; i < grid.size(); ++i) {
        gap = std::max(gap, (weights[i] - reference[i]).norm() / reference[i].norm());
      }
    }
    std::printf(
        "solver=%s D=%lld N=%lld solve_s=%.2f build_s=%.2f per_lambda_s=%.3f peak_gib=%.2f%s "
        "inputs_gib=%.2f time_vs_first=%.3f max_rel_weight_gap_vs_first=%.2e\n",
        std::string(name).c_str(), static_cast<long long>(d), static_cast<long long>(n), total,
        built, (total - built) / static_cast<double>(grid.size()), peak, reset ? "" : "(not reset)",
        inputs, total / reference_seconds, gap);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace invariant

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return invariant::Run();
}
