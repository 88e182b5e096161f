// Config errors name the field, the allowed values and what was received.
#include "train/pipeline/config.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/train_test_util.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using testing::kTorusConfig;
using testing::kXpermConfig;

absl::Status Parse(const std::string& text) { return ParseTrainConfig(text, "cfg").status(); }

TEST(TrainConfigTest, ShippedStyleConfigParsesAndGetsDefaults) {
  absl::StatusOr<v1::TrainConfig> c = ParseTrainConfig(kXpermConfig, "cfg");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->encoder().cdf().pooling(), v1::POOLING_CDF);
  EXPECT_EQ(c->certificate().num_group_elements(), 32);
  EXPECT_EQ(c->block_rows(), 17);
}

// Spectral features without a learner kind get Spec-Avg, and Spec-Avg without
// an estimator gets least squares; Algorithm 1 is kept when asked for.
TEST(TrainConfigTest, SpectralEncoderDefaultsToLeastSquaresSpecAvg) {
  const std::string kind = "kind: SPEC_AVG ";
  auto with_learner = [&](const std::string& replacement) {
    std::string text = kTorusConfig;
    text.replace(text.find(kind), kind.size(), replacement);
    return ParseTrainConfig(text, "cfg");
  };
  for (const std::string& learner : {std::string(), kind}) {
    absl::StatusOr<v1::TrainConfig> c = with_learner(learner);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->learner().kind(), v1::LearnerConfig::SPEC_AVG) << learner;
    EXPECT_EQ(c->learner().spec_avg_estimator(), v1::LearnerConfig::SPEC_AVG_LEAST_SQUARES)
        << learner;
    EXPECT_FALSE(c->learner().lambda_grid().empty());  // the λ grid it chooses from
  }
  absl::StatusOr<v1::TrainConfig> literal =
      with_learner("kind: SPEC_AVG spec_avg_estimator: SPEC_AVG_ALGORITHM1 ");
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->learner().spec_avg_estimator(), v1::LearnerConfig::SPEC_AVG_ALGORITHM1);
  absl::StatusOr<v1::TrainConfig> ridge = with_learner("kind: RIDGE ");
  ASSERT_TRUE(ridge.ok()) << ridge.status();
  EXPECT_EQ(ridge->learner().spec_avg_estimator(),
            v1::LearnerConfig::SPEC_AVG_ESTIMATOR_UNSPECIFIED);

  // Other encoders still default to ridge, without an estimator.
  std::string xperm = kXpermConfig;
  const std::string xperm_kind = "kind: RIDGE";
  ASSERT_NE(xperm.find(xperm_kind), std::string::npos);
  xperm.replace(xperm.find(xperm_kind), xperm_kind.size(), "");
  absl::StatusOr<v1::TrainConfig> plain = ParseTrainConfig(xperm, "cfg");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->learner().kind(), v1::LearnerConfig::RIDGE);
  EXPECT_EQ(plain->learner().spec_avg_estimator(),
            v1::LearnerConfig::SPEC_AVG_ESTIMATOR_UNSPECIFIED);

  // The estimator belongs to SPEC_AVG only.
  absl::Status misplaced =
      with_learner("kind: RIDGE spec_avg_estimator: SPEC_AVG_ALGORITHM1 ").status();
  EXPECT_EQ(misplaced.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(misplaced.message(), HasSubstr("learner.spec_avg_estimator"));
  EXPECT_THAT(misplaced.message(), HasSubstr("RIDGE"));
}

// A sound source's spectrogram is an F × T × 1 image: a patch encoder gets
// its input_shape from the front end when the config leaves it out.
TEST(TrainConfigTest, AudioSpectrogramShapeFillsThePatchInputShape) {
  const std::string text = R"pb(
    data {
      audio {
        manifest: "clips.csv"
        front_end {
          sample_rate: 8000
          clip_seconds: 1.0
          frame_length: 128
          hop_length: 128
          min_frequency: 100
          bins_per_octave: 12
          frequency_bins: 64
        }
      }
    }
    encoder {
      patch {
        patch_height: 56
        patch_width: 8
        pad_rows: 8
        num_templates: 4
        num_group_elements: 1
        pool_rows: 1
        pool_cols: 6
      }
      group { identity { dim: 448 } }
    }
    learner { kind: RIDGE task: TASK_CLASSIFICATION }
  )pb";
  absl::StatusOr<v1::TrainConfig> c = ParseTrainConfig(text, "cfg");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->encoder().input_shape_size(), 3);
  EXPECT_EQ(c->encoder().input_shape(0), 64);
  EXPECT_EQ(c->encoder().input_shape(1), 62);  // (8000 − 128) / 128 + 1
  EXPECT_EQ(c->encoder().input_shape(2), 1);
  // A bad front end is named before the encoder is checked.
  std::string bad = text;
  bad.replace(bad.find("frame_length: 128"), 17, "frame_length: 1");
  EXPECT_THAT(std::string(Parse(bad).message()), HasSubstr("data.audio.front_end"));
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

// Found by train_config_fuzz: a NaN noise level of a generated data source
// validated (the generator refused it only when run), and NaN is unequal to
// itself, so the validated config did not compare equal to itself.
TEST(TrainConfigTest, NonFiniteOrNegativeNoiseOfAGeneratedSourceIsRefused) {
  for (const char* source : {"torus { dim: 2 num_points: 100 noise_stddev: %s }",
                             "coulomb { num_molecules: 100 max_atoms: 5 noise_stddev: %s }"}) {
    for (const char* value : {"nan", "inf", "-1"}) {
      const std::string text =
          absl::StrCat("data { ", absl::StrReplaceAll(source, {{"%s", value}}), " } ",
                       "encoder { random_fourier { num_features: 10 num_group_elements: 1 "
                       "sigma: 1 } group { identity { dim: 4 } } } ",
                       "learner { kind: RIDGE task: TASK_REGRESSION }");
      const std::string field = std::string(source).substr(0, std::string(source).find(' '));
      EXPECT_THAT(std::string(Parse(text).message()),
                  HasSubstr(absl::StrCat("data.", field, ".noise_stddev must be in [0, 1e+12]")))
          << text;
    }
  }
}

// Found by train_config_fuzz: the encoder's group was checked only when the
// encoder was built, after the data, so a NaN noisy-sort width validated (and,
// unequal to itself, made the validated config differ from itself).
TEST(TrainConfigTest, TheEncodersGroupIsCheckedWhenTheConfigIsRead) {
  for (const char* value : {"nan", "-1"}) {
    const std::string text = absl::StrCat(
        "data { coulomb { num_molecules: 100 max_atoms: 5 } } ",
        "encoder { random_fourier { num_features: 10 num_group_elements: 2 sigma: 1 } ",
        "group { matrix_permutation { n: 5 noisy_sort_sigma: ", value, " } } } ",
        "learner { kind: RIDGE task: TASK_REGRESSION }");
    EXPECT_THAT(std::string(Parse(text).message()),
                HasSubstr("encoder.group.matrix_permutation.noisy_sort_sigma must be finite"))
        << text;
  }
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
