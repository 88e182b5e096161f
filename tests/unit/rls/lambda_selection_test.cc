#include "core/rls/lambda_selection.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/rls/metrics.h"
#include "gtest/gtest.h"
#include "tests/unit/rls/test_data.h"

namespace invariant {
namespace {

using rls_test::RandomNormal;
using rls_test::ToDouble;

const std::vector<double> kGrid = {1e-6, 1e-4, 1e-2, 0.1, 1.0, 10.0, 1e3, 1e5};

// y = x · w + noise_level · noise, split into train and validation.
struct Split {
  FloatMatrix train_x, train_y, val_x, val_y;
};
Split MakeRegression(uint64_t seed, int64_t n_train, int64_t d, double signal, double noise) {
  Rng rng(seed);
  const Eigen::MatrixXd w = ToDouble(RandomNormal(rng, d, 1));
  auto make = [&](int64_t n, FloatMatrix& x, FloatMatrix& y) {
    x = RandomNormal(rng, n, d);
    const Eigen::MatrixXd e = ToDouble(RandomNormal(rng, n, 1));
    y = FloatMatrix::FromEigen(signal * (ToDouble(x) * w) + noise * e);
  };
  Split s;
  make(n_train, s.train_x, s.train_y);
  make(200, s.val_x, s.val_y);
  return s;
}

TEST(LambdaSelectionTest, RegressionCurveMatchesExplicitFitsAndPicksItsArgmin) {
  const Split s = MakeRegression(21, 60, 40, 1.0, 2.0);
  auto solver = MakeRidgeSolver(s.train_x, s.train_y);
  ASSERT_TRUE(solver.ok());
  auto chosen = ChooseLambda(**solver, kGrid, s.val_x, s.val_y, RlsTask::kRegression);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  const LambdaCurve& curve = chosen->curve;
  ASSERT_EQ(curve.lambdas, kGrid);
  ASSERT_EQ(curve.scores.size(), kGrid.size());
  for (size_t i = 0; i < kGrid.size(); ++i) {
    auto model = (*solver)->Solve(kGrid[i]);
    ASSERT_TRUE(model.ok());
    auto predictions = ApplyLinearModel(*model, s.val_x);
    ASSERT_TRUE(predictions.ok());
    auto mse = MeanSquaredError(*predictions, s.val_y);
    ASSERT_TRUE(mse.ok());
    EXPECT_NEAR(curve.scores[i], *mse, 1e-12 * *mse) << "lambda " << kGrid[i];
    EXPECT_GE(curve.scores[i], curve.best_score());
  }
  // The noise makes neither end of the grid best: an interior λ wins.
  EXPECT_GT(curve.best_index, 0);
  EXPECT_LT(curve.best_index, static_cast<int64_t>(kGrid.size()) - 1);
  EXPECT_EQ(chosen->model.lambda, curve.best_lambda());
  auto refit = (*solver)->Solve(curve.best_lambda());
  ASSERT_TRUE(refit.ok());
  EXPECT_EQ(chosen->model.weights.map(), refit->weights.map());
}

TEST(LambdaSelectionTest, NoiselessTargetsPickTheSmallestLambda) {
  const Split s = MakeRegression(22, 200, 10, 1.0, 0.0);
  auto solver = MakeRidgeSolver(s.train_x, s.train_y);
  ASSERT_TRUE(solver.ok());
  auto chosen = ChooseLambda(**solver, kGrid, s.val_x, s.val_y, RlsTask::kRegression);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen->curve.best_lambda(), kGrid.front());
  EXPECT_LT(chosen->curve.best_score(), 1e-6);
}

TEST(LambdaSelectionTest, PureNoiseTargetsPickTheLargestLambda) {
  // Targets independent of the features: the best model is the mean.
  const Split s = MakeRegression(23, 50, 30, 0.0, 1.0);
  auto solver = MakeRidgeSolver(s.train_x, s.train_y);
  ASSERT_TRUE(solver.ok());
  auto chosen = ChooseLambda(**solver, kGrid, s.val_x, s.val_y, RlsTask::kRegression);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen->curve.best_lambda(), kGrid.back());
}

TEST(LambdaSelectionTest, ClassificationScoresAccuracyAndBreaksTiesTowardLargerLambda) {
  // Two classes split by the sign of the first coordinate, with a margin.
  Rng rng(24);
  auto make = [&](int64_t n, FloatMatrix& x, FloatMatrix& y) {
    x = RandomNormal(rng, n, 5);
    std::vector<int32_t> labels;
    for (int64_t i = 0; i < n; ++i) {
      float& first = x.mutable_row(i)[0];
      first += first >= 0 ? 1.0f : -1.0f;
      labels.push_back(first >= 0 ? 1 : 0);
    }
    y = *OneVsAllTargets(labels, 2);
  };
  FloatMatrix train_x, train_y, val_x, val_y;
  make(100, train_x, train_y);
  make(100, val_x, val_y);
  auto solver = MakeRidgeSolver(train_x, train_y);
  ASSERT_TRUE(solver.ok());
  auto chosen = ChooseLambda(**solver, kGrid, val_x, val_y, RlsTask::kClassification);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  const LambdaCurve& curve = chosen->curve;
  const std::vector<int32_t> truth = ArgmaxRows(val_y);
  size_t last_best = 0;
  for (size_t i = 0; i < kGrid.size(); ++i) {
    auto model = (*solver)->Solve(kGrid[i]);
    ASSERT_TRUE(model.ok());
    auto accuracy = Accuracy(ArgmaxRows(*ApplyLinearModel(*model, val_x)), truth);
    ASSERT_TRUE(accuracy.ok());
    EXPECT_EQ(curve.scores[i], *accuracy) << "lambda " << kGrid[i];
    EXPECT_LE(curve.scores[i], curve.best_score());
    if (curve.scores[i] == curve.best_score()) last_best = i;
  }
  EXPECT_EQ(curve.best_score(), 1.0);  // separable with a margin
  // Several λ reach the top accuracy; the largest of them is chosen.
  EXPECT_EQ(curve.best_index, static_cast<int64_t>(last_best));
  EXPECT_GT(curve.best_index, 0);
}

TEST(LambdaSelectionTest, KernelCurveMatchesExplicitFits) {
  const Split s = MakeRegression(25, 60, 8, 1.0, 0.5);
  // Gaussian kernel, σ² = 8.
  auto gaussian = [](const FloatMatrix& a, const FloatMatrix& b) {
    const Eigen::MatrixXd x = ToDouble(a), z = ToDouble(b);
    DoubleMatrix k = DoubleMatrix::Zeros(x.rows(), z.rows());
    for (int64_t i = 0; i < x.rows(); ++i) {
      for (int64_t j = 0; j < z.rows(); ++j) {
        k.mutable_row(i)[j] = std::exp(-(x.row(i) - z.row(j)).squaredNorm() / 16.0);
      }
    }
    return k;
  };
  auto solver = KernelRidgeSolver::Create(gaussian(s.train_x, s.train_x), s.train_y);
  ASSERT_TRUE(solver.ok()) << solver.status();
  const DoubleMatrix val_kernel = gaussian(s.val_x, s.train_x);
  auto chosen = ChooseKernelLambda(*solver, kGrid, val_kernel, s.val_y, RlsTask::kRegression);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  for (size_t i = 0; i < kGrid.size(); ++i) {
    auto model = solver->Solve(kGrid[i]);
    ASSERT_TRUE(model.ok());
    auto mse = MeanSquaredError(*PredictKernelRidge(*model, val_kernel), s.val_y);
    ASSERT_TRUE(mse.ok());
    EXPECT_NEAR(chosen->curve.scores[i], *mse, 1e-12 * *mse);
    EXPECT_GE(chosen->curve.scores[i], chosen->curve.best_score());
  }
  EXPECT_EQ(chosen->model.lambda, chosen->curve.best_lambda());
}

TEST(LambdaSelectionTest, RejectsBadGridsAndShapes) {
  const Split s = MakeRegression(26, 30, 4, 1.0, 0.1);
  auto solver = MakeRidgeSolver(s.train_x, s.train_y);
  ASSERT_TRUE(solver.ok());
  const RlsTask task = RlsTask::kRegression;
  EXPECT_EQ(ChooseLambda(**solver, {}, s.val_x, s.val_y, task).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<double> negative = {0.1, -1.0};
  EXPECT_EQ(ChooseLambda(**solver, negative, s.val_x, s.val_y, task).status().code(),
            absl::StatusCode::kInvalidArgument);
  const FloatMatrix wrong_width = FloatMatrix::Zeros(200, 5);
  EXPECT_EQ(ChooseLambda(**solver, kGrid, wrong_width, s.val_y, task).status().code(),
            absl::StatusCode::kInvalidArgument);
  const FloatMatrix wrong_rows = FloatMatrix::Zeros(199, 1);
  EXPECT_EQ(ChooseLambda(**solver, kGrid, s.val_x, wrong_rows, task).status().code(),
            absl::StatusCode::kInvalidArgument);
  const FloatMatrix no_rows = FloatMatrix::Zeros(0, 4);
  EXPECT_EQ(ChooseLambda(**solver, kGrid, no_rows, FloatMatrix::Zeros(0, 1), task).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(LambdaSelectionTest, GurlsGridSpansTheSpectrumGeometrically) {
  Eigen::VectorXd eigenvalues(4);
  eigenvalues << 0.0, 0.5, 2.0, 0.25;  // of Gram / N, unsorted
  const int64_t n = 100;
  const std::vector<double> grid = GurlsLambdaGrid(eigenvalues, n, 20);
  ASSERT_EQ(grid.size(), 20u);
  const double lambda_min = 200.0 * std::sqrt(std::numeric_limits<double>::epsilon()) / n;
  EXPECT_NEAR(grid.front(), lambda_min, 1e-12 * lambda_min);
  EXPECT_NEAR(grid.back(), 2.0, 1e-12);
  const double ratio = grid[1] / grid[0];
  for (size_t i = 1; i < grid.size(); ++i) EXPECT_NEAR(grid[i] / grid[i - 1], ratio, 1e-9);
  EXPECT_GT(ratio, 1.0);
  EXPECT_TRUE(GurlsLambdaGrid(eigenvalues, n, 0).empty());
  EXPECT_TRUE(GurlsLambdaGrid(Eigen::VectorXd(), n, 20).empty());
  const std::vector<double> single = GurlsLambdaGrid(eigenvalues, n, 1);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_NEAR(single[0], 2.0, 1e-12);
}

}  // namespace
}  // namespace invariant
