#include "train/pipeline/solve.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/ridge.h"
#include "core/rls/ridge_band.h"
#include "core/rls/ridge_cg.h"

namespace invariant::train {
namespace {

HeadSolver ChooseCgSource(const v1::LearnerConfig& l, int64_t features, int64_t rows) {
  if (rows == 0 || l.cg().source() == v1::LearnerConfig::ConjugateGradient::SOURCE_GRAM) {
    return HeadSolver::kCgGram;
  }
  if (l.cg().source() == v1::LearnerConfig::ConjugateGradient::SOURCE_ROWS) {
    return HeadSolver::kCgRows;
  }
  return features > 2 * rows ? HeadSolver::kCgRows : HeadSolver::kCgGram;
}

ConjugateGradientOptions CgOptions(const v1::LearnerConfig& l) {
  ConjugateGradientOptions cg;  // config.cc filled the defaults in
  cg.tolerance = l.cg().tolerance();
  cg.max_iterations = l.cg().max_iterations();
  cg.preconditioner_rank = l.cg().preconditioner_rank();
  cg.selection_tolerance = l.cg().selection_tolerance();
  return cg;
}

// The CG solves behind a validation curve (cached by the solver, so this
// costs no iterations), and a warning for any λ that did not converge.
void ReportCgSolves(TrainReport& report, const RidgeSolver& solver,
                    const std::vector<double>& lambdas) {
  for (double lambda : lambdas) {
    absl::StatusOr<RidgeWeights> w = solver.SolveWeights(lambda);
    if (!w.ok()) continue;
    report.cg_solves.push_back({lambda, w->iterations, w->relative_residual});
    if (!w->converged) {
      const std::string warning =
          absl::StrCat("conjugate gradients stopped at lambda ", lambda, " after ", w->iterations,
                       " iterations with relative residual ", w->relative_residual,
                       " (above learner.cg.tolerance): raise learner.cg.max_iterations or "
                       "preconditioner_rank, or use another ridge_solver");
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
      report.warnings.push_back(warning);
    }
  }
}

// −1 when λ is the smallest of a grid of two or more values, +1 the largest, else 0.
int LambdaGridEnd(double lambda, const std::vector<double>& grid) {
  if (grid.size() < 2) return 0;
  if (lambda <= *std::min_element(grid.begin(), grid.end())) return -1;
  if (lambda >= *std::max_element(grid.begin(), grid.end())) return 1;
  return 0;
}

}  // namespace

HeadSolver ChooseHeadSolver(const v1::LearnerConfig& l, int64_t features, int64_t rows) {
  switch (l.ridge_solver()) {
    case v1::LearnerConfig::RIDGE_SOLVER_EIGEN:
      return HeadSolver::kEigen;
    case v1::LearnerConfig::RIDGE_SOLVER_CHOLESKY:
      return HeadSolver::kCholesky;
    case v1::LearnerConfig::RIDGE_SOLVER_CG:
      return ChooseCgSource(l, features, rows);
    case v1::LearnerConfig::RIDGE_SOLVER_BAND:
      return HeadSolver::kBand;
    case v1::LearnerConfig::RIDGE_SOLVER_DUAL_BAND:
      // The dual's kernel is N × N: only smaller than the Gram when N < D.
      return rows > 0 && rows < features ? HeadSolver::kDualBand : HeadSolver::kBand;
    default: {
      if (features > kConjugateGradientAboveFeatures) return ChooseCgSource(l, features, rows);
      if (rows > 0 &&
          static_cast<double>(rows) <= kDualBandMaxRowsPerFeature * static_cast<double>(features)) {
        return HeadSolver::kDualBand;
      }
      // An empty grid is config.cc's default of nine λ.
      const int64_t lambdas = l.lambda_grid_size() == 0 ? 9 : l.lambda_grid_size();
      if (lambdas >= kBandFromLambdas || l.extend_lambda_grid()) return HeadSolver::kBand;
      return features > kCholeskyAboveFeatures ? HeadSolver::kCholesky : HeadSolver::kEigen;
    }
  }
}

const char* HeadSolverName(HeadSolver s) {
  switch (s) {
    case HeadSolver::kEigen:
      return "eigen";
    case HeadSolver::kCholesky:
      return "cholesky";
    case HeadSolver::kCgGram:
      return "cg_gram";
    case HeadSolver::kBand:
      return "band";
    case HeadSolver::kDualBand:
      return "dual_band";
    default:
      return "cg_rows";
  }
}

namespace {

// A solver from sums for `kind` (not kCgRows or kDualBand), consuming them:
// the Gram's storage becomes the solver's, one D × D matrix fewer at the peak.
absl::StatusOr<std::unique_ptr<RidgeSolver>> MakeGramSolver(HeadSolver kind,
                                                            const ConjugateGradientOptions& cg,
                                                            GramAccumulator&& sums) {
  switch (kind) {
    case HeadSolver::kCholesky:
      return MakeCholeskyRidgeSolver(std::move(sums));
    case HeadSolver::kEigen:
      return MakePrimalRidgeSolver(std::move(sums));
    case HeadSolver::kBand:
    case HeadSolver::kDualBand:  // from sums there is only the primal
      return MakeBandRidgeSolver(std::move(sums));
    default:
      return MakeConjugateGradientRidgeSolver(std::move(sums), {}, cg);
  }
}

}  // namespace

SolverFactory GramSolverFactory(HeadSolver kind, const v1::LearnerConfig& l) {
  const ConjugateGradientOptions cg = CgOptions(l);
  return [kind, cg](const GramAccumulator& sums) {
    return MakeGramSolver(kind, cg, GramAccumulator(sums));
  };
}

void WarnAtGridEnd(TrainReport& report, const std::vector<double>& grid) {
  const int end = LambdaGridEnd(report.lambda, grid);
  if (end == 0) return;
  const std::string warning = absl::StrCat(
      "lambda ", report.lambda, " is the ", end < 0 ? "smallest" : "largest",
      " value of learner.lambda_grid: the best lambda may lie beyond it; widen the grid or set "
      "learner.extend_lambda_grid");
  std::fprintf(stderr, "warning: %s\n", warning.c_str());
  report.warnings.push_back(warning);
}

// Stage solve for RIDGE and SPEC_AVG: the head over the features. Frees the
// training rows of `set` once a CG solver has copied them. SPEC_AVG's
// default estimator, SPEC_AVG_LEAST_SQUARES, is the ridge solve below on the
// invariant features; SPEC_AVG_ALGORITHM1 is the literal average here.
absl::StatusOr<LinearModel> SolveHead(
    const v1::LearnerConfig& l, int64_t features, RlsTask task, TrainingSet& set,
    const std::function<absl::StatusOr<ValidationRows>()>& validation, TrainReport& report) {
  if (l.kind() == v1::LearnerConfig::SPEC_AVG &&
      l.spec_avg_estimator() == v1::LearnerConfig::SPEC_AVG_ALGORITHM1) {
    report.solver = "spec_avg";
    const GramAccumulator& acc = *set.sums;
    // Spec-Avg (Algorithm 1): f̂ = (1/n) Σ y_i ψ(x_i) over the invariant
    // features, which is ΦᵀY / N; no bias (feature 0 is the constant).
    // With center_targets the constant feature's coefficient is ȳ and the
    // others come from y − ȳ: Σ (y_i − ȳ) φ(x_i) = ΦᵀY − Σφ · ȳ.
    const double n = static_cast<double>(acc.count());
    Eigen::MatrixXd w = acc.phi_t_y() / n;
    if (l.center_targets()) {
      const Eigen::RowVectorXd y_mean = acc.y_sum().transpose() / n;
      w -= (acc.phi_sum() / n) * y_mean;
      w.row(0) = y_mean;  // feature 0 is the constant function 1
    }
    LinearModel m;
    m.weights = FloatMatrix::FromEigen(w);
    m.bias = FloatMatrix::Zeros(1, m.weights.cols());
    return m;
  }
  // Without sums the rows were kept for one of the two solvers that take
  // them: the dual band when it is the choice for these rows, else CG.
  HeadSolver kind = HeadSolver::kCgRows;
  if (set.sums.has_value()) {
    kind = ChooseHeadSolver(l, features, /*rows=*/0);
  } else {
    int64_t rows = 0;
    for (const FloatMatrix& b : set.phi) rows += b.rows();
    if (ChooseHeadSolver(l, features, rows) == HeadSolver::kDualBand) kind = HeadSolver::kDualBand;
  }
  report.solver = HeadSolverName(kind);
  std::unique_ptr<RidgeSolver> solver;
  if (kind == HeadSolver::kCgRows) {
    ASSIGN_OR_RETURN(solver,
                     MakeRowsConjugateGradientRidgeSolver(set.phi, set.y, {}, CgOptions(l)));
  } else if (kind == HeadSolver::kDualBand) {
    ASSIGN_OR_RETURN(solver, MakeDualBandRidgeSolver(set.phi, set.y));
  } else {
    // The sums are not needed past this point: the solver takes their Gram's
    // storage (the band and CG paths hold one D × D matrix at the peak).
    ASSIGN_OR_RETURN(solver, MakeGramSolver(kind, CgOptions(l), std::move(*set.sums)));
    set.sums.reset();
  }
  // A rows solver keeps its own centred double copy: the float rows can go.
  set.phi.clear();
  set.y.clear();
  ASSIGN_OR_RETURN(ValidationRows val, validation());
  std::vector<double> grid(l.lambda_grid().begin(), l.lambda_grid().end());
  // Largest λ first: CG then warm-starts each λ from a better-conditioned one.
  std::sort(grid.begin(), grid.end(), std::greater<double>());
  ASSIGN_OR_RETURN(LinearModelSelection sel, ChooseLambda(*solver, grid, val.phi, val.y, task));
  // learner.extend_lambda_grid: a decade beyond whichever end was chosen,
  // until the choice is inside the grid (at most kMaxLambdaGridExtensions decades).
  for (int i = 0; i < kMaxLambdaGridExtensions && l.extend_lambda_grid() &&
                  LambdaGridEnd(sel.curve.best_lambda(), grid) != 0;
       ++i) {
    const int end = LambdaGridEnd(sel.curve.best_lambda(), grid);
    grid.push_back(end < 0 ? *std::min_element(grid.begin(), grid.end()) / 10
                           : *std::max_element(grid.begin(), grid.end()) * 10);
    std::sort(grid.begin(), grid.end(), std::greater<double>());
    ASSIGN_OR_RETURN(sel, ChooseLambda(*solver, grid, val.phi, val.y, task));
  }
  const bool regression = sel.curve.task != RlsTask::kClassification;
  report.validation_metric = regression ? "rmse" : "accuracy";
  for (size_t i = 0; i < sel.curve.lambdas.size(); ++i) {
    const double score = sel.curve.scores[i];
    report.validation_curve.emplace_back(sel.curve.lambdas[i],
                                         regression ? std::sqrt(score) : score);
  }
  std::sort(report.validation_curve.begin(), report.validation_curve.end());
  report.lambda = sel.curve.best_lambda();
  WarnAtGridEnd(report, grid);
  if (kind == HeadSolver::kCgRows || kind == HeadSolver::kCgGram) {
    ReportCgSolves(report, *solver, sel.curve.lambdas);
  }
  return sel.model;
}

}  // namespace invariant::train
