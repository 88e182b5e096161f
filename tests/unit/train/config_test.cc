// Config errors name the field, the allowed values and what was received.
#include "train/pipeline/config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/train_test_util.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using testing::kXpermConfig;

absl::Status Parse(const std::string& text) { return ParseTrainConfig(text, "cfg").status(); }

TEST(TrainConfigTest, ShippedStyleConfigParsesAndGetsDefaults) {
  absl::StatusOr<v1::TrainConfig> c = ParseTrainConfig(kXpermConfig, "cfg");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->encoder().cdf().pooling(), v1::POOLING_CDF);
  EXPECT_EQ(c->certificate().num_group_elements(), 32);
  EXPECT_EQ(c->block_rows(), 17);
}

TEST(TrainConfigTest, UnknownFieldIsAnErrorWithItsPosition) {
  absl::Status s = Parse(std::string(kXpermConfig) + "\nnum_epochs: 3\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("num_epochs"));
  EXPECT_THAT(s.message(), HasSubstr("cfg:"));
}

TEST(TrainConfigTest, MissingTaskNamesTheFieldAndTheAllowedValues) {
  std::string text = kXpermConfig;
  text.replace(text.find(" task: TASK_CLASSIFICATION"), 26, "");
  absl::Status s = Parse(text);
  EXPECT_THAT(s.message(), HasSubstr("learner.task"));
  EXPECT_THAT(s.message(), HasSubstr("TASK_REGRESSION"));
}

TEST(TrainConfigTest, NonPositiveLambdaIsNamedByIndex) {
  std::string text = kXpermConfig;
  text.replace(text.find("1e-4"), 4, "0");
  EXPECT_THAT(Parse(text).message(), HasSubstr("learner.lambda_grid[0] must be > 0, got 0"));
}

// Found by train_config_fuzz: a NaN or infinite parameter was accepted.
TEST(TrainConfigTest, NonFiniteLambdaAndVonMisesEtaAreRefused) {
  std::string text = kXpermConfig;
  text.replace(text.find("1e-4"), 4, "inf");
  EXPECT_THAT(Parse(text).message(), HasSubstr("learner.lambda_grid[0] must be > 0, got inf"));
  text = kXpermConfig;
  const size_t learner = text.find("learner {");
  ASSERT_NE(learner, std::string::npos);
  text.insert(learner + 9, " von_mises_eta: nan ");
  EXPECT_THAT(Parse(text).message(), HasSubstr("learner.von_mises_eta must be finite, got nan"));
}

TEST(TrainConfigTest, OutOfRangeBinsNameTheField) {
  std::string text = kXpermConfig;
  text.replace(text.find("num_bins: 8"), 11, "num_bins: 0");
  EXPECT_THAT(Parse(text).message(), HasSubstr("encoder.cdf.num_bins"));
}

TEST(TrainConfigTest, MissingDataSourceIsNamed) {
  EXPECT_THAT(Parse("learner { kind: RIDGE task: TASK_REGRESSION }").message(),
              HasSubstr("data must set one of"));
}

}  // namespace
}  // namespace invariant::train
