#include "train/pipeline/cross_validation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/metrics.h"
#include "train/pipeline/fold_metrics.h"

namespace invariant::train {
namespace {

using Curve = std::map<double, double>;  // λ → accuracy or mean squared error

// inner[f][g]: round f's inner curve validated on fold g (g ≠ f).
using InnerScores = std::vector<std::vector<Curve>>;

// The best λ of a curve (BestLambdaIndex's rule: ties to the larger λ).
double BestLambda(const Curve& curve, RlsTask task) {
  std::vector<double> lambdas, values;
  for (const auto& [lambda, score] : curve) {
    lambdas.push_back(lambda);
    values.push_back(score);
  }
  return lambdas[static_cast<size_t>(BestLambdaIndex(lambdas, values, task))];
}

// The sums of every fold but `skip_a` and `skip_b` (-1: none).
absl::StatusOr<GramAccumulator> SumExcept(const std::vector<FoldRows>& folds, int skip_a,
                                          int skip_b) {
  std::optional<GramAccumulator> sum;
  for (int g = 0; g < static_cast<int>(folds.size()); ++g) {
    if (g == skip_a || g == skip_b) continue;
    if (!sum.has_value()) {
      sum = folds[static_cast<size_t>(g)].sums;
    } else {
      RETURN_IF_ERROR(sum->Merge(folds[static_cast<size_t>(g)].sums));
    }
  }
  return *std::move(sum);
}

// The validation score of a model on a fold: accuracy, or mean squared error.
absl::StatusOr<double> Score(const LinearModel& model, const FoldRows& fold, RlsTask task) {
  ASSIGN_OR_RETURN(FloatMatrix scores, ApplyLinearModel(model, fold.phi));
  if (task == RlsTask::kClassification) {
    return Accuracy(ArgmaxRows(scores), ArgmaxRows(fold.y));
  }
  return MeanSquaredError(scores, fold.y);
}

// Scores `lambdas` on every inner split: the solve on the folds other than
// {f, g} validates round f on fold g and round g on fold f.
absl::Status ScoreInnerSplits(const std::vector<FoldRows>& folds,
                              const std::vector<double>& lambdas, RlsTask task,
                              const SolverFactory& make_solver, InnerScores& inner) {
  // Largest λ first (an iterative solver warm-starts down the grid).
  std::vector<double> order = lambdas;
  std::sort(order.begin(), order.end(), std::greater<double>());
  const int k = static_cast<int>(folds.size());
  for (int f = 0; f < k; ++f) {
    for (int g = f + 1; g < k; ++g) {
      std::unique_ptr<RidgeSolver> solver;
      {
        ASSIGN_OR_RETURN(GramAccumulator train, SumExcept(folds, f, g));
        ASSIGN_OR_RETURN(solver, make_solver(train));
      }
      for (double lambda : order) {
        ASSIGN_OR_RETURN(LinearModel model, solver->Solve(lambda));
        ASSIGN_OR_RETURN(inner[f][g][lambda], Score(model, folds[static_cast<size_t>(g)], task));
        ASSIGN_OR_RETURN(inner[g][f][lambda], Score(model, folds[static_cast<size_t>(f)], task));
      }
    }
  }
  return absl::OkStatus();
}

// Round f's inner curve on `grid`: the mean over its K−1 inner folds.
Curve RoundCurve(const InnerScores& inner, int f, const std::set<double>& grid) {
  Curve curve;
  const double n = static_cast<double>(inner.size() - 1);
  for (int g = 0; g < static_cast<int>(inner.size()); ++g) {
    if (g == f) continue;
    for (double lambda : grid) curve[lambda] += inner[f][g].at(lambda) / n;
  }
  return curve;
}

// The rounds' inner curves averaged.
Curve MeanCurve(const InnerScores& inner, const std::set<double>& grid) {
  Curve mean;
  const double k = static_cast<double>(inner.size());
  for (int f = 0; f < static_cast<int>(inner.size()); ++f) {
    for (const auto& [lambda, score] : RoundCurve(inner, f, grid)) mean[lambda] += score / k;
  }
  return mean;
}

std::vector<std::pair<double, double>> Reported(const Curve& curve, RlsTask task) {
  std::vector<std::pair<double, double>> out;
  for (const auto& [lambda, score] : curve) {
    out.emplace_back(lambda, task == RlsTask::kClassification ? score : std::sqrt(score));
  }
  return out;
}

// extend_grid: grows `grid` by decades beyond the end the averaged curve
// chose, while it keeps choosing that end (at most kMaxLambdaGridExtensions).
// The candidate decades are scored in one pass; the walk over them is the
// one an ordinary run makes one decade at a time.
absl::Status ExtendGrid(const std::vector<FoldRows>& folds, RlsTask task,
                        const SolverFactory& make_solver, InnerScores& inner,
                        std::set<double>& grid) {
  if (grid.size() < 2) return absl::OkStatus();
  const double best = BestLambda(MeanCurve(inner, grid), task);
  const bool low = best <= *grid.begin();
  if (!low && best < *grid.rbegin()) return absl::OkStatus();
  std::vector<double> decades;
  double next = low ? *grid.begin() : *grid.rbegin();
  for (int i = 0; i < kMaxLambdaGridExtensions; ++i) {
    next = low ? next / 10 : next * 10;
    decades.push_back(next);
  }
  RETURN_IF_ERROR(ScoreInnerSplits(folds, decades, task, make_solver, inner));
  for (double lambda : decades) {
    const double chosen = BestLambda(MeanCurve(inner, grid), task);
    if (chosen != (low ? *grid.begin() : *grid.rbegin())) break;
    grid.insert(lambda);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CrossValidationResult> CrossValidate(const std::vector<FoldRows>& folds,
                                                    std::vector<double> grid, bool extend_grid,
                                                    RlsTask task,
                                                    const SolverFactory& make_solver) {
  const int k = static_cast<int>(folds.size());
  if (k < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cross-validation needs at least 3 folds (a test fold and an inner cross-validation over "
        "at least two), got ",
        k));
  }
  for (int f = 0; f < k; ++f) {
    if (folds[static_cast<size_t>(f)].phi.rows() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("cross-validation: fold ", f, " is empty"));
    }
  }
  if (grid.empty()) return absl::InvalidArgumentError("cross-validation: empty lambda grid");
  std::set<double> lambdas(grid.begin(), grid.end());
  InnerScores inner(static_cast<size_t>(k), std::vector<Curve>(static_cast<size_t>(k)));
  RETURN_IF_ERROR(ScoreInnerSplits(folds, grid, task, make_solver, inner));
  if (extend_grid) RETURN_IF_ERROR(ExtendGrid(folds, task, make_solver, inner, lambdas));

  CrossValidationResult out;
  std::vector<FoldPredictions> predictions;
  int64_t n = 0;
  for (const FoldRows& fold : folds) n += fold.phi.rows();
  for (int f = 0; f < k; ++f) {
    const FoldRows& test = folds[static_cast<size_t>(f)];
    FoldResult r;
    const Curve curve = RoundCurve(inner, f, lambdas);
    r.lambda = BestLambda(curve, task);
    r.inner_curve = Reported(curve, task);
    r.test_rows = test.phi.rows();
    r.train_rows = n - r.test_rows;
    for (int g = 0; g < k; ++g) {
      if (g == f) continue;
      r.inner_validation_rows.push_back(folds[static_cast<size_t>(g)].phi.rows());
      r.inner_train_rows.push_back(r.train_rows - r.inner_validation_rows.back());
    }
    {
      ASSIGN_OR_RETURN(GramAccumulator train, SumExcept(folds, f, -1));
      ASSIGN_OR_RETURN(std::unique_ptr<RidgeSolver> solver, make_solver(train));
      ASSIGN_OR_RETURN(r.model, solver->SolveFinal(r.lambda));
    }
    ASSIGN_OR_RETURN(FloatMatrix scores, ApplyLinearModel(r.model, test.phi));
    predictions.push_back(FoldPredictions{std::move(scores), test.y});
    out.folds.push_back(std::move(r));
  }
  ASSIGN_OR_RETURN(FoldMetrics metrics, SummarizeFolds(predictions, task));
  for (int f = 0; f < k; ++f) {
    out.folds[static_cast<size_t>(f)].test_metrics = metrics.per_fold[static_cast<size_t>(f)];
  }
  out.mean = metrics.mean;
  out.stddev = metrics.stddev;
  out.pooled = metrics.pooled;
  out.pooled_rows = metrics.pooled_rows;
  const Curve mean = MeanCurve(inner, lambdas);
  out.refit_lambda = BestLambda(mean, task);
  out.mean_curve = Reported(mean, task);
  // The written model: every row at λ*.
  ASSIGN_OR_RETURN(GramAccumulator all, SumExcept(folds, -1, -1));
  out.refit_rows = all.count();
  ASSIGN_OR_RETURN(std::unique_ptr<RidgeSolver> solver, make_solver(all));
  ASSIGN_OR_RETURN(out.refit, solver->SolveFinal(out.refit_lambda));
  return out;
}

}  // namespace invariant::train
