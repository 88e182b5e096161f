// torus_report.h: results of the torus reproduction and the files written
// from them (markdown table, CSVs, gnuplot data and script).
#ifndef INVARIANT_BENCH_SPECTRAL_TORUS_REPORT_H_
#define INVARIANT_BENCH_SPECTRAL_TORUS_REPORT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace invariant {

// Per (estimator, n): one entry per seed.
struct Stats {
  std::vector<double> mse, id_max, id_rel, fit_seconds, residual;
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
  std::string method;  // "spec_avg", "spec_avg_centered", "spec_rls", "krr"
  std::string param;   // e.g. "D=1161 (176 inv)", "eta=1 lambda=50"
};
inline bool operator<(const Row& a, const Row& b) {
  return std::tie(a.method, a.param) < std::tie(b.method, b.param);
}

struct TimingRow {
  std::string group;
  int32_t d;
  int64_t generators, num_basis, num_invariant;
  double group_order, build_s, fit_s;
};

struct TorusReportInputs {
  int32_t dim = 0;
  int32_t seeds = 0;
  double noise = 0;
  int64_t num_test = 0;
  int64_t num_generators = 0;
  std::vector<int64_t> n_list;  // sizes with KRR
  std::vector<int64_t> all_n;   // plus spectral-only sizes
  int64_t elements_count = 0;
  std::string elements_method;
  bool elements_exhaustive = false;
  int32_t timing_level = 0;
  int64_t timing_n = 0;
  std::string out_dir;
  double total_seconds = 0;
};

using TorusResults = std::map<Row, std::map<int64_t, Stats>>;

// Writes torus.md, torus.csv, torus_timing.csv, torus_curves.dat, torus.gp
// into in.out_dir; returns the summary lines for the console.
std::string WriteTorusReport(const TorusReportInputs& in, const TorusResults& results,
                             const std::vector<TimingRow>& timing);

}  // namespace invariant

#endif  // INVARIANT_BENCH_SPECTRAL_TORUS_REPORT_H_
