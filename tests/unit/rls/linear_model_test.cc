#include "core/rls/linear_model.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace invariant {
namespace {

LinearModel SmallModel() {
  LinearModel model;
  model.weights = FloatMatrix::Zeros(3, 2);
  model.weights.mutable_map() << 1, 0,  //
      0, 2,                             //
      -1, 1;
  model.bias = FloatMatrix::Zeros(1, 2);
  model.bias.mutable_map() << 0.5f, -1.0f;
  return model;
}

TEST(LinearModelTest, AppliesWeightsAndBias) {
  const LinearModel model = SmallModel();
  FloatMatrix x = FloatMatrix::Zeros(2, 3);
  x.mutable_map() << 1, 2, 3,  //
      0, -1, 4;
  auto scores = ApplyLinearModel(model, x);
  ASSERT_TRUE(scores.ok());
  // Row 0: [1 − 3 + 0.5, 4 + 3 − 1]; row 1: [−4 + 0.5, −2 + 4 − 1].
  EXPECT_FLOAT_EQ(scores->row(0)[0], -1.5f);
  EXPECT_FLOAT_EQ(scores->row(0)[1], 6.0f);
  EXPECT_FLOAT_EQ(scores->row(1)[0], -3.5f);
  EXPECT_FLOAT_EQ(scores->row(1)[1], 1.0f);
  EXPECT_EQ(model.feature_dim(), 3);
  EXPECT_EQ(model.output_dim(), 2);
}

TEST(LinearModelTest, CheckedApplyRejectsMismatchedShapes) {
  LinearModel model = SmallModel();
  EXPECT_EQ(ApplyLinearModel(model, FloatMatrix::Zeros(2, 4)).status().code(),
            absl::StatusCode::kInvalidArgument);
  model.bias = FloatMatrix::Zeros(1, 3);
  EXPECT_EQ(ApplyLinearModel(model, FloatMatrix::Zeros(2, 3)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(LinearModelTest, OneVsAllTargets) {
  const std::vector<int32_t> labels = {2, 0, 1, 2};
  auto y = OneVsAllTargets(labels, 3);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->rows(), 4);
  ASSERT_EQ(y->cols(), 3);
  for (int64_t i = 0; i < 4; ++i) {
    for (int32_t c = 0; c < 3; ++c) {
      EXPECT_EQ(y->row(i)[c], c == labels[static_cast<size_t>(i)] ? 1.0f : -1.0f);
    }
  }
  EXPECT_EQ(ArgmaxRows(*y), labels);
  const std::vector<int32_t> out_of_range = {0, 3};
  const absl::Status bad = OneVsAllTargets(out_of_range, 3).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("labels[1] = 3"), std::string::npos) << bad.message();
  const std::vector<int32_t> negative = {-1};
  EXPECT_EQ(OneVsAllTargets(negative, 3).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OneVsAllTargets(labels, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LinearModelTest, ArgmaxTiesGoLeftAndNanNeverWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  FloatMatrix scores = FloatMatrix::Zeros(4, 3);
  scores.mutable_map() << 1, 3, 3,  //
      nan, 0, -1,                   //
      -2, -1, -3,                   //
      nan, nan, nan;
  EXPECT_EQ(ArgmaxRows(scores), (std::vector<int32_t>{1, 1, 1, -1}));
  EXPECT_EQ(ArgmaxRows(FloatMatrix::Zeros(2, 0)), (std::vector<int32_t>{-1, -1}));
}

}  // namespace
}  // namespace invariant
