// invariant-repro-torus: reproduces Soleymani et al. (ICML 2025) §6.
//
// x ~ U[-1, 1)^d, f*(x) = (1/d) Σ_i i·x_i², group {±1}^d given by d sign-flip
// generators; Spec-Avg (several budgets D; Algorithm 1 as written, centred,
// least squares at a fixed λ, and the trainer's default: least squares with
// λ chosen on validation) vs kernel ridge regression with the von Mises
// kernel (several η, λ). Also the checks of issue 14: the second moment of
// the invariant features and Algorithm 1's coefficients against f*'s exact
// Fourier coefficients. For each n and seed: test MSE against
// f* on fresh test points, and the invariance discrepancy over those points
// and every group element (or random words when the group is too large).
// Then the fit-time table for d = 6..12 with the full sign-flip group and the
// full permutation group (swap + cycle). Writes torus.md, torus.csv,
// torus_timing.csv, torus_curves.dat and torus.gp into --out_dir.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/random.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/lambda_selection.h"
#include "core/rls/ridge.h"
#include "core/spectral/invariance_discrepancy.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/von_mises_krr.h"
#include "research/repro/torus/torus_report.h"
#include "research/repro/torus/torus_timing.h"

ABSL_FLAG(int32_t, dim, 10, "torus dimension d");
ABSL_FLAG(int32_t, seeds, 10, "seeds 1..S (data of each seed is independent)");
ABSL_FLAG(std::string, n_list, "250,500,1000,2000,4000", "training set sizes");
ABSL_FLAG(std::string, levels, "1,2,3,4",
          "Spec-Avg budgets, as the largest eigenvalue level Σk² kept (D = functions up to it)");
ABSL_FLAG(std::string, spec_only_n_list, "16000,64000",
          "extra sizes run for the spectral estimators only (KRR is O(n³))");
ABSL_FLAG(std::string, etas, "0.1,0.3", "von Mises kernel η values");
ABSL_FLAG(std::string, lambdas, "0.1,1,50", "KRR λ values ((K + λI)α = y)");
ABSL_FLAG(double, ridge_lambda, 1e-6,
          "λ of the least-squares (RLS) variant on invariant features, run at every level");
ABSL_FLAG(int32_t, ridge_level, 4, "an extra level for the RLS variant only");
ABSL_FLAG(int64_t, validation_points, 200,
          "validation points of `spec_default`, which chooses λ on them as invariant-train does");
ABSL_FLAG(int64_t, moment_points, 100000,
          "points of the Monte-Carlo check that the invariant features are orthonormal");
ABSL_FLAG(int32_t, moment_level, 3, "level of that check");
ABSL_FLAG(int64_t, test_points, 100, "test points (also the points of the discrepancy)");
ABSL_FLAG(double, noise, 0.0, "std of Gaussian label noise on training targets");
ABSL_FLAG(int64_t, id_max_elements, 5000, "enumerate the group when it has ≤ this many elements");
ABSL_FLAG(int64_t, id_random_words, 500, "otherwise: this many random words of length 40");
ABSL_FLAG(bool, accuracy, true, "run the accuracy experiment (test error and ID vs n)");
ABSL_FLAG(bool, timing, true, "run the fit-time tables");
ABSL_FLAG(std::string, timing_dims, "6,8,10,12", "dimensions of the fit-time table");
ABSL_FLAG(int32_t, timing_level, 4, "eigenvalue level of the fit-time tables");
ABSL_FLAG(int64_t, timing_n, 2000, "training points of the fit-time tables");
ABSL_FLAG(int32_t, timing_reps, 5, "each time is the fastest of this many runs");
ABSL_FLAG(int32_t, sweep_dim, 10, "dimension of the time-vs-number-of-generators table");
ABSL_FLAG(std::string, out_dir, "research/results", "where the outputs go");

namespace invariant {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

template <typename T>
std::vector<T> ParseList(const std::string& s) {
  std::vector<T> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    out.push_back(static_cast<T>(std::stod(std::string(part))));
  }
  return out;
}

int64_t BudgetForLevel(int32_t dim, int32_t level) {
  int64_t d = 0;
  for (int32_t m = 0; m <= level; ++m) d += TorusEigenspaceSize(dim, m);
  return d;
}

struct Data {
  std::vector<float> x, y, f;  // y = f + noise
};

Data Sample(int32_t dim, int64_t n, Rng rng, double noise) {
  Data d;
  d.x.resize(n * dim);
  d.y.resize(n);
  d.f.resize(n);
  for (int64_t r = 0; r < n; ++r) {
    double f = 0;
    for (int32_t i = 0; i < dim; ++i) {
      const double v = rng.Uniform(-1, 1);
      d.x[r * dim + i] = static_cast<float>(v);
      f += (i + 1) * v * v;
    }
    f /= dim;
    d.f[r] = static_cast<float>(f);
    d.y[r] = static_cast<float>(f + (noise > 0 ? noise * rng.Normal() : 0.0));
  }
  return d;
}

double Mse(const std::vector<float>& pred, const std::vector<float>& f, int64_t stride,
           int64_t col) {
  double s = 0;
  for (size_t r = 0; r < f.size(); ++r) {
    const double e = pred[r * stride + col] - f[r];
    s += e * e;
  }
  return s / f.size();
}

// The fitted coefficients of Algorithm 1 against the exact Fourier
// coefficients of f*: only the constant, (d+1)/6, and the single-coordinate
// cosines √2cos(πk x_i), (i/d)·2√2(−1)^k/(π²k²), are non-zero. `scale` is the
// least-squares slope of the fitted non-constant coefficients on the exact
// ones (1 when the basis is orthonormal for the uniform probability measure).
struct CoefficientCheck {
  double scale = 0, constant = 0;
};

CoefficientCheck CheckAgainstFourier(const SpectralEncoder& enc, const Eigen::VectorXd& w) {
  constexpr double kPi = 3.14159265358979323846;
  const Eigen::VectorXd f = enc.ExpandToBasis(w);
  const IntMatrix& basis = enc.tensors().basis;
  const int32_t dim = static_cast<int32_t>(basis.cols());
  CoefficientCheck out;
  double num = 0, den = 0;
  for (int64_t j = 0; j < basis.rows(); ++j) {
    const int32_t* s = basis.row(j);
    int32_t nonzero = 0, coord = -1;
    for (int32_t i = 0; i < dim; ++i) {
      if (s[i] != 0) ++nonzero, coord = i;
    }
    double exact = 0;
    if (nonzero == 0) {
      out.constant = f(j);
      continue;
    }
    if (nonzero == 1 && s[coord] > 0) {
      const int32_t k = s[coord];
      exact = (coord + 1.0) / dim * 2.0 * std::sqrt(2.0) * (k % 2 == 0 ? 1.0 : -1.0) /
              (kPi * kPi * k * k);
    }
    num += f(j) * exact;
    den += exact * exact;
  }
  out.scale = den > 0 ? num / den : 0;
  return out;
}

// (1/N) Σ ψ(x)ψ(x)ᵀ of the invariant features up to `level` on N uniform
// points: I (up to Monte-Carlo error) when the eigenbasis is orthonormal for
// the uniform probability measure, as Algorithm 1 assumes.
absl::StatusOr<SecondMomentCheck> MeasureSecondMoment(int32_t dim, int32_t level,
                                                      const std::vector<TorusGeneratorSpec>& gens,
                                                      int64_t points) {
  SpectralEncoderOptions o;
  o.dim = dim;
  o.budget = BudgetForLevel(dim, level);
  o.generators = gens;
  auto enc = SpectralEncoder::Build(o);
  if (!enc.ok()) return enc.status();
  const int64_t f = (*enc)->d_out();
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(f, f);
  constexpr int64_t kBlock = 1024;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> block(kBlock, f);
  Rng rng = Rng::ForStream(777, 3);
  std::vector<float> x(kBlock * dim);
  // Max |entry − I| of the running mean after `count` points.
  auto deviations = [&](int64_t count) {
    Eigen::MatrixXd g = gram.selfadjointView<Eigen::Lower>();
    g /= static_cast<double>(count);
    const double diag = (g.diagonal().array() - 1.0).abs().maxCoeff();
    g.diagonal().setZero();
    return std::make_pair(diag, g.cwiseAbs().maxCoeff());
  };
  SecondMomentCheck c;
  const int64_t quarter = std::max<int64_t>(kBlock, points / 4 / kBlock * kBlock);
  for (int64_t r0 = 0; r0 < points; r0 += kBlock) {
    if (r0 == quarter) {
      std::tie(c.quarter_diag_max_dev, c.quarter_offdiag_max) = deviations(r0);
    }
    const int64_t rows = std::min(kBlock, points - r0);
    for (int64_t i = 0; i < rows * dim; ++i) x[i] = static_cast<float>(rng.Uniform(-1, 1));
    (*enc)->EncodeDouble(rows, x.data(), block.data());
    gram.selfadjointView<Eigen::Lower>().rankUpdate(block.topRows(rows).transpose());
  }
  gram = gram.selfadjointView<Eigen::Lower>();
  gram /= static_cast<double>(points);
  c.points = points;
  c.level = level;
  c.num_invariant = f;
  c.diag_mean = gram.diagonal().mean();
  c.diag_max_dev = (gram.diagonal().array() - 1.0).abs().maxCoeff();
  gram.diagonal().setZero();
  c.offdiag_max = gram.cwiseAbs().maxCoeff();
  return c;
}

// The trainer's default for spectral features (learner.kind SPEC_AVG,
// spec_avg_estimator SPEC_AVG_LEAST_SQUARES), through the same code as
// invariant-train: float features into a GramAccumulator, ridge with an
// unregularised bias, λ from 1e-8..1 (decades) by validation MSE. Returned
// as coefficients on the features, the bias folded into feature 0 (the
// constant function).
absl::StatusOr<Eigen::VectorXd> FitTrainerDefault(const SpectralEncoder& enc, int64_t n,
                                                  const float* x, const float* y, int64_t m,
                                                  const float* vx, const float* vy) {
  const int64_t f = enc.d_out();
  auto acc = GramAccumulator::Create(f, 1);
  if (!acc.ok()) return acc.status();
  constexpr int64_t kBlock = 1024;
  std::vector<float> phi(static_cast<size_t>(kBlock * f));
  for (int64_t r0 = 0; r0 < n; r0 += kBlock) {
    const int64_t rows = std::min(kBlock, n - r0);
    enc.Encode(rows, x + r0 * enc.d_in(), phi.data());
    const absl::Status st = acc->Add(rows, phi.data(), y + r0);
    if (!st.ok()) return st;
  }
  auto solver = MakeGramRidgeSolver(*acc, RidgeSolverKind::kAuto);
  if (!solver.ok()) return solver.status();
  FloatMatrix val_phi = FloatMatrix::Zeros(m, f);
  enc.Encode(m, vx, val_phi.mutable_data());
  FloatMatrix val_y = FloatMatrix::Zeros(m, 1);
  std::copy(vy, vy + m, val_y.mutable_data());
  std::vector<double> grid;
  for (double lam = 1e-8; lam <= 1.5; lam *= 10) grid.push_back(lam);
  auto sel = ChooseLambda(**solver, grid, val_phi, val_y, RlsTask::kRegression);
  if (!sel.ok()) return sel.status();
  Eigen::VectorXd c(f);
  for (int64_t j = 0; j < f; ++j) c(j) = sel->model.weights.row(j)[0];
  c(0) += sel->model.bias.row(0)[0];
  return c;
}

int Run(const std::string& command) {
  const int32_t dim = absl::GetFlag(FLAGS_dim);
  const int32_t seeds = absl::GetFlag(FLAGS_seeds);
  const auto n_list = ParseList<int64_t>(absl::GetFlag(FLAGS_n_list));
  const auto spec_only_n_list = ParseList<int64_t>(absl::GetFlag(FLAGS_spec_only_n_list));
  std::vector<int64_t> all_n = n_list;
  all_n.insert(all_n.end(), spec_only_n_list.begin(), spec_only_n_list.end());
  const auto levels = ParseList<int32_t>(absl::GetFlag(FLAGS_levels));
  const auto etas = ParseList<double>(absl::GetFlag(FLAGS_etas));
  const auto lambdas = ParseList<double>(absl::GetFlag(FLAGS_lambdas));
  const int64_t num_test = absl::GetFlag(FLAGS_test_points);
  const double noise = absl::GetFlag(FLAGS_noise);
  const std::string out_dir = absl::GetFlag(FLAGS_out_dir);
  const auto generators = AllSignFlipGenerators(dim);
  const auto started = Clock::now();

  auto elements = EnumerateOrSampleTorusGroup(generators, dim, absl::GetFlag(FLAGS_id_max_elements),
                                              absl::GetFlag(FLAGS_id_random_words), 40, 12345);
  if (!elements.ok()) {
    std::fprintf(stderr, "%s\n", std::string(elements.status().message()).c_str());
    return 1;
  }
  std::printf("group: %zu elements (%s)\n", elements->elements.size(), elements->method.c_str());

  // Encoders: one per distinct level (the same for every n and seed).
  const int32_t ridge_level = absl::GetFlag(FLAGS_ridge_level);
  std::vector<int32_t> encoder_levels = levels;
  if (std::find(levels.begin(), levels.end(), ridge_level) == levels.end()) {
    encoder_levels.push_back(ridge_level);
  }
  std::vector<std::unique_ptr<SpectralEncoder>> encoders;
  std::vector<std::string> encoder_names;
  for (int32_t level : encoder_levels) {
    SpectralEncoderOptions o;
    o.dim = dim;
    o.budget = BudgetForLevel(dim, level);
    o.generators = generators;
    auto enc = SpectralEncoder::Build(o);
    if (!enc.ok()) {
      std::fprintf(stderr, "%s\n", std::string(enc.status().message()).c_str());
      return 1;
    }
    encoder_names.push_back(absl::StrCat("D=", (*enc)->info().num_basis_enumerated,
                                         " (level<=", level, ", ", (*enc)->d_out(), " invariant)"));
    encoders.push_back(*std::move(enc));
  }
  const double ridge_lambda = absl::GetFlag(FLAGS_ridge_lambda);

  std::map<Row, std::map<int64_t, Stats>> results;
  for (int64_t n : absl::GetFlag(FLAGS_accuracy) ? all_n : std::vector<int64_t>{}) {
    const bool run_krr = std::find(n_list.begin(), n_list.end(), n) != n_list.end();
    for (int32_t seed = 1; seed <= seeds; ++seed) {
      const Data train = Sample(dim, n, Rng::ForStream(seed, 1000 + n), noise);
      const Data test = Sample(dim, num_test, Rng::ForStream(seed, 1), 0.0);
      const int64_t num_val = absl::GetFlag(FLAGS_validation_points);
      const Data val = Sample(dim, num_val, Rng::ForStream(seed, 2), noise);
      // Spectral estimators: every variant on one encoder shares one
      // discrepancy pass (the features of the transformed points).
      for (size_t e = 0; e < encoders.size(); ++e) {
        const SpectralEncoder& enc = *encoders[e];
        const int32_t level = encoder_levels[e];
        struct Variant {
          std::string method, param;
          Eigen::VectorXd w;
          double fit_s;
        };
        std::vector<Variant> variants;
        const bool in_levels = std::find(levels.begin(), levels.end(), level) != levels.end();
        for (int kind = 0; kind < 4; ++kind) {
          if (kind < 2 && !in_levels) continue;
          const auto t0 = Clock::now();
          absl::StatusOr<Eigen::VectorXd> c =
              kind == 3 ? FitTrainerDefault(enc, n, train.x.data(), train.y.data(), num_val,
                                            val.x.data(), val.y.data())
              : kind == 2
                  ? FitInvariantRidge(enc, n, train.x.data(), train.y.data(), ridge_lambda)
                  : FitSpecAvg(enc, n, train.x.data(), train.y.data(), SpecAvgOptions{kind == 1});
          const double fit_s = Seconds(t0);
          if (!c.ok()) {
            std::fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
            return 1;
          }
          const char* names[] = {"spec_avg", "spec_avg_centered", "spec_rls", "spec_default"};
          std::string param = encoder_names[e];
          if (kind == 2) param += absl::StrCat(" lambda=", ridge_lambda);
          variants.push_back({names[kind], param, *std::move(c), fit_s});
        }
        const int64_t num_v = static_cast<int64_t>(variants.size());
        Eigen::MatrixXd w(enc.d_out(), num_v);
        for (int64_t v = 0; v < num_v; ++v) w.col(v) = variants[v].w;
        const BatchPredictor predict = [&](int64_t m, const float* px, float* py) {
          Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> f(m, enc.d_out());
          enc.EncodeDouble(m, px, f.data());
          const Eigen::MatrixXd out = f * w;
          for (int64_t r = 0; r < m; ++r) {
            for (int64_t v = 0; v < num_v; ++v) py[r * num_v + v] = static_cast<float>(out(r, v));
          }
        };
        std::vector<float> pred(num_test * num_v);
        predict(num_test, test.x.data(), pred.data());
        auto ids =
            MeasureInvarianceDiscrepancies(predict, num_v, dim, num_test, test.x.data(), *elements);
        if (!ids.ok()) return 1;
        for (int64_t v = 0; v < num_v; ++v) {
          auto residual =
              GeneratorResidual(enc.tensors().basis, generators, enc.ExpandToBasis(variants[v].w));
          if (!residual.ok()) return 1;
          Stats& s = results[{variants[v].method, variants[v].param, level, enc.d_out()}][n];
          s.mse.push_back(Mse(pred, test.f, num_v, v));
          s.id_max.push_back((*ids)[v].max_abs);
          s.id_rel.push_back((*ids)[v].relative_max);
          s.fit_seconds.push_back(variants[v].fit_s);
          s.residual.push_back(*residual);
          if (variants[v].method == "spec_avg") {
            const CoefficientCheck check = CheckAgainstFourier(enc, variants[v].w);
            s.scale.push_back(check.scale);
            s.constant.push_back(check.constant);
          }
        }
      }
      // KRR: one kernel matrix per η, every λ.
      for (double eta : run_krr ? etas : std::vector<double>{}) {
        const auto t0 = Clock::now();
        auto krr = VonMisesKrr::Fit(dim, n, train.x.data(), train.y.data(), eta, lambdas);
        const double fit_s = Seconds(t0);
        if (!krr.ok()) {
          std::fprintf(stderr, "%s\n", std::string(krr.status().message()).c_str());
          return 1;
        }
        const int64_t models = krr->num_models();
        std::vector<float> pred(num_test * models);
        krr->Predict(num_test, test.x.data(), pred.data());
        const VonMisesKrr& model = *krr;
        auto ids = MeasureInvarianceDiscrepancies(
            [&](int64_t m, const float* px, float* py) { model.Predict(m, px, py); }, models, dim,
            num_test, test.x.data(), *elements);
        if (!ids.ok()) return 1;
        for (int64_t m = 0; m < models; ++m) {
          Stats& s = results[{"krr", absl::StrCat("eta=", eta, " lambda=", lambdas[m])}][n];
          s.mse.push_back(Mse(pred, test.f, models, m));
          s.id_max.push_back((*ids)[m].max_abs);
          s.id_rel.push_back((*ids)[m].relative_max);
          s.fit_seconds.push_back(fit_s / models);
        }
      }
    }
    std::printf("n=%lld done at %.1f s\n", static_cast<long long>(n), Seconds(started));
    std::fflush(stdout);
  }

  // Fit-time tables.
  TimingOptions timing_options;
  timing_options.level = absl::GetFlag(FLAGS_timing_level);
  timing_options.n = absl::GetFlag(FLAGS_timing_n);
  timing_options.reps = absl::GetFlag(FLAGS_timing_reps);
  std::vector<TimingRow> by_dimension, by_generators;
  if (absl::GetFlag(FLAGS_timing)) {
    by_dimension =
        TimeGroupsByDimension(ParseList<int32_t>(absl::GetFlag(FLAGS_timing_dims)), timing_options);
    by_generators = TimeByGeneratorCount(absl::GetFlag(FLAGS_sweep_dim), timing_options);
  }

  TorusReportInputs report;
  report.dim = dim;
  report.seeds = seeds;
  report.noise = noise;
  report.num_test = num_test;
  report.num_validation = absl::GetFlag(FLAGS_validation_points);
  report.ridge_lambda = ridge_lambda;
  report.num_generators = static_cast<int64_t>(generators.size());
  report.n_list = n_list;
  report.all_n = all_n;
  report.elements_count = static_cast<int64_t>(elements->elements.size());
  report.elements_method = elements->method;
  report.elements_exhaustive = elements->exhaustive;
  report.timing = timing_options;
  report.sweep_dim = absl::GetFlag(FLAGS_sweep_dim);
  report.command = command;
  report.out_dir = out_dir;
  if (absl::GetFlag(FLAGS_accuracy)) {
    auto moments = MeasureSecondMoment(dim, absl::GetFlag(FLAGS_moment_level), generators,
                                       absl::GetFlag(FLAGS_moment_points));
    if (!moments.ok()) {
      std::fprintf(stderr, "%s\n", std::string(moments.status().message()).c_str());
      return 1;
    }
    report.moments = *moments;
  }
  report.total_seconds = Seconds(started);
  const std::string console = WriteTorusReport(report, results, by_dimension, by_generators);
  std::printf(
      "wrote %s/torus.md, torus.csv, torus_timing.csv, torus_curves.dat, torus.gp "
      "(%.0f s)\n",
      out_dir.c_str(), Seconds(started));
  std::printf("%s", console.c_str());
  return 0;
}

}  // namespace
}  // namespace invariant

int main(int argc, char** argv) {
  std::string command = "research/repro/torus.sh";
  absl::ParseCommandLine(argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--out_dir", 0) != 0) command += " " + a;
  }
  return invariant::Run(command);
}
