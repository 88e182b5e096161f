// cross_validation.h: K-fold cross-validation of a ridge head as the papers
// ran it (Raj et al. 2017 on QM7: 5 folds, λ by inner cross-validation,
// training on 80 %), and the λ of the model a k-fold run writes
// (split { k_fold: K }).
//
// The rows are cut into K disjoint folds (data_plan.h: random or stratified).
// Round f (f = 0 … K−1):
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
// Cost: an inner solve on the folds other than {f, g} serves both round f
// (validating on g) and round g (validating on f), so the inner
// cross-validations take K(K−1)/2 solver factorisations; the round refits
// K more, and the written model one: 16 for K = 5. One solver and one merged
// sum are alive at a time (plus the folds' rows and sums).
//
// The written model (refit) trains on all N rows at λ*, the λ best on the K
// rounds' inner curves averaged; ties go to the larger λ. With extend_grid
// the grid grows by decades beyond whichever end that averaged curve chose,
// up to kMaxLambdaGridExtensions, as for an ordinary run; the extension is
// scored in one more pass over the K(K−1)/2 inner solves, and every round
// then chooses on the grown grid.
//
// Thread-safety: CrossValidate is a pure function of its arguments (the
// solvers use the process thread pool).
#ifndef INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_
#define INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/lambda_selection.h"
#include "core/rls/linear_model.h"
#include "core/rls/ridge.h"

namespace invariant::train {

// The featurized rows of one fold: phi (n_f × D) and their targets y
// (n_f × T: one-vs-all ±1 rows for classification, the regression targets
// otherwise), with sums = their GramAccumulator.
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
};

using SolverFactory =
    std::function<absl::StatusOr<std::unique_ptr<RidgeSolver>>(const GramAccumulator&)>;

// Runs the K rounds and the refit. `folds` are the K ≥ 3 folds (each with at
// least one row); `grid` the λ grid (finite, > 0). Errors: INVALID_ARGUMENT
// for fewer than 3 folds, an empty fold or an empty grid; the solver's errors.
absl::StatusOr<CrossValidationResult> CrossValidate(const std::vector<FoldRows>& folds,
                                                    std::vector<double> grid, bool extend_grid,
                                                    RlsTask task, const SolverFactory& make_solver);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_
