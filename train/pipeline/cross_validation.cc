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

using LambdaCurve = std::map<double, double>;  // λ → accuracy or mean squared error

// The best λ of a curve (BestLambdaIndex's rule: ties to the larger λ).
double BestLambda(const LambdaCurve& curve, RlsTask task) {
  std::vector<double> lambdas, values;
  for (const auto& [lambda, score] : curve) {
    lambdas.push_back(lambda);
    values.push_back(score);
  }
  return lambdas[static_cast<size_t>(BestLambdaIndex(lambdas, values, task))];
}

// `curve` on the λ of `grid` (each of which it holds).
LambdaCurve On(const LambdaCurve& curve, const std::set<double>& grid) {
  LambdaCurve out;
  for (double lambda : grid) out[lambda] = curve.at(lambda);
  return out;
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

// The kMaxLambdaGridExtensions decades beyond the low (or high) end of
// `grid`, nearest first.
std::vector<double> Decades(const std::set<double>& grid, bool low) {
  std::vector<double> out;
  double next = low ? *grid.begin() : *grid.rbegin();
  for (int i = 0; i < kMaxLambdaGridExtensions; ++i) {
    next = low ? next / 10 : next * 10;
    out.push_back(next);
  }
  return out;
}

std::vector<std::pair<double, double>> Reported(const LambdaCurve& curve, RlsTask task) {
  std::vector<std::pair<double, double>> out;
  for (const auto& [lambda, score] : curve) {
    out.emplace_back(lambda, task == RlsTask::kClassification ? score : std::sqrt(score));
  }
  return out;
}

// The rounds' inner curves on `grid`, averaged.
LambdaCurve MeanCurve(const std::vector<RoundOutcome>& rounds, const std::set<double>& grid) {
  LambdaCurve mean;
  const double k = static_cast<double>(rounds.size());
  for (const RoundOutcome& round : rounds) {
    for (const auto& [lambda, score] : On(round.curve, grid)) mean[lambda] += score / k;
  }
  return mean;
}

absl::Status CheckFolds(const std::vector<FoldRows>& folds, const std::vector<double>& grid) {
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
  return absl::OkStatus();
}

// The inner cross-validation of round out->round: for every other fold, a
// solver on the rest, each λ of base and extra scored on that fold, largest
// λ first (an iterative solver warm-starts down the grid). A λ of base that
// fails is an error; an extension decade that fails anywhere leaves the curve.
absl::Status ScoreInnerFolds(const std::vector<FoldRows>& folds, const std::set<double>& base,
                             const std::set<double>& extra, RlsTask task,
                             const SolverFactory& make_solver, RoundOutcome* out) {
  const int k = static_cast<int>(folds.size());
  const int f = out->round;
  std::vector<double> order(base.begin(), base.end());
  order.insert(order.end(), extra.begin(), extra.end());
  std::sort(order.begin(), order.end(), std::greater<double>());
  std::set<double> failed;
  const double inner_folds = static_cast<double>(k - 1);
  for (int g = 0; g < k; ++g) {
    if (g == f) continue;
    const FoldRows& validation = folds[static_cast<size_t>(g)];
    out->inner_validation_rows.push_back(validation.phi.rows());
    std::unique_ptr<RidgeSolver> solver;
    {
      ASSIGN_OR_RETURN(GramAccumulator train, SumExcept(folds, f, g));
      out->inner_train_rows.push_back(train.count());
      ASSIGN_OR_RETURN(solver, make_solver(train));
    }
    for (double lambda : order) {
      absl::StatusOr<LinearModel> model = solver->Solve(lambda);
      if (!model.ok()) {
        if (base.count(lambda)) return model.status();
        failed.insert(lambda);
        continue;
      }
      ASSIGN_OR_RETURN(double score, Score(*model, validation, task));
      out->curve[lambda] += score / inner_folds;
    }
  }
  for (double lambda : failed) out->curve.erase(lambda);
  return absl::OkStatus();
}

// The λ a round may choose: its best on the grid and on every grid an
// extension can grow to (the grid and the first j decades beyond one end,
// each scored).
std::set<double> CandidateLambdas(const LambdaCurve& curve, const std::set<double>& base,
                                  const std::set<double>& extra, RlsTask task) {
  std::set<double> candidates = {BestLambda(On(curve, base), task)};
  if (extra.empty()) return candidates;
  for (bool low : {true, false}) {
    std::set<double> grown = base;
    for (double lambda : Decades(base, low)) {
      if (!curve.count(lambda)) break;
      grown.insert(lambda);
      candidates.insert(BestLambda(On(curve, grown), task));
    }
  }
  return candidates;
}

// Each candidate λ refit on every fold but round out->round's and applied to
// that test fold; a refit that fails is kept as its error.
absl::Status RefitCandidates(const std::vector<FoldRows>& folds, const std::set<double>& candidates,
                             const SolverFactory& make_solver, RoundOutcome* out) {
  const FoldRows& test = folds[static_cast<size_t>(out->round)];
  ASSIGN_OR_RETURN(GramAccumulator train, SumExcept(folds, out->round, -1));
  ASSIGN_OR_RETURN(std::unique_ptr<RidgeSolver> solver, make_solver(train));
  for (double lambda : candidates) {
    absl::StatusOr<LinearModel> model = solver->SolveFinal(lambda);
    if (!model.ok()) {
      out->refit_errors[lambda] = model.status();
      continue;
    }
    ASSIGN_OR_RETURN(FloatMatrix scores, ApplyLinearModel(*model, test.phi));
    out->refits[lambda] = RoundRefit{*std::move(model), std::move(scores)};
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RoundOutcome> CrossValidateRound(int f, const std::vector<FoldRows>& folds,
                                                const std::vector<double>& grid, bool extend_grid,
                                                RlsTask task, const SolverFactory& make_solver) {
  RETURN_IF_ERROR(CheckFolds(folds, grid));
  const int k = static_cast<int>(folds.size());
  if (f < 0 || f >= k) {
    return absl::InvalidArgumentError(
        absl::StrCat("cross-validation: round ", f, " of ", k, " folds"));
  }
  const std::set<double> base(grid.begin(), grid.end());
  std::set<double> extra;  // the decades an extension may add, both ends
  if (extend_grid && base.size() >= 2) {
    for (bool low : {true, false}) {
      for (double lambda : Decades(base, low)) extra.insert(lambda);
    }
  }
  RoundOutcome out;
  out.round = f;
  const FoldRows& test = folds[static_cast<size_t>(f)];
  out.test_rows = test.phi.rows();
  // Rows trained on are counted from the sums, which also hold a fold's
  // augmented copies (FoldRows).
  for (int g = 0; g < k; ++g) {
    if (g != f) out.train_rows += folds[static_cast<size_t>(g)].sums.count();
  }
  RETURN_IF_ERROR(ScoreInnerFolds(folds, base, extra, task, make_solver, &out));
  RETURN_IF_ERROR(
      RefitCandidates(folds, CandidateLambdas(out.curve, base, extra, task), make_solver, &out));
  out.test_y = test.y;
  return out;
}

absl::StatusOr<CrossValidationResult> CombineRounds(std::vector<RoundOutcome> rounds,
                                                    const std::vector<double>& grid,
                                                    bool extend_grid, RlsTask task) {
  const int k = static_cast<int>(rounds.size());
  if (k < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("cross-validation needs at least 3 rounds, got ", k));
  }
  if (grid.empty()) return absl::InvalidArgumentError("cross-validation: empty lambda grid");
  std::set<double> lambdas(grid.begin(), grid.end());
  // extend_grid: grow the grid by decades beyond the end the averaged curve
  // chooses, while it keeps choosing that end and every round scored the
  // decade (the walk an ordinary run makes one decade at a time).
  if (extend_grid && lambdas.size() >= 2) {
    const double best = BestLambda(MeanCurve(rounds, lambdas), task);
    const bool low = best <= *lambdas.begin();
    if (low || best >= *lambdas.rbegin()) {
      for (double lambda : Decades(lambdas, low)) {
        const double chosen = BestLambda(MeanCurve(rounds, lambdas), task);
        if (chosen != (low ? *lambdas.begin() : *lambdas.rbegin())) break;
        bool scored = true;
        for (const RoundOutcome& round : rounds) scored = scored && round.curve.count(lambda) > 0;
        if (!scored) break;
        lambdas.insert(lambda);
      }
    }
  }
  CrossValidationResult out;
  std::vector<FoldPredictions> predictions;
  for (RoundOutcome& round : rounds) {
    FoldResult r;
    const LambdaCurve curve = On(round.curve, lambdas);
    r.lambda = BestLambda(curve, task);
    r.inner_curve = Reported(curve, task);
    r.train_rows = round.train_rows;
    r.inner_train_rows = round.inner_train_rows;
    r.inner_validation_rows = round.inner_validation_rows;
    r.test_rows = round.test_rows;
    auto refit = round.refits.find(r.lambda);
    if (refit == round.refits.end()) {
      auto error = round.refit_errors.find(r.lambda);
      return error != round.refit_errors.end()
                 ? error->second
                 : absl::InternalError(absl::StrCat("cross-validation: round ", round.round,
                                                    " has no refit at lambda ", r.lambda));
    }
    r.model = std::move(refit->second.model);
    predictions.push_back(
        FoldPredictions{std::move(refit->second.test_scores), std::move(round.test_y)});
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
  out.test_predictions = std::move(predictions);
  const LambdaCurve mean = MeanCurve(rounds, lambdas);
  out.refit_lambda = BestLambda(mean, task);
  out.mean_curve = Reported(mean, task);
  return out;
}

absl::Status RefitOnAllRows(const GramAccumulator& all, const SolverFactory& make_solver,
                            CrossValidationResult& cv) {
  cv.refit_rows = all.count();
  ASSIGN_OR_RETURN(std::unique_ptr<RidgeSolver> solver, make_solver(all));
  ASSIGN_OR_RETURN(cv.refit, solver->SolveFinal(cv.refit_lambda));
  return absl::OkStatus();
}

absl::StatusOr<CrossValidationResult> CrossValidate(const std::vector<FoldRows>& folds,
                                                    std::vector<double> grid, bool extend_grid,
                                                    RlsTask task,
                                                    const SolverFactory& make_solver) {
  RETURN_IF_ERROR(CheckFolds(folds, grid));
  std::vector<RoundOutcome> rounds;
  for (int f = 0; f < static_cast<int>(folds.size()); ++f) {
    ASSIGN_OR_RETURN(RoundOutcome round,
                     CrossValidateRound(f, folds, grid, extend_grid, task, make_solver));
    rounds.push_back(std::move(round));
  }
  ASSIGN_OR_RETURN(CrossValidationResult out,
                   CombineRounds(std::move(rounds), grid, extend_grid, task));
  // The written model: every row at λ*.
  ASSIGN_OR_RETURN(GramAccumulator all, SumExcept(folds, -1, -1));
  RETURN_IF_ERROR(RefitOnAllRows(all, make_solver, out));
  return out;
}

}  // namespace invariant::train
