#include "core/rls/lambda_selection.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/rls_internal.h"

namespace invariant {
namespace {

absl::Status CheckGrid(absl::Span<const double> lambdas) {
  if (lambdas.empty()) {
    return absl::InvalidArgumentError("ChooseLambda: expected a non-empty lambda grid, got none");
  }
  for (size_t i = 0; i < lambdas.size(); ++i) {
    if (!(std::isfinite(lambdas[i]) && lambdas[i] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("ChooseLambda: lambdas[", i, "] is ",
                                                     lambdas[i], ", expected a finite value > 0"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTargets(const FloatMatrix& val_targets, int64_t rows, int64_t target_dim) {
  if (rows < 1) {
    return absl::InvalidArgumentError("ChooseLambda: expected at least one validation row, got 0");
  }
  if (val_targets.rows() != rows || val_targets.cols() != target_dim) {
    return absl::InvalidArgumentError(absl::StrCat("ChooseLambda: expected val_targets ", rows,
                                                   " x ", target_dim, ", got ", val_targets.rows(),
                                                   " x ", val_targets.cols()));
  }
  return rls_internal::CheckFinite("ChooseLambda", "val_targets", val_targets.rows(),
                                   val_targets.cols(), val_targets.data());
}

double Score(const FloatMatrix& predictions, const FloatMatrix& targets,
             const std::vector<int32_t>& true_classes, RlsTask task) {
  if (task == RlsTask::kClassification) {
    const std::vector<int32_t> predicted = ArgmaxRows(predictions);
    int64_t correct = 0;
    for (size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == true_classes[i];
    return static_cast<double>(correct) / static_cast<double>(predicted.size());
  }
  const Eigen::ArrayXXd diff =
      (predictions.map().cast<double>() - targets.map().cast<double>()).array();
  return diff.square().mean();
}

// Fills the curve by scoring predict(λ) for every λ and picks the best one.
absl::Status FillCurve(absl::Span<const double> lambdas, const FloatMatrix& val_targets,
                       RlsTask task,
                       const std::function<absl::StatusOr<FloatMatrix>(double)>& predict,
                       LambdaCurve& curve) {
  curve.task = task;
  curve.lambdas.assign(lambdas.begin(), lambdas.end());
  curve.scores.clear();
  const std::vector<int32_t> true_classes =
      task == RlsTask::kClassification ? ArgmaxRows(val_targets) : std::vector<int32_t>();
  for (double lambda : lambdas) {
    ASSIGN_OR_RETURN(FloatMatrix predictions, predict(lambda));
    curve.scores.push_back(Score(predictions, val_targets, true_classes, task));
  }
  curve.best_index = BestLambdaIndex(curve.lambdas, curve.scores, task);
  return absl::OkStatus();
}

}  // namespace

int64_t BestLambdaIndex(absl::Span<const double> lambdas, absl::Span<const double> scores,
                        RlsTask task) {
  if (scores.empty()) return -1;
  size_t best = 0;
  for (size_t i = 1; i < scores.size(); ++i) {
    const double s = scores[i];
    const bool better = task == RlsTask::kClassification ? s > scores[best] : s < scores[best];
    const bool tie_to_larger = s == scores[best] && lambdas[i] > lambdas[best];
    if (better || tie_to_larger || std::isnan(scores[best])) best = i;
  }
  return static_cast<int64_t>(best);
}

absl::StatusOr<LinearModelSelection> ChooseLambda(const RidgeSolver& solver,
                                                  absl::Span<const double> lambdas,
                                                  const FloatMatrix& val_features,
                                                  const FloatMatrix& val_targets, RlsTask task) {
  RETURN_IF_ERROR(CheckGrid(lambdas));
  if (val_features.cols() != solver.feature_dim()) {
    return absl::InvalidArgumentError(absl::StrCat("ChooseLambda: expected val_features with ",
                                                   solver.feature_dim(), " columns, got ",
                                                   val_features.cols()));
  }
  RETURN_IF_ERROR(CheckTargets(val_targets, val_features.rows(), solver.target_dim()));
  RETURN_IF_ERROR(rls_internal::CheckFinite("ChooseLambda", "val_features", val_features.rows(),
                                            val_features.cols(), val_features.data()));
  LinearModelSelection out;
  RETURN_IF_ERROR(FillCurve(
      lambdas, val_targets, task,
      [&](double lambda) -> absl::StatusOr<FloatMatrix> {
        ASSIGN_OR_RETURN(LinearModel model, solver.Solve(lambda));
        return ApplyLinearModel(model, val_features);
      },
      out.curve));
  ASSIGN_OR_RETURN(out.model, solver.SolveFinal(out.curve.best_lambda()));
  return out;
}

absl::StatusOr<KernelModelSelection> ChooseKernelLambda(const KernelRidgeSolver& solver,
                                                        absl::Span<const double> lambdas,
                                                        const DoubleMatrix& val_kernel,
                                                        const FloatMatrix& val_targets,
                                                        RlsTask task) {
  RETURN_IF_ERROR(CheckGrid(lambdas));
  if (val_kernel.cols() != solver.num_examples()) {
    return absl::InvalidArgumentError(absl::StrCat("ChooseKernelLambda: expected val_kernel with ",
                                                   solver.num_examples(), " columns, got ",
                                                   val_kernel.cols()));
  }
  RETURN_IF_ERROR(CheckTargets(val_targets, val_kernel.rows(), solver.target_dim()));
  KernelModelSelection out;
  RETURN_IF_ERROR(FillCurve(
      lambdas, val_targets, task,
      [&](double lambda) -> absl::StatusOr<FloatMatrix> {
        ASSIGN_OR_RETURN(KernelRidgeModel model, solver.Solve(lambda));
        return PredictKernelRidge(model, val_kernel);
      },
      out.curve));
  ASSIGN_OR_RETURN(out.model, solver.Solve(out.curve.best_lambda()));
  return out;
}

std::vector<double> GurlsLambdaGrid(const Eigen::VectorXd& eigenvalues, int64_t num_examples,
                                    int count) {
  if (count < 1 || eigenvalues.size() == 0 || num_examples < 1) return {};
  const double n = static_cast<double>(num_examples);
  std::vector<double> scaled(eigenvalues.data(), eigenvalues.data() + eigenvalues.size());
  for (double& e : scaled) e = std::max(e, 0.0) * n;
  std::sort(scaled.begin(), scaled.end(), std::greater<double>());
  const size_t rank = static_cast<size_t>(std::min<int64_t>(num_examples, scaled.size()));
  const double small_number = 1e-8;
  const double lambda_min = std::max(std::min(small_number, scaled[rank - 1]),
                                     200.0 * std::sqrt(std::numeric_limits<double>::epsilon()));
  const double lambda_max = std::max(scaled[0], lambda_min);
  std::vector<double> grid(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const double power = count == 1 ? 1.0 : static_cast<double>(i) / (count - 1);
    grid[static_cast<size_t>(i)] = lambda_min * std::pow(lambda_max / lambda_min, power) / n;
  }
  return grid;
}

}  // namespace invariant
