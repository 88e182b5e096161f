// cross_validation.h: K-fold cross-validation of a ridge head as the papers
// ran it (Raj et al. 2017 on QM7: 5 folds, λ by inner cross-validation,
// training on 80 %), and the λ of the model a k-fold run writes
// (split { k_fold: K } or leave_one_group_out).
//
// The rows are cut into K disjoint folds (data_plan.h: random, stratified or
// one per group). Round f (f = 0 … K−1):
//   1. chooses its λ_f by an inner (K−1)-fold cross-validation of the other
//      K−1 folds: for every fold g ≠ f, train on the K−2 folds other than f
//      and g and score the λ grid on fold g; λ_f is best on the K−1 inner
//      curves averaged (each inner fold weighs alike);
//   2. refits on all K−1 folds (every row but fold f's) at λ_f;
//   3. tests that refit on fold f.
// The K test folds partition the data, so every row is tested once, by a
// model that never saw it and whose λ never saw it either. The test metrics
// are given per round, as mean ± sample std over the rounds (K − 1 in the
// denominator), and pooled over all N rows (fold_metrics.h).
//
// Features per round. CrossValidateRound(f, folds, …) runs round f on folds
// featurized by round f's own feature map, one fitted on the K−1 training
// folds only (cv_rounds.h: centring statistics, templates and landmarks
// drawn from data never see fold f). Its inner cross-validation runs on
// those features, so the inner validation folds did inform round f's map
// (they are round f's training rows), fold f never. CombineRounds then fixes
// every λ_f, the test metrics and λ*; RefitOnAllRows fits the written model
// on the sums of all N rows featurized by the written model's map (fitted on
// all rows). CrossValidate(folds, …) is the same on one shared set of
// features (every round on the same folds: for callers whose features were
// not fitted on the rows, e.g. the tests).
//
// Cost per round: K−1 inner solver factorisations (one per inner fold) and
// one refit: K² for the K rounds (the rounds no longer share their inner
// solves, since their features differ), plus the written model's one: 26
// for K = 5. One solver and one merged sum are alive at a time (plus the
// folds' rows and sums, of one round).
//
// The written model (refit) trains on all N rows at λ*, the λ best on the K
// rounds' inner curves averaged; ties go to the larger λ. With extend_grid
// the grid grows by decades beyond whichever end that averaged curve chose,
// up to kMaxLambdaGridExtensions, as for an ordinary run, and every round
// then chooses on the grown grid. Since a round's features are gone before
// the averaged curve is known, every inner solve of a round with
// extend_grid also scores the kMaxLambdaGridExtensions decades beyond each
// end of the grid (2 × 8 more Solve calls per inner solve: cheap for the
// eigen and band solvers, a factorisation each for per-λ Cholesky), and the
// round refits at every λ it may end up choosing (one per grid the walk can
// grow to, at most 2 × 8 + 1; the test scores are kept, n_f × T each). A
// decade some inner solve fails to solve ends the extension there; a failing
// λ of the configured grid is an error.
//
// Thread-safety: every function here is a pure function of its arguments
// (the solvers use the process thread pool).
#ifndef INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_
#define INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/lambda_selection.h"
#include "core/rls/linear_model.h"
#include "core/rls/ridge.h"
#include "train/pipeline/fold_metrics.h"

namespace invariant::train {

// The featurized rows of one fold: phi (n_f × D) and their targets y
// (n_f × T: one-vs-all ±1 rows for classification, the regression targets
// otherwise), with sums = their GramAccumulator: what the fold contributes
// when it trains. The sums may hold more rows than phi: the fold's augmented
// copies (train/data/audio_augment.h), which train but are never scored
// (phi is what a validation or test fold is scored on). Rows trained on are
// counted from the sums.
struct FoldRows {
  FloatMatrix phi;
  FloatMatrix y;
  GramAccumulator sums;
};

struct FoldResult {
  int64_t train_rows = 0;  // the refit's: every row but the test fold's
  // The inner cross-validation: round j trains on inner_train_rows[j] rows
  // and validates on inner_validation_rows[j] (the K−1 folds in turn).
  std::vector<int64_t> inner_train_rows;
  std::vector<int64_t> inner_validation_rows;
  int64_t test_rows = 0;
  double lambda = 0;  // chosen by the inner cross-validation
  // The inner curve averaged over the K−1 inner folds ((λ, accuracy or
  // RMSE), ascending λ; RMSE is the square root of the mean of the inner
  // folds' mean squared errors).
  std::vector<std::pair<double, double>> inner_curve;
  LinearModel model;                           // the refit on the K−1 folds at lambda
  std::map<std::string, double> test_metrics;  // accuracy | rmse, mae
};

struct CrossValidationResult {
  std::vector<FoldResult> folds;
  std::map<std::string, double> mean;    // over the folds
  std::map<std::string, double> stddev;  // sample standard deviation over the folds (K − 1)
  std::map<std::string, double> pooled;  // over every test row of every round
  int64_t pooled_rows = 0;
  // λ* and the inner curves averaged over the rounds ((λ, accuracy or RMSE),
  // ascending λ).
  double refit_lambda = 0;
  std::vector<std::pair<double, double>> mean_curve;
  LinearModel refit;  // on all rows at refit_lambda
  int64_t refit_rows = 0;
  // Every round's test scores and targets (its refit on its test fold), in
  // round order: every row once, for the model page's pooled plots.
  std::vector<FoldPredictions> test_predictions;
};

using SolverFactory =
    std::function<absl::StatusOr<std::unique_ptr<RidgeSolver>>(const GramAccumulator&)>;

// Round f's refit on its K−1 training folds at one λ, and its scores on
// fold f (n_f × T).
struct RoundRefit {
  LinearModel model;
  FloatMatrix test_scores;
};

// What round f leaves once its features are gone (CrossValidateRound).
struct RoundOutcome {
  int round = 0;
  // The inner curve over every λ scored (the grid, and with extend_grid the
  // decades beyond both ends that every inner solve solved): λ → the mean
  // over the K−1 inner folds of the accuracy or mean squared error.
  std::map<double, double> curve;
  int64_t train_rows = 0;
  std::vector<int64_t> inner_train_rows;
  std::vector<int64_t> inner_validation_rows;
  int64_t test_rows = 0;
  // The refit at every λ the round may still choose, or why it failed.
  std::map<double, RoundRefit> refits;
  std::map<double, absl::Status> refit_errors;
  FloatMatrix test_y;  // fold f's targets
};

// Round f of K ≥ 3 folds (each with at least one row), all featurized by
// round f's feature map. Errors: INVALID_ARGUMENT for fewer than 3 folds, an
// empty fold, an empty grid or f out of range; the solver's errors.
absl::StatusOr<RoundOutcome> CrossValidateRound(int f, const std::vector<FoldRows>& folds,
                                                const std::vector<double>& grid, bool extend_grid,
                                                RlsTask task, const SolverFactory& make_solver);

// The K rounds, in fold order (the grid and extend_grid of every round):
// grows the grid (extend_grid), fixes each round's λ, model and test
// metrics, and λ* (refit_lambda, mean_curve). Leaves refit and refit_rows
// to RefitOnAllRows. Errors: INVALID_ARGUMENT for fewer than 3 rounds or an
// empty grid; a chosen λ's refit error.
absl::StatusOr<CrossValidationResult> CombineRounds(std::vector<RoundOutcome> rounds,
                                                    const std::vector<double>& grid,
                                                    bool extend_grid, RlsTask task);

// The written model: ridge on `all` (every row, featurized by the written
// model's map) at cv.refit_lambda, into cv.refit and cv.refit_rows.
absl::Status RefitOnAllRows(const GramAccumulator& all, const SolverFactory& make_solver,
                            CrossValidationResult& cv);

// Every round on the same folds, then the refit on all of them. `folds` are the K ≥ 3 folds (each
// with at least one row); `grid` the λ grid (finite, > 0). Errors: INVALID_ARGUMENT for fewer than
// 3 folds, an empty fold or an empty grid; the solver's errors.
absl::StatusOr<CrossValidationResult> CrossValidate(const std::vector<FoldRows>& folds,
                                                    std::vector<double> grid, bool extend_grid,
                                                    RlsTask task, const SolverFactory& make_solver);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_
