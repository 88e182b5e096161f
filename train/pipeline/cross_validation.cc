#include "train/pipeline/cross_validation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/metrics.h"

namespace invariant::train {
namespace {

// One round: its solver (kept while the grid may still grow) and the
// validation score of every λ tried.
struct Round {
  int test = 0;
  int validation = 0;
  int64_t train_rows = 0;
  std::unique_ptr<RidgeSolver> solver;
  std::map<double, double> scores;  // λ → accuracy or mean squared error
};

// The best λ of a λ → score map (BestLambdaIndex's rule: ties to the larger λ).
double BestLambda(const std::map<double, double>& scores, RlsTask task) {
  std::vector<double> lambdas, values;
  for (const auto& [lambda, score] : scores) {
    lambdas.push_back(lambda);
    values.push_back(score);
  }
  return lambdas[static_cast<size_t>(BestLambdaIndex(lambdas, values, task))];
}

absl::Status Score(Round& round, const FoldRows& validation, const std::vector<double>& lambdas,
                   RlsTask task) {
  // Largest λ first (an iterative solver warm-starts down the grid).
  std::vector<double> order = lambdas;
  std::sort(order.begin(), order.end(), std::greater<double>());
  ASSIGN_OR_RETURN(LinearModelSelection sel,
                   ChooseLambda(*round.solver, order, validation.phi, validation.y, task));
  for (size_t i = 0; i < sel.curve.lambdas.size(); ++i) {
    round.scores[sel.curve.lambdas[i]] = sel.curve.scores[i];
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, double>> TestMetrics(const LinearModel& model,
                                                          const FoldRows& test, RlsTask task) {
  ASSIGN_OR_RETURN(FloatMatrix scores, ApplyLinearModel(model, test.phi));
  std::map<std::string, double> m;
  if (task == RlsTask::kClassification) {
    ASSIGN_OR_RETURN(m["accuracy"], Accuracy(ArgmaxRows(scores), ArgmaxRows(test.y)));
  } else {
    ASSIGN_OR_RETURN(m["rmse"], RootMeanSquaredError(scores, test.y));
    ASSIGN_OR_RETURN(m["mae"], MeanAbsoluteError(scores, test.y));
  }
  return m;
}

// The round's own λ (best on its validation fold), its model and test metrics.
absl::StatusOr<FoldResult> FinishRound(const Round& round, const std::vector<FoldRows>& folds,
                                       RlsTask task) {
  FoldResult r;
  r.train_rows = round.train_rows;
  r.validation_rows = folds[static_cast<size_t>(round.validation)].phi.rows();
  r.test_rows = folds[static_cast<size_t>(round.test)].phi.rows();
  r.lambda = BestLambda(round.scores, task);
  ASSIGN_OR_RETURN(LinearModel model, round.solver->SolveFinal(r.lambda));
  ASSIGN_OR_RETURN(r.test_metrics,
                   TestMetrics(model, folds[static_cast<size_t>(round.test)], task));
  return r;
}

// λ → the score averaged over the rounds (every round has every λ).
std::map<double, double> MeanScores(const std::vector<Round>& rounds) {
  std::map<double, double> mean;
  for (const Round& r : rounds) {
    for (const auto& [lambda, score] : r.scores) {
      mean[lambda] += score / static_cast<double>(rounds.size());
    }
  }
  return mean;
}

}  // namespace

absl::StatusOr<CrossValidationResult> CrossValidate(const std::vector<FoldRows>& folds,
                                                    std::vector<double> grid, bool extend_grid,
                                                    RlsTask task,
                                                    const SolverFactory& make_solver) {
  const int k = static_cast<int>(folds.size());
  if (k < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("cross-validation needs at least 3 folds (test, validation, train), got ", k));
  }
  for (int f = 0; f < k; ++f) {
    if (folds[static_cast<size_t>(f)].phi.rows() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("cross-validation: fold ", f, " is empty"));
    }
  }
  if (grid.empty()) return absl::InvalidArgumentError("cross-validation: empty lambda grid");
  std::sort(grid.begin(), grid.end());
  CrossValidationResult out;
  out.folds.resize(static_cast<size_t>(k));
  std::vector<Round> rounds(static_cast<size_t>(k));
  for (int f = 0; f < k; ++f) {
    Round& round = rounds[static_cast<size_t>(f)];
    round.test = f;
    round.validation = (f + 1) % k;
    std::optional<GramAccumulator> train;
    for (int g = 0; g < k; ++g) {
      if (g == round.test || g == round.validation) continue;
      if (!train.has_value()) {
        train = folds[static_cast<size_t>(g)].sums;
      } else {
        RETURN_IF_ERROR(train->Merge(folds[static_cast<size_t>(g)].sums));
      }
    }
    round.train_rows = train->count();
    ASSIGN_OR_RETURN(round.solver, make_solver(*train));
    train.reset();
    RETURN_IF_ERROR(Score(round, folds[static_cast<size_t>(round.validation)], grid, task));
    if (!extend_grid) {  // the grid is final: finish now and free the solver
      ASSIGN_OR_RETURN(out.folds[static_cast<size_t>(f)], FinishRound(round, folds, task));
      round.solver.reset();
    }
  }
  std::map<double, double> mean = MeanScores(rounds);
  out.refit_lambda = BestLambda(mean, task);
  for (int i = 0; i < kMaxLambdaGridExtensions && extend_grid; ++i) {
    const bool low = out.refit_lambda <= mean.begin()->first;
    const bool high = out.refit_lambda >= mean.rbegin()->first;
    if (mean.size() < 2 || (!low && !high)) break;
    const double next = low ? mean.begin()->first / 10 : mean.rbegin()->first * 10;
    for (int f = 0; f < k; ++f) {
      Round& round = rounds[static_cast<size_t>(f)];
      RETURN_IF_ERROR(Score(round, folds[static_cast<size_t>(round.validation)], {next}, task));
    }
    mean = MeanScores(rounds);
    out.refit_lambda = BestLambda(mean, task);
  }
  if (extend_grid) {
    for (int f = 0; f < k; ++f) {
      ASSIGN_OR_RETURN(out.folds[static_cast<size_t>(f)],
                       FinishRound(rounds[static_cast<size_t>(f)], folds, task));
      rounds[static_cast<size_t>(f)].solver.reset();
    }
  }
  for (const auto& [lambda, score] : mean) {
    out.mean_curve.emplace_back(lambda,
                                task == RlsTask::kClassification ? score : std::sqrt(score));
  }
  for (const auto& [name, unused] : out.folds[0].test_metrics) {
    double sum = 0, sq = 0;
    for (const FoldResult& r : out.folds) sum += r.test_metrics.at(name);
    const double m = sum / k;
    for (const FoldResult& r : out.folds)
      sq += (r.test_metrics.at(name) - m) * (r.test_metrics.at(name) - m);
    out.mean[name] = m;
    out.stddev[name] = std::sqrt(sq / (k - 1));
  }
  // The refit on every row at λ*.
  GramAccumulator all = folds[0].sums;
  for (int g = 1; g < k; ++g) RETURN_IF_ERROR(all.Merge(folds[static_cast<size_t>(g)].sums));
  out.refit_rows = all.count();
  ASSIGN_OR_RETURN(std::unique_ptr<RidgeSolver> solver, make_solver(all));
  ASSIGN_OR_RETURN(out.refit, solver->SolveFinal(out.refit_lambda));
  return out;
}

}  // namespace invariant::train
