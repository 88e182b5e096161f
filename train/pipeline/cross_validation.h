// cross_validation.h: K-fold cross-validation of a ridge head with an inner
// validation fold, and the λ of the final refit (split { k_fold: K }).
//
// The rows are cut into K disjoint folds (KFoldSplits, seeded). Round f
// (f = 0..K−1) tests on fold f, chooses λ on fold v = (f + 1) mod K (the
// inner validation split), and trains on the other K − 2 folds, whose sums
// are the merged per-fold GramAccumulators: one featurize pass serves every
// round, and each round's solve is the one an ordinary run would make on
// those rows. The test metrics of the K rounds give mean ± std (sample
// standard deviation, K − 1 in the denominator).
//
// The refit (the model a k-fold run writes) trains on all N rows at λ*, the
// λ whose validation score averaged over the K rounds is best (the inner CV
// choice; ties to the larger λ); its generalisation is what the K rounds
// estimate. With extend_grid, the grid grows by a decade beyond whichever
// end the averaged curve chose, as for an ordinary run, up to 8 decades.
//
// Memory: the K per-fold D × D sums plus one merged copy (and the solver's
// own), and the featurized rows of every fold (N × D floats).
#ifndef INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_
#define INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
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
  int64_t train_rows = 0;
  int64_t validation_rows = 0;
  int64_t test_rows = 0;
  double lambda = 0;                           // chosen on the validation fold
  std::map<std::string, double> test_metrics;  // accuracy | rmse, mae
};

struct CrossValidationResult {
  std::vector<FoldResult> folds;
  std::map<std::string, double> mean;    // over the folds
  std::map<std::string, double> stddev;  // sample standard deviation over the folds
  // λ* and the validation curve averaged over the folds ((λ, accuracy or
  // RMSE), ascending λ).
  double refit_lambda = 0;
  std::vector<std::pair<double, double>> mean_curve;
  LinearModel refit;  // on all rows at refit_lambda
  int64_t refit_rows = 0;
};

using SolverFactory =
    std::function<absl::StatusOr<std::unique_ptr<RidgeSolver>>(const GramAccumulator&)>;

// Runs the K rounds and the refit. `folds` are the K ≥ 3 folds (each with at
// least one row); `grid` the λ grid (finite, > 0). Errors: INVALID_ARGUMENT
// for fewer than 3 folds, an empty fold or an empty grid; the solver's and
// ChooseLambda's errors.
absl::StatusOr<CrossValidationResult> CrossValidate(const std::vector<FoldRows>& folds,
                                                    std::vector<double> grid, bool extend_grid,
                                                    RlsTask task, const SolverFactory& make_solver);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_CROSS_VALIDATION_H_
