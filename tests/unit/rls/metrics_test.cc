#include "core/rls/metrics.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(MetricsTest, AccuracyOnAHandExample) {
  const std::vector<int32_t> predicted = {0, 1, 2, 2};
  const std::vector<int32_t> truth = {0, 1, 1, 2};
  auto accuracy = Accuracy(predicted, truth);
  ASSERT_TRUE(accuracy.ok());
  EXPECT_DOUBLE_EQ(*accuracy, 0.75);
  const std::vector<int32_t> shorter = {0, 1};
  EXPECT_EQ(Accuracy(predicted, shorter).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Accuracy({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetricsTest, RegressionErrorsOnAHandExample) {
  FloatMatrix predictions = FloatMatrix::Zeros(2, 2);
  predictions.mutable_map() << 1, 2, 3, 4;
  FloatMatrix targets = FloatMatrix::Zeros(2, 2);
  targets.mutable_map() << 1, 0, 4, 8;  // errors 0, 2, −1, −4
  auto mse = MeanSquaredError(predictions, targets);
  auto rmse = RootMeanSquaredError(predictions, targets);
  auto mae = MeanAbsoluteError(predictions, targets);
  ASSERT_TRUE(mse.ok() && rmse.ok() && mae.ok());
  EXPECT_DOUBLE_EQ(*mse, 21.0 / 4.0);
  EXPECT_DOUBLE_EQ(*rmse, std::sqrt(21.0 / 4.0));
  EXPECT_DOUBLE_EQ(*mae, 7.0 / 4.0);
}

TEST(MetricsTest, RegressionErrorsRejectMismatchedOrEmptyInputs) {
  const FloatMatrix a = FloatMatrix::Zeros(2, 2);
  const FloatMatrix b = FloatMatrix::Zeros(2, 1);
  EXPECT_EQ(MeanSquaredError(a, b).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RootMeanSquaredError(a, b).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeanAbsoluteError(a, b).status().code(), absl::StatusCode::kInvalidArgument);
  const FloatMatrix empty = FloatMatrix::Zeros(0, 1);
  EXPECT_EQ(RootMeanSquaredError(empty, empty).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace invariant
