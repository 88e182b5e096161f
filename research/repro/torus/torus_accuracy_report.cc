// The accuracy half of torus.md: the verdict on each target of issue 4, the
// test-error and invariance tables, and the bias/variance split of Spec-Avg.
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/torus_basis.h"
#include "research/repro/torus/torus_report.h"

namespace invariant {
namespace {

constexpr double kIdTarget = 1e-6;      // Spec-Avg: relative ID at most this
constexpr double kKrrIdClearly = 1e-3;  // KRR: relative ID at least this
constexpr double kRatioTarget = 1.5;    // best Spec-Avg MSE / best KRR MSE

const char* Verdict(bool ok) { return ok ? "**met**" : "**missed**"; }

struct Best {
  double mse = std::numeric_limits<double>::infinity();
  std::string param;
};

// Mean test MSE of `method` at basis level `level` and size n, if measured.
std::optional<double> MseAt(const TorusResults& results, const std::string& method, int32_t level,
                            int64_t n) {
  for (const auto& [row, by_n] : results) {
    if (row.method != method || row.level != level) continue;
    auto it = by_n.find(n);
    if (it != by_n.end()) return Stats::Mean(it->second.mse);
  }
  return std::nullopt;
}

Best BestKrrAt(const TorusResults& results, int64_t n) {
  Best b;
  for (const auto& [row, by_n] : results) {
    auto it = by_n.find(n);
    if (row.method == "krr" && it != by_n.end() && Stats::Mean(it->second.mse) < b.mse) {
      b = {Stats::Mean(it->second.mse), row.param};
    }
  }
  return b;
}

// Least-squares slope of log(mean MSE) on log n over the sizes with KRR.
double Rate(const std::map<int64_t, Stats>& by_n, const std::vector<int64_t>& n_list) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (int64_t n : n_list) {
    auto it = by_n.find(n);
    if (it == by_n.end() || !(Stats::Mean(it->second.mse) > 0)) continue;
    const double x = std::log(static_cast<double>(n)), y = std::log(Stats::Mean(it->second.mse));
    sx += x, sy += y, sxx += x * x, sxy += x * y, ++m;
  }
  const double den = m * sxx - sx * sx;
  return m < 2 || den <= 0 ? std::nan("") : (m * sxy - sx * sy) / den;
}

// The largest level whose whole eigenspaces (levels 0..L together) fit in D
// functions: Algorithm 1's rule "keep V_λ while D_λ ≤ D".
int32_t LevelForBudget(int32_t dim, int64_t budget) {
  int64_t total = 0;
  int32_t level = -1;
  for (int32_t m = 0; m <= 64; ++m) {
    total += TorusEigenspaceSize(dim, m);
    if (total > budget) break;
    level = m;
  }
  return level;
}

std::string Fmt(std::optional<double> v, const char* f = "%.4g") {
  return v.has_value() ? absl::StrFormat(f, *v) : std::string("—");
}

// Issue 14: why Algorithm 1 trails KRR here when the paper shows it
// competitive. Three checks (normalisation, the budget D, the paper's own
// protocol), each measured, then the conclusion.
void WriteWhyAlgorithm1Trails(const TorusReportInputs& in, const TorusResults& results,
                              std::ostream& md) {
  const int64_t n_max = in.n_list.back();
  const int64_t n_last = in.all_n.back();
  const Best best_krr = BestKrrAt(results, n_max);
  md << "\n## Why Algorithm 1 trails KRR here (issue 14)\n\n"
     << "The paper reports Spec-Avg competitive with KRR; the table above has Algorithm 1 "
     << "several times behind the best KRR. Three candidate causes, each measured.\n\n";

  // (a) Normalisation.
  const SecondMomentCheck& m = in.moments;
  md << "### (a) Normalisation of the eigenbasis\n\n"
     << "Algorithm 1 takes f̃_j = (1/n) Σ y_i φ_j(x_i) as an unbiased estimate of ⟨f*, φ_j⟩, "
     << "which holds only if the φ_j are orthonormal for the uniform *probability* measure on "
     << "[-1,1)^d (a factor c in φ would scale every coefficient by c², a bias that does not "
     << "shrink with n). Two measurements say the basis is right: the second moment of the "
     << "invariant features on fresh uniform points is the identity to Monte-Carlo accuracy, "
     << "and the coefficients Algorithm 1 fits at the largest n equal f*'s exact Fourier "
     << "coefficients (slope 1, constant (d+1)/6).\n\n"
     << "| check | measured | orthonormal basis gives |\n|---|---|---|\n";
  if (m.points > 0) {
    // Var(ψ²) ≤ 1.5^level − 1 for a product of ≤ level factors √2cos(πkx).
    const double diag_se = std::sqrt((std::pow(1.5, m.level) - 1) / m.points);
    md << absl::StrFormat(
              "| mean of diag (1/N)Σψ_j², level ≤ %d (%d invariant features), N = %d | %.4f | 1 "
              "(a factor c in φ gives c²) |\n",
              m.level, m.num_invariant, m.points, m.diag_mean)
       << absl::StrFormat(
              "| max_j \\|(1/N)Σψ_j² − 1\\| and max_{j≠k} \\|(1/N)Σψ_jψ_k\\| on the "
              "first N/4 = %d of those points | %.4f; %.4f | Monte-Carlo noise: about twice the "
              "values at N below |\n",
              m.points / 4, m.quarter_diag_max_dev, m.quarter_offdiag_max)
       << absl::StrFormat(
              "| max_j \\|(1/N)Σψ_j² − 1\\| | %.4f | 0 up to Monte-Carlo noise, whose standard "
              "error is ≤ %.4f per entry (the max over %d entries is a few times that) |\n",
              m.diag_max_dev, diag_se, m.num_invariant)
       << absl::StrFormat(
              "| max_{j≠k} \\|(1/N)Σψ_jψ_k\\| | %.4f | 0 up to Monte-Carlo noise (standard "
              "error 1/√N = %.4f for features on disjoint coordinates, more when they share "
              "one) |\n",
              m.offdiag_max, 1 / std::sqrt(static_cast<double>(m.points)));
  }
  // Each literal coefficient is its own sample mean, the same at every level
  // that has it: the lowest level (k = 1 terms) and the highest (k ≤ 2) cover
  // every non-zero coefficient measured.
  int32_t lowest = std::numeric_limits<int32_t>::max(), highest = -1;
  for (const auto& [row, by_n] : results) {
    if (row.method == "spec_avg") lowest = std::min(lowest, row.level);
    if (row.method == "spec_avg") highest = std::max(highest, row.level);
  }
  for (const auto& [row, by_n] : results) {
    if (row.method != "spec_avg" || (row.level != lowest && row.level != highest)) continue;
    auto it = by_n.find(n_last);
    if (it == by_n.end() || it->second.scale.empty()) continue;
    const Stats& s = it->second;
    md << absl::StrFormat(
        "| Algorithm 1 at %s, n = %d: slope of fitted on exact coefficients; constant "
        "coefficient (mean ± sd over seeds) | %.3f ± %.3f; %.4f ± %.4f | 1; %.4f |\n",
        row.param, n_last, Stats::Mean(s.scale), Stats::Std(s.scale), Stats::Mean(s.constant),
        Stats::Std(s.constant), (in.dim + 1) / 6.0);
  }

  // (b) The budget D.
  md << "\n### (b) The budget D\n\n"
     << "Algorithm 1 keeps V_λ while D_λ = Σ_{λ' ≤ λ} m_λ' ≤ D (every eigenfunction counts, "
     << "invariant or not) with D = n^{1/(1+α)}, α = 2s/d > 1 for f* in the Sobolev space H^s. "
     << "So the rule gives D < √n (α → 1 is the largest D it allows): level ≤ 1 at n = 4000. "
     << "Our f* is rougher than the theorem "
     << "assumes: the periodised x_i² has a kink at ±1, its Fourier coefficients fall as k⁻², "
     << "so f* ∈ H^s only for s < 3/2, α < 3/d = " << absl::StrFormat("%.2g", 3.0 / in.dim)
     << ". The table gives the level each rule keeps and Algorithm 1's test MSE there, next to "
     << "the best level in hindsight; every choice stays well outside 1.5× of the best KRR at "
     << "the sizes with KRR: a small level stops at the truncation error `trunc` (0.026 for "
     << "levels ≤ 3, which lack cos(2πx_i)), a larger one pays #invariant·E[y²]/n in "
     << "variance.\n\n"
     << "| n | D, α → 1 | level | Algorithm 1 MSE | D, α = "
     << absl::StrFormat("%.2g", 3.0 / in.dim)
     << " | level | Algorithm 1 MSE | best level (MSE) | best KRR | best Algorithm 1 / best KRR "
        "|\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (int64_t n : in.all_n) {
    const int64_t d1 = DefaultSpecAvgBudget(n, 1.0);
    const int64_t d2 = DefaultSpecAvgBudget(n, 3.0 / in.dim);
    const int32_t l1 = LevelForBudget(in.dim, d1), l2 = LevelForBudget(in.dim, d2);
    std::optional<double> best;
    int32_t best_level = -1;
    for (const auto& [row, by_n] : results) {
      if (row.method != "spec_avg" || !by_n.count(n)) continue;
      const double v = Stats::Mean(by_n.at(n).mse);
      if (!best.has_value() || v < *best) best = v, best_level = row.level;
    }
    const Best krr = BestKrrAt(results, n);
    const bool has_krr = krr.mse < std::numeric_limits<double>::infinity();
    md << "| " << n << " | " << d1 << " | " << l1 << " | " << Fmt(MseAt(results, "spec_avg", l1, n))
       << " | " << d2 << " | " << l2 << " | " << Fmt(MseAt(results, "spec_avg", l2, n)) << " | "
       << (best.has_value() ? absl::StrFormat("%d (%.4g)", best_level, *best) : "—") << " | "
       << (has_krr ? absl::StrFormat("%.4g", krr.mse) : "—") << " | "
       << (has_krr && best.has_value() ? absl::StrFormat("%.2f", *best / krr.mse) : "—") << " |\n";
  }
  // n at which the largest level would get within 1.5x, from the measured c.
  for (const char* method : {"spec_avg", "spec_avg_centered"}) {
    int32_t top = -1;
    const Stats* s = nullptr;
    int64_t inv = 0;
    for (const auto& [row, by_n] : results) {
      if (row.method == method && row.level > top && by_n.count(n_max)) {
        top = row.level, s = &by_n.at(n_max), inv = row.num_invariant;
      }
    }
    if (s == nullptr) continue;
    const double trunc = TorusTruncationError(in.dim, top);
    const double c = n_max * (Stats::Mean(s->mse) - trunc) / std::max<int64_t>(1, inv);
    const double room = kRatioTarget * best_krr.mse - trunc;
    md << "\n"
       << absl::StrFormat(
              "`%s` at level ≤ %d (trunc %.3g, %d invariant, measured c = %.3g) would need n ≈ %s "
              "to come within %.1f× of the best KRR at n = %d.",
              method, top, trunc, inv, c,
              room > 0 && c > 0 ? absl::StrFormat("%.2g", inv * c / room) : std::string("∞"),
              kRatioTarget, n_max);
  }
  md << "\n";

  // (c) The paper's protocol.
  std::vector<std::pair<std::string, const std::map<int64_t, Stats>*>> lambda50;
  for (const auto& [row, by_n] : results) {
    if (row.method == "krr" && row.param.find("lambda=50") != std::string::npos &&
        by_n.count(n_max)) {
      lambda50.emplace_back(row.param, &by_n);
    }
  }
  md << "\n### (c) The paper's protocol and what it claims\n\n"
     << "§6.2 fixes d = 10, 100 uniform test points and seeds 1..10. The training sizes appear "
     << "only on the axis of Figure 2, not in the text; neither label noise nor the kernel's η "
     << "is given (we use σ = " << in.noise << "). \"Test error\" is the \"empirical excess "
     << "population risk\": the mean over the test points of (f̂(x) − f*(x))², which is what "
     << "the tables here report (without label noise it also equals the MSE against the "
     << "labels). The claim (§6.3, Figure 2, on a log scale) is \"the same order of test error\" "
     << "with appropriate hyperparameters, and the one pairing named is Spec-Avg with D = 176 "
     << "against KRR with λ = 50, a heavily regularised KRR";
  for (const auto& [param, by_n] : lambda50) {
    md << absl::StrFormat("; %s is %.1f× the best KRR at n = %d", param,
                          Stats::Mean(by_n->at(n_max).mse) / best_krr.mse, n_max);
  }
  md << ". It is not a claim about the best KRR. With D read as the paper defines it, the "
     << "errors at that pairing are of the same order, as the paper says; read as a count of "
     << "invariant functions they are further apart, at a similar rate (`rate`, the slope of "
     << "log MSE on log n over n = " << in.n_list.front() << ".." << n_max << "):\n\n"
     << "| Spec-Avg (Algorithm 1) | reading of D = 176 | MSE at n = " << n_max
     << " | rate | KRR | its MSE | its rate | ratio |\n|---|---|---|---|---|---|---|---|\n";
  for (int32_t level : {1, 3}) {
    for (const auto& [row, by_n] : results) {
      if (row.method != "spec_avg" || row.level != level || !by_n.count(n_max)) continue;
      const double v = Stats::Mean(by_n.at(n_max).mse);
      for (const auto& [param, kby_n] : lambda50) {
        const double k = Stats::Mean(kby_n->at(n_max).mse);
        md << "| " << row.param << " | "
           << (level == 1 ? "as the paper defines D_λ (all eigenfunctions; level ≤ 2 is 201)"
                          : "as a count of invariant functions (176 at level ≤ 3)")
           << " | "
           << absl::StrFormat("%.4g | %.2f | %s | %.4g | %.2f | %.2f", v, Rate(by_n, in.n_list),
                              param, k, Rate(*kby_n, in.n_list), v / k)
           << " |\n";
      }
    }
  }

  // Conclusion.
  Best rls;
  for (const auto& [row, by_n] : results) {
    auto it = by_n.find(n_max);
    if (row.method == "spec_default" && it != by_n.end() && Stats::Mean(it->second.mse) < rls.mse) {
      rls = {Stats::Mean(it->second.mse), row.param};
    }
  }
  double weights = 0;
  for (int32_t i = 1; i <= in.dim; ++i) weights += static_cast<double>(i) * i / in.dim / in.dim;
  const double mean_y = (in.dim + 1) / 6.0;
  md << "\n### Answer\n\n"
     << "Not a bug, and not the normalisation (a): Algorithm 1 is implemented as written and "
     << "its coefficients converge to f*'s. The paper's evidence is weaker than \"within 1.5× "
     << "of KRR\" (c): a log-scale figure against a KRR with λ = 50, a pairing we reproduce. And "
        "no "
     << "budget D rescues the literal estimator at these n (b): it is a sample mean, whose "
     << "variance Σ_j Var(y ψ_j)/n ≈ #invariant·E[y²]/n (Error decomposition above) does not "
     << "vanish without label noise, and "
     << absl::StrFormat("E[y²] = %.2g is large because f* has mean %.3g",
                        mean_y * mean_y + 4.0 / 45.0 * weights + in.noise * in.noise, mean_y)
     << " (centring the targets only removes that mean). Algorithm 1 replaces the empirical "
     << "second moment (1/n)ΨᵀΨ of the invariant features by its expectation I; solving with "
     << "the measured one instead, ((1/n)ΨᵀΨ + λI) c = (1/n)ΨᵀY, is least squares on the same "
     << "exactly invariant features, whose variance on noiseless data comes only from the part "
     << "of f* outside the features. With λ chosen on validation as the trainer does "
     << "(`spec_default`): "
     << absl::StrFormat("%.4g (%s) at n = %d, %.2f× the best KRR", rls.mse, rls.param, n_max,
                        rls.mse / best_krr.mse)
     << ". That estimator is the trainer's default for spectral models (learner.kind SPEC_AVG "
     << "with spec_avg_estimator SPEC_AVG_LEAST_SQUARES; also what a spectral encoder gets "
     << "with learner.kind unset); `spec_avg_estimator: SPEC_AVG_ALGORITHM1` selects "
     << "Algorithm 1.\n";
}

}  // namespace

std::string WriteAccuracySections(const TorusReportInputs& in, const TorusResults& results,
                                  std::ostream& md) {
  const int64_t n_max = in.n_list.back();
  md << "Protocol: d = " << in.dim << ", x ~ U[-1,1)^d, f*(x) = (1/d) Σ i·x_i², group {±1}^d "
     << "from " << in.num_generators << " sign-flip generators, " << in.num_test
     << " fresh test points per seed, seeds 1.." << in.seeds << ", label noise σ = " << in.noise
     << ". Test error = mean squared error against f* on the test points (the empirical excess "
     << "risk of the paper's Figure 2); ± is the standard deviation over seeds.\n\n"
     << "Estimators. `spec_avg` = Algorithm 1 exactly: f̃ = (1/n) Σ y_i φ(x_i) over every "
     << "eigenfunction of the kept eigenspaces, projected per eigenspace onto the invariant "
     << "subspace. `spec_avg_centered` = the same with the constant coefficient estimated as "
     << "mean(y) and the others from y − ȳ (a variance reduction). `spec_default` = the "
     << "trainer's default for spectral models (learner.kind SPEC_AVG, spec_avg_estimator "
     << "SPEC_AVG_LEAST_SQUARES) through the trainer's own solver: least squares on the same "
     << "exactly invariant features, i.e. Algorithm 1 with the empirical second moment "
     << "(1/n)ΨᵀΨ of the features in place of I, with an unregularised bias and λ chosen from "
     << "1e-8..1 on " << in.num_validation << " fresh validation points per seed. `spec_rls` = "
     << "the same at a fixed λ = " << in.ridge_lambda << " without the validation rows. D "
     << "counts every eigenfunction enumerated (whole eigenspaces); \"invariant\" is the "
     << "dimension Spec-Avg keeps. The paper's D = 176 is level ≤ 1 (D = 21) if D counts every "
     << "eigenfunction as the paper defines it, level ≤ 3 (D = 1161, 176 invariant) if it "
     << "counts invariant functions; see (b) and (c) below. `krr` solves (K + λI)α = y with K(x, "
        "z) = exp(η Σ_i cos(π(x_i − z_i))).\n\n"
     << "ID = max over the test points and " << in.elements_count << " group elements ("
     << in.elements_method << (in.elements_exhaustive ? ", the whole group" : "")
     << ") of |f(x) − f(g·x)|; `rel` = ID / max|f| on the test points; `residual` = "
     << "max over generators of ‖D(g)f̂ − f̂‖₂ for the fitted coefficients.\n\n";

  // Targets.
  std::map<std::string, Best> best;  // method → best row at n_max
  double worst_spec_rel = 0, min_krr_rel = std::numeric_limits<double>::infinity();
  for (const auto& [row, by_n] : results) {
    auto it = by_n.find(n_max);
    if (it != by_n.end() && Stats::Mean(it->second.mse) < best[row.method].mse) {
      best[row.method] = {Stats::Mean(it->second.mse), row.param};
    }
    for (const auto& [n, s] : by_n) {
      if (row.method == "krr") {
        min_krr_rel = std::min(min_krr_rel, Stats::Mean(s.id_rel));
      } else {
        worst_spec_rel = std::max(worst_spec_rel, Stats::Max(s.id_rel));
      }
    }
  }
  const double best_krr = best["krr"].mse;
  const double ratio_alg1 = best["spec_avg"].mse / best_krr;
  const double ratio_centered = best["spec_avg_centered"].mse / best_krr;
  const double ratio_rls = best["spec_rls"].mse / best_krr;
  const double ratio_default = best["spec_default"].mse / best_krr;
  std::string console;
  md << "## Targets of issue 4\n\n"
     << absl::StrFormat(
            "1. Spec-Avg is invariant to float rounding (relative ID ≤ %.0e): %s. Largest "
            "relative ID of any spectral fit over every n, seed and group element: %.3g.\n",
            kIdTarget, Verdict(worst_spec_rel <= kIdTarget), worst_spec_rel)
     << absl::StrFormat(
            "2. KRR is clearly not invariant (relative ID ≥ %.0e): %s. Smallest mean relative "
            "ID of a KRR model over every n, η, λ: %.3g.\n",
            kKrrIdClearly, Verdict(min_krr_rel >= kKrrIdClearly), min_krr_rel)
     << absl::StrFormat(
            "3. Spec-Avg's test error within %.1f× of the best KRR at the largest n with "
            "both (n = %d): best KRR %.4g (%s).\n",
            kRatioTarget, n_max, best_krr, best["krr"].param)
     << absl::StrFormat(
            "   * the default, least squares on the invariant features with λ chosen on "
            "validation (`spec_default`; SPEC_AVG_LEAST_SQUARES): %.4g (%s), ratio %.2f: %s.\n",
            best["spec_default"].mse, best["spec_default"].param, ratio_default,
            Verdict(ratio_default <= kRatioTarget))
     << absl::StrFormat("   * the same at a fixed λ (`spec_rls`): %.4g (%s), ratio %.2f: %s.\n",
                        best["spec_rls"].mse, best["spec_rls"].param, ratio_rls,
                        Verdict(ratio_rls <= kRatioTarget))
     << absl::StrFormat(
            "   * Algorithm 1 exactly (`spec_avg`; SPEC_AVG_ALGORITHM1): %.4g (%s), ratio %.2f: "
            "%s.\n",
            best["spec_avg"].mse, best["spec_avg"].param, ratio_alg1,
            Verdict(ratio_alg1 <= kRatioTarget))
     << absl::StrFormat(
            "   * with centred targets (`spec_avg_centered`; SPEC_AVG_ALGORITHM1 with "
            "center_targets): %.4g (%s), ratio %.2f: %s.\n",
            best["spec_avg_centered"].mse, best["spec_avg_centered"].param, ratio_centered,
            Verdict(ratio_centered <= kRatioTarget));
  // The paper's own comparison: D = 176 against KRR λ = 50, D read both ways.
  for (int32_t level : {1, 3}) {
    for (const auto& [row, by_n] : results) {
      if (row.level != level || row.method == "spec_rls" || row.method == "spec_default" ||
          !by_n.count(n_max)) {
        continue;
      }
      for (const auto& [krow, kby_n] : results) {
        if (krow.method != "krr" || krow.param.find("lambda=50") == std::string::npos ||
            !kby_n.count(n_max)) {
          continue;
        }
        md << absl::StrFormat(
            "   * the paper's pairing (§6.3) at n = %d: %s %s %.4g vs KRR %s %.4g, ratio %.2f.\n",
            n_max, row.method, row.param, Stats::Mean(by_n.at(n_max).mse), krow.param,
            Stats::Mean(kby_n.at(n_max).mse),
            Stats::Mean(by_n.at(n_max).mse) / Stats::Mean(kby_n.at(n_max).mse));
      }
    }
  }
  console += absl::StrFormat(
      "spectral max rel ID %.3g; KRR min rel ID %.3g; best MSE at n=%d: KRR %.4g, default "
      "spec_default %.4g (x%.2f: %s), spec_rls %.4g (x%.2f), spec_avg %.4g (x%.2f: %s), "
      "centred %.4g (x%.2f: %s)\n",
      worst_spec_rel, min_krr_rel, n_max, best_krr, best["spec_default"].mse, ratio_default,
      ratio_default <= kRatioTarget ? "met" : "missed", best["spec_rls"].mse, ratio_rls,
      best["spec_avg"].mse, ratio_alg1, ratio_alg1 <= kRatioTarget ? "met" : "missed",
      best["spec_avg_centered"].mse, ratio_centered,
      ratio_centered <= kRatioTarget ? "met" : "missed");

  // Test MSE table.
  md << "\n## Test MSE\n\nColumns after n = " << n_max
     << " run the spectral estimators only (KRR's O(n³) solve is out of reach there). "
     << "`trunc` = ‖f* − its projection on the kept eigenspaces‖² (exact, from the Fourier "
     << "series of x²): no estimator on those features can go below it. `rate` = slope of log "
     << "MSE on log n over n = " << in.n_list.front() << ".." << n_max
     << " (the order of the error, which is what the paper's log-scale Figure 2 compares).\n\n"
     << "| method | parameters | trunc | rate |";
  for (int64_t n : in.all_n) md << " n=" << n << " |";
  md << "\n|---|---|---|---|";
  for (size_t i = 0; i < in.all_n.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& [row, by_n] : results) {
    md << "| " << row.method << " | " << row.param << " | "
       << (row.level >= 0 ? absl::StrFormat("%.3g", TorusTruncationError(in.dim, row.level))
                          : std::string("—"))
       << " | " << absl::StrFormat("%.2f", Rate(by_n, in.n_list)) << " |";
    for (int64_t n : in.all_n) {
      auto it = by_n.find(n);
      md << (it == by_n.end() ? std::string(" — |")
                              : absl::StrFormat(" %.4g ± %.2g |", Stats::Mean(it->second.mse),
                                                Stats::Std(it->second.mse)));
    }
    md << "\n";
  }

  // Invariance at n_max.
  md << "\n## Invariance at n = " << n_max << "\n\n| method | parameters | ID (mean) | "
     << "rel (max) | residual (max) | fit s (mean; KRR: per λ, kernel shared) |\n"
     << "|---|---|---|---|---|---|\n";
  for (const auto& [row, by_n] : results) {
    auto it = by_n.find(n_max);
    if (it == by_n.end()) continue;
    const Stats& s = it->second;
    md << "| " << row.method << " | " << row.param << " | "
       << absl::StrFormat(
              "%.3g | %.3g | %s | %.3g |", Stats::Mean(s.id_max), Stats::Max(s.id_rel),
              s.residual.empty() ? "—" : absl::StrFormat("%.2g", Stats::Max(s.residual)),
              Stats::Mean(s.fit_seconds))
       << "\n";
  }

  // Why Algorithm 1 stays behind KRR on noiseless data.
  // E[y] = (d+1)/6 and Var(y) = (4/45)·Σ i²/d² for x ~ U[-1,1)^d.
  double weights = 0;
  for (int32_t i = 1; i <= in.dim; ++i) weights += static_cast<double>(i) * i / in.dim / in.dim;
  const double mean_y = (in.dim + 1) / 6.0;
  const double var_y = 4.0 / 45.0 * weights + in.noise * in.noise;
  md << "\n## Error decomposition of Spec-Avg at n = " << n_max << "\n\n"
     << "Algorithm 1 estimates each invariant coefficient by a sample mean, "
     << "f̃_j = (1/n) Σ y_i ψ_j(x_i), whose variance Var(y ψ_j)/n does not vanish when the labels "
     << "are noiseless. So the test error is about trunc + (#invariant)·c/n with "
     << absl::StrFormat("c ≈ E[y²] = %.3g (c ≈ Var(y) = %.3g with centred targets)",
                        mean_y * mean_y + var_y, var_y)
     << "; the last column below measures c. KRR and RLS solve least squares instead, whose "
     << "variance on noiseless data comes only from the part of f* the model cannot represent. "
     << "Spec-Avg needs #invariant/n small *and* a level high enough for trunc to be small; the "
     << "table shows which of the two limits each budget at n = " << n_max << ". (The test MSE "
     << "on " << in.num_test << " points estimates the L2 error with sampling noise, so "
     << "MSE − trunc can come out slightly negative.)\n\n"
     << "| method | parameters | invariant | test MSE | trunc | MSE − trunc | n·(MSE − trunc) / "
        "invariant |\n|---|---|---|---|---|---|---|\n";
  for (const auto& [row, by_n] : results) {
    auto it = by_n.find(n_max);
    if (row.level < 0 || it == by_n.end() || row.method == "spec_rls" ||
        row.method == "spec_default") {
      continue;
    }
    const double mse = Stats::Mean(it->second.mse);
    const double trunc = TorusTruncationError(in.dim, row.level);
    md << "| " << row.method << " | " << row.param << " | " << row.num_invariant << " | "
       << absl::StrFormat("%.4g | %.3g | %.3g | %.3g |", mse, trunc, mse - trunc,
                          n_max * (mse - trunc) / std::max<int64_t>(1, row.num_invariant))
       << "\n";
  }
  WriteWhyAlgorithm1Trails(in, results, md);
  return console;
}

}  // namespace invariant
