// The patch encoder through the training job: a run on small generated
// colour images (tests/unit/train/synthetic_images.h) learns the task, is
// certified exactly invariant on patches against its enumerated mirror
// group and nearly invariant against shifts of the whole image, sharded runs
// give the model of one run, an average over the image's mirror is exactly
// mirror-invariant, and the image shape is checked against the data.
#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_replace.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/synthetic_images.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using testing::ExpectSameHead;
using ::testing::HasSubstr;
using testing::LoadVersion;
using testing::RunOptions;
using ::testing::StartsWith;
using testing::TempDir;

// 3 × 3 patches of 8 × 8 × 3 images, 16 data templates (whitened, spherical
// k-means), soft threshold, pooled over the left–right mirror and over all
// positions (pool_grid 1).
constexpr char kPatchConfig[] = R"pb(
  description: "bars"
  data { csv { path: "CSV" label_column: "label" } }
  split { train: 300 validation: 60 test: 140 seed: 1 }
  encoder {
    patch {
      patch_size: 3
      num_templates: 16
      normalize_patches: true
      whiten: true
      kmeans_iterations: 3
      statistics_patches: 4000
      pool_grid: 1
    }
    group {
      dihedral { height: 3 width: 3 channels: 3 flips: true }
      enumerate: true
    }
    input_shape: [ 8, 8, 3 ]
    seed: 3
  }
  learner {
    kind: RIDGE
    task: TASK_CLASSIFICATION
    lambda_grid: [ 1e-3, 1e-1, 10 ]
  }
  certificate { num_points: 60 }
  block_rows: 64
)pb";

std::string PatchConfig(const TempDir& dir) {
  const std::string csv = dir.path() + "/bars.csv";
  testing::WriteBarImagesCsv(csv, 500, 7);
  return absl::StrReplaceAll(kPatchConfig, {{"CSV", csv}});
}

TEST(PatchTrainTest, LearnsTheBarsAndIsCertifiedOnPatchesAndOnImageShifts) {
  TempDir dir;
  const std::string config = PatchConfig(dir);
  absl::StatusOr<std::string> out = RunTraining(RunOptions(dir, config, "bars"));
  ASSERT_TRUE(out.ok()) << out.status();
  std::shared_ptr<const Model> model = LoadVersion(*out);
  ASSERT_NE(model, nullptr);
  const v1::Manifest& m = model->manifest();
  EXPECT_EQ(m.encoder().patch().num_group_elements(), 2);
  EXPECT_EQ(m.feature_dim(), 2 * 16);
  EXPECT_GT(m.metrics().at("test_accuracy"), 0.8);  // two classes: chance is 0.5
  // Its own group, enumerated, on patches: the per-patch map is exactly
  // invariant up to float summation order.
  const v1::InvarianceCertificate& own = m.certificate();
  EXPECT_TRUE(own.exhaustive());
  EXPECT_EQ(own.num_group_elements(), 2);
  EXPECT_EQ(own.num_points(), 60);
  EXPECT_TRUE(own.group().has_dihedral());
  EXPECT_THAT(own.method(), StartsWith("per-patch map on 60 patches of 60 held-out images: all 2"));
  EXPECT_LT(own.max_discrepancy(), 1e-5);
  EXPECT_GT(own.mean_pairwise_difference(), 1e-2);  // the map is not constant

  // The whole image shifted by one pixel right and one up (sampled from a
  // narrow law): the scores move (a row and a column of the 36 positions
  // leave the image, zeros enter), but far less than those of a plain
  // random Fourier model of the pixels.
  const std::string shifts = absl::StrReplaceAll(
      config, {{"certificate { num_points: 60 }",
                "certificate { num_points: 60 num_group_elements: 8 group { image { height: 8 "
                "width: 8 channels: 3 translation_x { uniform { low: 0.999 high: 1.001 } } "
                "translation_y { uniform { low: -1.001 high: -0.999 } } } } }"}});
  auto moved = CertifySavedModel(RunOptions(dir, shifts, "unused").config_path, *out);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_FALSE(moved->exhaustive());
  EXPECT_EQ(moved->num_group_elements(), 8);
  EXPECT_TRUE(moved->group().has_image());
  EXPECT_THAT(moved->method(), StartsWith("8 elements drawn from"));
  EXPECT_GT(moved->max_discrepancy(), 0);

  // A plain random Fourier model of the pixels moves far more.
  std::string plain = shifts;
  const size_t encoder = plain.find("encoder {"), learner = plain.find("learner {");
  plain.replace(encoder, learner - encoder,
                "encoder { random_fourier { num_features: 64 num_group_elements: 1 sigma: 4 } "
                "group { identity { dim: 192 } } seed: 3 }\n  ");
  auto plain_run = RunTraining(RunOptions(dir, plain, "plain"));
  ASSERT_TRUE(plain_run.ok()) << plain_run.status();
  auto plain_moved = CertifySavedModel(RunOptions(dir, shifts, "unused").config_path, *plain_run);
  ASSERT_TRUE(plain_moved.ok()) << plain_moved.status();
  EXPECT_GT(plain_moved->relative_mean_discrepancy(), 0.5);
  EXPECT_LT(moved->relative_mean_discrepancy(), 0.5 * plain_moved->relative_mean_discrepancy());

  // A group of neither length is refused, naming both.
  const std::string misfit = absl::StrReplaceAll(
      config, {{"certificate { num_points: 60 }",
                "certificate { num_points: 60 group { cyclic_shift { length: 10 } } }"}});
  auto refused = CertifySavedModel(RunOptions(dir, misfit, "unused").config_path, *out);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("certificate.group acts on vectors of length 10, but the model's inputs "
                        "have 192 values and its patches 27"));
}

// encoder.patch.image_group: the features averaged over the image and its
// mirror. The run learns the bars, and its certificate against the mirror
// of the whole image (an exact pixel permutation, enumerated) is exactly 0:
// the features of x and of its mirror are the same two vectors summed.
TEST(PatchTrainTest, AnImageGroupRunIsExactlyInvariantToIt) {
  TempDir dir;
  const std::string config = absl::StrReplaceAll(
      PatchConfig(dir),
      {{"group {\n      dihedral { height: 3 width: 3 channels: 3 flips: true }\n      enumerate: "
        "true\n    }",
        "group { identity { dim: 27 } }"},
       {"pool_grid: 1",
        "pool_grid: 2 num_group_elements: 1 image_group { dihedral { height: 8 width: 8 "
        "channels: 3 flips: true } enumerate: true }"},
       {"certificate { num_points: 60 }",
        "certificate { num_points: 60 group { dihedral { height: 8 width: 8 channels: 3 flips: "
        "true } enumerate: true } }"}});
  ASSERT_NE(config.find("image_group"), std::string::npos);
  ASSERT_NE(config.find("identity { dim: 27 }"), std::string::npos);
  absl::StatusOr<std::string> out = RunTraining(RunOptions(dir, config, "mirrored"));
  ASSERT_TRUE(out.ok()) << out.status();
  std::shared_ptr<const Model> model = LoadVersion(*out);
  ASSERT_NE(model, nullptr);
  const v1::Manifest& m = model->manifest();
  EXPECT_TRUE(m.encoder().patch().image_group().has_dihedral());
  EXPECT_EQ(m.feature_dim(), 4 * 2 * 16);
  EXPECT_GT(m.metrics().at("test_accuracy"), 0.8);
  const v1::InvarianceCertificate& c = m.certificate();
  EXPECT_TRUE(c.exhaustive());
  EXPECT_EQ(c.num_group_elements(), 2);
  EXPECT_EQ(c.max_discrepancy(), 0.0);
  EXPECT_GT(c.mean_pairwise_difference(), 1e-2);
  // Per-pixel centring before the average is not mirror-symmetric: refused;
  // per-channel centring commutes with the mirror and is accepted.
  const std::string centred = absl::StrReplaceAll(
      config, {{"encoder {", "preprocess { center: true scale: true }\n  encoder {"}});
  auto refused = ParseTrainConfig(centred, "test");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("encoder.patch.image_group needs preprocess.per_channel"));
  EXPECT_TRUE(ParseTrainConfig(absl::StrReplaceAll(centred, {{"scale: true",
                                                              "scale: true "
                                                              "per_channel: true"}}),
                               "test")
                  .ok());
}

TEST(PatchTrainTest, ShardsThenReduceGiveTheModelOfOneRun) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, PatchConfig(dir), "bars");
  auto single = RunTraining(o);
  ASSERT_TRUE(single.ok()) << single.status();
  o.num_shards = 2;
  for (int i = 0; i < 2; ++i) {
    o.shard = i;
    auto shard = RunShard(o);
    ASSERT_TRUE(shard.ok()) << shard.status();
  }
  auto reduced = RunReduce(o);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  auto ms = LoadVersion(*single), mr = LoadVersion(*reduced);
  ASSERT_TRUE(ms != nullptr && mr != nullptr);
  // Every shard drew the same bank and bias from the seed.
  for (const char* name : {"encoder/bank", "encoder/bias"}) {
    const FloatMatrix& a = ms->tensors().f32.at(name);
    const FloatMatrix& b = mr->tensors().f32.at(name);
    ASSERT_EQ(a.size(), b.size()) << name;
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0) << name;
  }
  ExpectSameHead(*ms, *mr);
}

TEST(PatchTrainTest, TheImageShapeMustMatchTheDataRows) {
  TempDir dir;
  const std::string config = PatchConfig(dir);
  auto parsed = ParseTrainConfig(
      absl::StrReplaceAll(config, {{"input_shape: [ 8, 8, 3 ]", "input_shape: [ 8, 4, 3 ]"}}),
      "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const absl::StatusOr<DataPlan> plan = PlanData(*parsed);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("encoder.input_shape"));
  // The group is the patches': an image group of the input's size is refused.
  auto image_group = ParseTrainConfig(
      absl::StrReplaceAll(config,
                          {{"dihedral { height: 3 width: 3 channels: 3 flips: true }",
                            "image { height: 8 width: 8 channels: 3 }"},
                           {"enumerate: true", ""},
                           {"num_templates: 16", "num_templates: 16 num_group_elements: 4"}}),
      "test");
  EXPECT_EQ(image_group.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(image_group.status().message()),
              HasSubstr("encoder.group must act on patches of k·k·C = 27 values"));
}

}  // namespace
}  // namespace invariant::train
