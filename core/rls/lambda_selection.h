// lambda_selection.h: choosing λ on held-out data over a grid, as GURLS's
// hold-out parameter selection does, reusing one eigendecomposition.
//
// For each λ of the grid the solver's model is scored on a validation set:
//   kClassification: accuracy of argmax(scores) against argmax(targets),
//                    targets being one-vs-all ±1 rows (OneVsAllTargets);
//                    higher is better.
//   kRegression:     mean squared error over all entries; lower is better.
// The score of λ is that of the float model the server would apply
// (RidgeSolver::Solve), so the returned curve is what serving would see.
// Ties go to the larger λ (the simpler model). The whole curve is returned;
// the model is the solver's FinalWeights at the best λ. The grid is solved
// in the order given (an iterative solver warm-starts each λ from the ones
// before it: large to small suits it best); the result does not depend on it.
#ifndef INVARIANT_CORE_RLS_LAMBDA_SELECTION_H_
#define INVARIANT_CORE_RLS_LAMBDA_SELECTION_H_

#include <cstdint>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"
#include "core/rls/kernel_rls.h"
#include "core/rls/linear_model.h"
#include "core/rls/ridge.h"

namespace invariant {

enum class RlsTask { kClassification, kRegression };

// The validation curve: scores[i] belongs to lambdas[i].
struct LambdaCurve {
  RlsTask task = RlsTask::kClassification;
  std::vector<double> lambdas;
  std::vector<double> scores;  // accuracy in [0, 1] or mean squared error
  int64_t best_index = 0;
  double best_lambda() const { return lambdas[static_cast<size_t>(best_index)]; }
  double best_score() const { return scores[static_cast<size_t>(best_index)]; }
};

struct LinearModelSelection {
  LinearModel model;  // refitted at the best λ
  LambdaCurve curve;
};

struct KernelModelSelection {
  KernelRidgeModel model;
  LambdaCurve curve;
};

// Scores every λ of `lambdas` with `solver` on (val_features: M × D,
// val_targets: M × T). Errors: INVALID_ARGUMENT for an empty grid, a λ that
// is not finite and > 0, M = 0, or shapes that do not match the solver.
absl::StatusOr<LinearModelSelection> ChooseLambda(const RidgeSolver& solver,
                                                  absl::Span<const double> lambdas,
                                                  const FloatMatrix& val_features,
                                                  const FloatMatrix& val_targets, RlsTask task);

// The same for kernel RLS, with val_kernel[i, j] = k(x_val_i, x_train_j) (M × N).
absl::StatusOr<KernelModelSelection> ChooseKernelLambda(const KernelRidgeSolver& solver,
                                                        absl::Span<const double> lambdas,
                                                        const DoubleMatrix& val_kernel,
                                                        const FloatMatrix& val_targets,
                                                        RlsTask task);

// The index of the best score (scores[i] belongs to lambdas[i], in any
// order): the highest accuracy or the lowest mean squared error, ties to the
// larger λ; a NaN score is never best unless all are. -1 for no scores.
int64_t BestLambdaIndex(absl::Span<const double> lambdas, absl::Span<const double> scores,
                        RlsTask task);

// The number of decades a λ grid is extended by at most while the choice
// lands on one of its ends (learner.extend_lambda_grid).
inline constexpr int kMaxLambdaGridExtensions = 8;

// GURLS's default grid (paramsel_lambdaguesses): `count` values spaced
// geometrically from λ_min to λ_max, where, with E = N · eigenvalues (the
// eigenvalues of ΦᵀΦ or K themselves), r = min(N, #eigenvalues),
//   λ_max = max(E) / N,  λ_min = max(min(1e-8, E_r), 200 √ε) / N,
// E_r being the r-th largest (GURLS's constants make λ_min = 200 √ε / N
// whenever E_r ≥ 1e-8). `eigenvalues` are the solvers' (of Gram / N), in any
// order. Returns an ascending grid; empty when count < 1 or there
// are no eigenvalues; λ_max is raised to λ_min if it is smaller.
std::vector<double> GurlsLambdaGrid(const Eigen::VectorXd& eigenvalues, int64_t num_examples,
                                    int count = 20);

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_LAMBDA_SELECTION_H_
