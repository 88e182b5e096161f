// torus_report.h: results of the torus reproduction (Soleymani et al. 2025
// §6) and the files written from them: torus.md (tables and the verdict on
// each target), torus.csv (one row per estimator and n), torus_timing.csv,
// torus_curves.dat and torus.gp (gnuplot script for torus.png, to be run in
// the output directory).
#ifndef INVARIANT_BENCH_SPECTRAL_TORUS_REPORT_H_
#define INVARIANT_BENCH_SPECTRAL_TORUS_REPORT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "research/repro/torus/torus_timing.h"

namespace invariant {

// Per (estimator, n): one entry per seed.
struct Stats {
  std::vector<double> mse, id_max, id_rel, fit_seconds, residual;
  // spec_avg only: slope of the fitted coefficients on f*'s exact Fourier
  // coefficients, and the fitted constant coefficient.
  std::vector<double> scale, constant;
  static double Mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / v.size();
  }
  static double Std(const std::vector<double>& v) {
    const double m = Mean(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return v.size() < 2 ? 0 : std::sqrt(s / (v.size() - 1));
  }
  static double Max(const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, x);
    return m;
  }
};

struct Row {
  std::string method;         // "krr", "spec_avg", "spec_avg_centered", "spec_rls", "spec_default"
  std::string param;          // e.g. "D=1161 (level<=3, 176 invariant)", "eta=0.1 lambda=50"
  int32_t level = -1;         // spectral rows: the basis level Σk² (−1 for KRR)
  int64_t num_invariant = 0;  // spectral rows: features (not part of the key)
};
inline bool operator<(const Row& a, const Row& b) {
  return std::tie(a.method, a.param, a.level) < std::tie(b.method, b.param, b.level);
}

// (1/N) Σ ψψᵀ of the invariant features up to `level` on N uniform points
// (the identity when the basis is orthonormal for the uniform probability
// measure on [-1,1)^d, which Algorithm 1 assumes).
struct SecondMomentCheck {
  int64_t points = 0;
  int32_t level = 0;
  int64_t num_invariant = 0;
  double diag_mean = 0, diag_max_dev = 0, offdiag_max = 0;
  double quarter_diag_max_dev = 0, quarter_offdiag_max = 0;  // on the first N/4 points
};

struct TorusReportInputs {
  int32_t dim = 0;
  int32_t seeds = 0;
  double noise = 0;
  int64_t num_test = 0;
  int64_t num_validation = 0;  // spec_default: validation points per seed
  double ridge_lambda = 0;     // spec_rls: its fixed λ
  int64_t num_generators = 0;
  std::vector<int64_t> n_list;  // sizes with KRR
  std::vector<int64_t> all_n;   // plus spectral-only sizes
  int64_t elements_count = 0;
  std::string elements_method;
  bool elements_exhaustive = false;
  TimingOptions timing;
  int32_t sweep_dim = 0;
  SecondMomentCheck moments;  // points == 0: not measured
  std::string command;        // the command line that produced the files
  std::string out_dir;
  double total_seconds = 0;
};

using TorusResults = std::map<Row, std::map<int64_t, Stats>>;

// ‖f* − (its projection on the basis up to `level`)‖² for
// f*(x) = (1/d) Σ i·x_i² under the uniform measure: only the single-
// coordinate terms √2cos(πk x_i) are non-zero, with coefficient
// (i/d)·2√2(−1)^k/(π²k²), so the error is (Σ_i i²/d²)·(8/π⁴)·Σ_{k²>level} k⁻⁴.
double TorusTruncationError(int32_t dim, int32_t level);

// The accuracy sections of torus.md (targets, test MSE, invariance, the
// error decomposition of Spec-Avg) appended to md; returns the console
// summary. Defined in torus_accuracy_report.cc.
std::string WriteAccuracySections(const TorusReportInputs& in, const TorusResults& results,
                                  std::ostream& md);

// Writes every file into in.out_dir (timing tables may be empty: their
// sections are then left out); returns the summary lines for the console.
std::string WriteTorusReport(const TorusReportInputs& in, const TorusResults& results,
                             const std::vector<TimingRow>& by_dimension,
                             const std::vector<TimingRow>& by_generators);

}  // namespace invariant

#endif  // INVARIANT_BENCH_SPECTRAL_TORUS_REPORT_H_
