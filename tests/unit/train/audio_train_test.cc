// Training on sound: the model stores the audio front end and the served
// model featurizes a clip as the trainer did; splits by group (test_groups,
// leave_one_group_out); the audio group must fit the front end.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/audio/front_end.h"
#include "core/audio/wav.h"
#include "core/base/thread_pool.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/data/synthetic_clips.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/data/audio.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kTestFrontEnd;
using testing::ReadText;
using testing::RunOptions;
using testing::TempDir;
using testing::WriteSpokenDigits;

// CDF pooling over pitch shifts and time shifts of the test front end's
// spectrograms (24 bins × 30 frames, 6 bins per octave); DATA_DIR and the
// *_FIELDS are replaced by the test.
constexpr char kAudioConfig[] = R"pb(
  description: "synthetic spoken digits"
  data { audio { dir: "DATA_DIR" front_end { FRONT_END_FIELDS } } }
  split { SPLIT_FIELDS }
  preprocess { center: true l2_normalize: true }
  encoder {
    cdf {
      num_templates: 12
      num_group_elements: 6
      num_bins: 8
      range: 1.0
      template_kind: TEMPLATE_DATA
    }
    group {
      audio {
        GROUP_FIELDS
        pitch_cents { uniform { low: -200 high: 200 } }
        time_shift { uniform { low: -3 high: 3 } }
      }
    }
    seed: 5
  }
  learner {
    kind: RIDGE
    task: TASK_CLASSIFICATION
    lambda_grid: [ 1e-4, 1e-2, 1 ]
  }
  certificate { num_points: 8 num_group_elements: 4 }
)pb";

constexpr char kMatchingGroup[] = "frequency_bins: 24 frames: 30 bins_per_octave: 6";

std::string AudioConfig(const std::string& data, const std::string& split,
                        const std::string& group = kMatchingGroup) {
  return absl::StrReplaceAll(kAudioConfig, {{"DATA_DIR", data},
                                            {"FRONT_END_FIELDS", kTestFrontEnd},
                                            {"SPLIT_FIELDS", split},
                                            {"GROUP_FIELDS", group}});
}

// 3 words × 3 speakers × 4 takes = 36 clips under DIR/clips.
std::string WriteClips(const TempDir& dir,
                       const std::vector<std::string>& speakers = {"ann", "bob", "cat"}) {
  const std::string clips = dir.path() + "/clips";
  WriteSpokenDigits(clips, 3, speakers, 4);
  return clips;
}

absl::StatusOr<DataPlan> Plan(const std::string& config_text) {
  absl::StatusOr<v1::TrainConfig> config = ParseTrainConfig(config_text, "test");
  if (!config.ok()) return config.status();
  return PlanData(*config);
}

TEST(AudioTrainTest, TheModelStoresTheFrontEndAndServesTheTrainersFeatures) {
  TempDir dir;
  const std::string clips = WriteClips(dir);
  TrainOptions o = RunOptions(dir, AudioConfig(clips, "test_groups: 'cat' seed: 1"), "digits");
  TrainSummary summary;
  absl::StatusOr<std::string> out = RunTraining(o, &summary);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(summary.test_rows, 12);                  // cat's 12 clips
  EXPECT_GT(summary.test_metrics["accuracy"], 0.5);  // 3 words: chance is 1/3
  auto model = Model::Load(*out + "/" + kBundleFileName);
  ASSERT_TRUE(model.ok()) << model.status();
  const v1::Manifest& m = (*model)->manifest();
  ASSERT_TRUE(m.has_audio());
  EXPECT_EQ(m.audio().frames(), 30);  // completed
  EXPECT_EQ(m.audio().fft_length(), 128);
  EXPECT_EQ(m.audio().frequency_bins(), 24);
  EXPECT_EQ(m.input_dim(), 24 * 30);
  EXPECT_THAT(m.encoder().input_shape(), ElementsAre(24, 30, 1));
  EXPECT_THAT(m.head().class_names(), ElementsAre("0", "1", "2"));

  // The trainer's rows of these clips ...
  absl::StatusOr<v1::TrainConfig> config = ParseTrainConfig(ReadText(o.config_path), "test");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<AudioData> data = LoadAudio(config->data().audio(), "data.audio");
  ASSERT_TRUE(data.ok()) << data.status();
  // ... and the rows the served model's own front end makes of the files.
  auto front_end = audio::AudioFrontEnd::Create(m.audio());
  ASSERT_TRUE(front_end.ok()) << front_end.status();
  const std::vector<std::string> paths = {clips + "/ann/0_ann_0.wav", clips + "/cat/2_cat_3.wav"};
  const std::vector<int64_t> rows = {0, 35};  // their positions in path order
  const int64_t d = m.input_dim(), f = (*model)->feature_dim();
  for (size_t k = 0; k < paths.size(); ++k) {
    auto clip = audio::ReadWavFile(paths[k], 1 << 20);
    ASSERT_TRUE(clip.ok()) << clip.status();
    std::vector<float> served(static_cast<size_t>(d));
    ASSERT_TRUE(
        (*front_end)->Apply(clip->samples, clip->sample_rate, served.data(), paths[k]).ok());
    const float* trained = data->train.x.row(rows[k]);
    ASSERT_EQ(served, std::vector<float>(trained, trained + d)) << paths[k];
    std::vector<float> a(static_cast<size_t>(f)), b(static_cast<size_t>(f));
    (*model)->Featurize(1, trained, a.data());
    (*model)->Featurize(1, served.data(), b.data());
    EXPECT_EQ(a, b) << paths[k];
  }
}

TEST(AudioTrainTest, TestGroupsAreExactlyTheTestSet) {
  TempDir dir;
  const std::string clips = WriteClips(dir);
  absl::StatusOr<DataPlan> plan = Plan(AudioConfig(clips, "test_groups: 'bob' validation: 4"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->test.rows(), 12);
  EXPECT_THAT(plan->test.groups, Each("bob"));
  EXPECT_EQ(plan->validation.rows(), 4);
  EXPECT_THAT(plan->validation.groups, Each(::testing::Ne("bob")));
  EXPECT_EQ(plan->train_rows, 20);  // every other row trains
  for (size_t i = 0; i < plan->role.size(); ++i) {
    EXPECT_EQ(plan->role[i] == DataPlan::kTest, plan->schema.groups[i] == "bob") << i;
  }
  // Two test groups, a subset of their rows (split.test).
  plan = Plan(AudioConfig(clips, "test_groups: ['ann', 'cat'] test: 5"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->test.rows(), 5);
  EXPECT_THAT(plan->test.groups, Each(AllOf(::testing::Ne("bob"))));
  EXPECT_EQ(plan->train_rows + plan->validation.rows(), 12);
}

TEST(AudioTrainTest, TestGroupsAreRefusedWithoutSuchGroups) {
  TempDir dir;
  const std::string clips = WriteClips(dir);
  absl::StatusOr<DataPlan> plan = Plan(AudioConfig(clips, "test_groups: 'dan'"));
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              AllOf(HasSubstr("split.test_groups: group 'dan'"), HasSubstr("ann, bob, cat")));

  // A source without groups: the pattern has no {group}.
  const std::string no_groups =
      absl::StrReplaceAll(AudioConfig(clips, "test_groups: 'ann'"),
                          {{"front_end {", "file_pattern: '{label}_{*}.wav' front_end {"}});
  plan = Plan(no_groups);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("has no groups"));

  // A source with a separate test part: a manifest marking clips test.
  std::ofstream(clips + "/m.csv") << "path,label,group,split\n"
                                  << "ann/0_ann_0.wav,0,ann,train\n"
                                  << "ann/1_ann_0.wav,1,ann,train\n"
                                  << "bob/0_bob_0.wav,0,bob,train\n"
                                  << "cat/1_cat_0.wav,1,cat,test\n";
  const std::string manifest =
      absl::StrReplaceAll(AudioConfig(clips, "test_groups: 'ann'"),
                          {{"dir: \"", "manifest: \""}, {"/clips\"", "/clips/m.csv\""}});
  plan = Plan(manifest);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("separate test part"));

  // test_groups fixes the test set: no k-fold with it.
  EXPECT_THAT(
      std::string(ParseTrainConfig(AudioConfig(clips, "test_groups: 'ann' k_fold: 3"), "test")
                      .status()
                      .message()),
      HasSubstr("split.test_groups fixes one test set"));
}

TEST(AudioTrainTest, LeaveOneGroupOutHoldsOutEveryGroupOnce) {
  TempDir dir;
  const std::string clips = WriteClips(dir);
  const std::string config = AudioConfig(clips, "leave_one_group_out: true");
  absl::StatusOr<DataPlan> plan = Plan(config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->num_folds, 3);
  EXPECT_THAT(plan->fold_groups, ElementsAre("ann", "bob", "cat"));
  for (size_t i = 0; i < plan->fold.size(); ++i) {
    EXPECT_EQ(plan->fold_groups[static_cast<size_t>(plan->fold[i])], plan->schema.groups[i]);
  }

  TrainOptions o = RunOptions(dir, config, "logo");
  TrainSummary summary;
  absl::StatusOr<std::string> out = RunTraining(o, &summary);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(summary.k_fold, 3);
  EXPECT_EQ(summary.test_rows, 36);
  const std::string json = ReadText(*out + "/report.json");
  EXPECT_THAT(json, HasSubstr("\"leave_one_group_out\": true"));
  for (const char* group : {"ann", "bob", "cat"}) {
    // Round of `group`: the refit on the other two groups' 24 clips, tested on its 12.
    EXPECT_THAT(json, HasSubstr(absl::StrCat("{\"group\": \"", group,
                                             "\", \"train_rows\": 24, \"inner_train_rows\": [12, "
                                             "12], \"inner_validation_rows\": [12, 12], "
                                             "\"test_rows\": 12")));
  }
  EXPECT_THAT(ReadText(*out + "/report.md"), HasSubstr("| 2 (bob) |"));
  auto model = Model::Load(*out + "/" + kBundleFileName);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE((*model)->manifest().has_audio());
}

TEST(AudioTrainTest, LeaveOneGroupOutIsRefusedWhenItCannotRun) {
  TempDir dir;
  for (const char* split :
       {"leave_one_group_out: true k_fold: 3", "leave_one_group_out: true stratify: true",
        "leave_one_group_out: true train: 10"}) {
    const absl::Status s = ParseTrainConfig(AudioConfig("/nonexistent", split), "test").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << split;
    EXPECT_THAT(std::string(s.message()), HasSubstr("split.leave_one_group_out")) << split;
  }
  const std::string two = WriteClips(dir, {"ann", "bob"});
  absl::StatusOr<DataPlan> plan = Plan(AudioConfig(two, "leave_one_group_out: true"));
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              AllOf(HasSubstr("at least 3 groups"), HasSubstr("has 2: ann, bob")));
}

TEST(AudioTrainTest, TheAudioGroupMustMatchTheFrontEnd) {
  TempDir dir;
  const std::string clips = WriteClips(dir, {"ann"});
  EXPECT_TRUE(Plan(AudioConfig(clips, "seed: 1")).ok());
  const std::map<std::string, std::string> wrong = {
      {"frequency_bins: 20 frames: 36 bins_per_octave: 6", "encoder.group.audio.frequency_bins"},
      {"frequency_bins: 24 frames: 30 bins_per_octave: 12", "encoder.group.audio.bins_per_octave"},
  };
  for (const auto& [group, field] : wrong) {
    absl::StatusOr<DataPlan> plan = Plan(AudioConfig(clips, "seed: 1", group));
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << group;
    EXPECT_THAT(std::string(plan.status().message()), HasSubstr(field)) << group;
  }
  const std::string certificate =
      absl::StrReplaceAll(AudioConfig(clips, "seed: 1"),
                          {{"certificate {",
                            "certificate { group { audio { frequency_bins: 24 frames: 31 "
                            "bins_per_octave: 6 } }"}});
  absl::StatusOr<DataPlan> plan = Plan(certificate);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("certificate.group.audio.frames"));
}

TEST(AudioTrainTest, TheAudioSourceFieldsAreChecked) {
  const std::string ok = AudioConfig("/clips", "seed: 1");
  ASSERT_TRUE(ParseTrainConfig(ok, "test").ok()) << ParseTrainConfig(ok, "test").status();
  const std::map<std::string, std::string> bad = {
      {absl::StrReplaceAll(ok, {{"dir: \"/clips\"", "dir: '/a' manifest: '/b'"}}),
       "data.audio must set exactly one of dir, manifest"},
      {absl::StrReplaceAll(ok, {{"dir: \"/clips\"", ""}}),
       "data.audio must set exactly one of dir, manifest"},
      {absl::StrReplaceAll(ok, {{"TASK_CLASSIFICATION", "TASK_REGRESSION"}}),
       "data.audio is classification only"},
  };
  for (const auto& [text, message] : bad) {
    const absl::Status s = ParseTrainConfig(text, "test").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(s.message()), HasSubstr(message)) << text;
  }
  v1::TrainConfig no_front_end;
  no_front_end.mutable_data()->mutable_audio()->set_dir("/clips");
  EXPECT_THAT(std::string(ValidateTrainConfig(no_front_end).message()),
              HasSubstr("data.audio.front_end must be set"));
}

// Two augmented copies of every training clip: resampled, padded, pink
// noise, gain.
constexpr char kAugmentation[] =
    "augmentation { copies: 2 seed: 6 sample_rates: [8000, 11025] noise_colours: "
    "NOISE_COLOUR_PINK snr_db_range { min: 10 max: 30 } total_seconds { min: 0.3 max: 0.5 } "
    "gain_db { min: -6 max: 0 } } ";

std::string Augmented(const std::string& config) {
  return absl::StrReplaceAll(config, {{"front_end {", absl::StrCat(kAugmentation, "front_end {")}});
}

std::vector<float> Values(const FloatMatrix& m) { return {m.data(), m.data() + m.size()}; }

// The training rows a plan streams, in training order.
std::vector<std::vector<float>> TrainingRows(DataPlan& plan) {
  std::vector<std::vector<float>> rows;
  const int64_t d = plan.schema.dim;
  EXPECT_TRUE(ForEachTrainBlock(plan, 7, 0, 1, [&](const TrainBlock& b) {
                for (int64_t i = 0; i < b.n; ++i) rows.emplace_back(b.x + i * d, b.x + (i + 1) * d);
                return absl::OkStatus();
              }).ok());
  return rows;
}

TEST(AudioTrainTest, AugmentedCopiesTrainButAreNeverHeldOut) {
  TempDir dir;
  const std::string clips = WriteClips(dir);
  const std::string split = "test_groups: 'bob' validation: 4";
  absl::StatusOr<DataPlan> plain = Plan(AudioConfig(clips, split));
  absl::StatusOr<DataPlan> plan = Plan(Augmented(AudioConfig(clips, split)));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(plan.ok()) << plan.status();
  // The held-out rows are the originals: the rows of the run without copies.
  EXPECT_EQ(Values(plan->test.x), Values(plain->test.x));
  EXPECT_EQ(Values(plan->validation.x), Values(plain->validation.x));
  EXPECT_EQ(plan->test.groups, plain->test.groups);
  EXPECT_EQ(plan->train_rows, 60);  // 20 clips and 2 copies of each
  EXPECT_EQ(plan->augmented_rows, 40);
  const std::vector<int64_t>& copy_of = plan->schema.copy_of;
  ASSERT_EQ(copy_of.size(), 108u);
  for (size_t i = 36; i < copy_of.size(); ++i) {
    const int8_t original = plan->role[static_cast<size_t>(copy_of[i])];
    EXPECT_EQ(plan->role[i], original == DataPlan::kTrain ? DataPlan::kTrain : DataPlan::kUnused);
    EXPECT_EQ(plan->schema.groups[i], plan->schema.groups[static_cast<size_t>(copy_of[i])]);
  }
  const std::vector<std::vector<float>> plain_rows = TrainingRows(*plain);
  const std::vector<std::vector<float>> rows = TrainingRows(*plan);
  ASSERT_EQ(rows.size(), 60u);
  EXPECT_EQ(std::vector<std::vector<float>>(rows.begin(), rows.begin() + 20), plain_rows);
  v1::SplitConfig sc;
  sc.add_test_groups("bob");
  EXPECT_THAT(DescribeDataPlan(sc, *plan),
              HasSubstr("data: 60 train (of them 40 augmented copies), 4 validation, 12 test"));

  // Leave one group out: a copy is in its original's fold, so the round that
  // holds a speaker out never trains on a copy of that speaker's clips.
  const std::string logo = Augmented(AudioConfig(clips, "leave_one_group_out: true"));
  plan = Plan(logo);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->fold.size(), 108u);
  for (size_t i = 36; i < 108; ++i) {
    EXPECT_EQ(plan->fold[i], plan->fold[static_cast<size_t>(copy_of[i])]) << i;
    EXPECT_TRUE(plan->IsCopy(static_cast<int64_t>(i)));
  }
  EXPECT_FALSE(plan->IsCopy(35));
  // A cross-validated run certifies on fold 1's rows: its originals.
  absl::StatusOr<DataPlan> plain_logo = Plan(AudioConfig(clips, "leave_one_group_out: true"));
  ASSERT_TRUE(plain_logo.ok()) << plain_logo.status();
  absl::StatusOr<FloatMatrix> certified = CertificationRows(*plan, 100);
  absl::StatusOr<FloatMatrix> plain_certified = CertificationRows(*plain_logo, 100);
  ASSERT_TRUE(certified.ok() && plain_certified.ok());
  EXPECT_EQ(certified->rows(), 12);
  EXPECT_EQ(Values(*certified), Values(*plain_certified));
  TrainOptions o = RunOptions(dir, logo, "augmented_logo");
  TrainSummary summary;
  absl::StatusOr<std::string> out = RunTraining(o, &summary);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(summary.test_rows, 36);  // the originals, each tested once
  const std::string json = ReadText(*out + "/report.json");
  for (const char* group : {"ann", "bob", "cat"}) {
    // Trained on the other two groups' 24 clips and their 48 copies; the
    // inner folds validate on 12 originals, the test fold is 12 originals.
    EXPECT_THAT(json, HasSubstr(absl::StrCat("{\"group\": \"", group,
                                             "\", \"train_rows\": 72, \"inner_train_rows\": [36, "
                                             "36], \"inner_validation_rows\": [12, 12], "
                                             "\"test_rows\": 12")));
  }

  // k-fold: the folds are the original rows' (as without copies).
  plain = Plan(AudioConfig(clips, "k_fold: 3 seed: 2"));
  plan = Plan(Augmented(AudioConfig(clips, "k_fold: 3 seed: 2")));
  ASSERT_TRUE(plain.ok() && plan.ok());
  EXPECT_EQ(std::vector<int32_t>(plan->fold.begin(), plan->fold.begin() + 36), plain->fold);
  EXPECT_EQ(plan->train_rows, 108);
}

TEST(AudioTrainTest, AnAugmentedRunGivesTheSameModelWhateverTheThreads) {
  TempDir dir;
  const std::string clips = WriteClips(dir);
  const std::string config = Augmented(AudioConfig(clips, "test_groups: 'cat' seed: 1"));
  const int original_threads = DefaultThreadCount();
  std::vector<std::shared_ptr<const Model>> models;
  for (int threads : {1, 3}) {
    ResetDefaultThreadPoolForTesting(threads);
    TrainSummary summary;
    absl::StatusOr<std::string> out =
        RunTraining(RunOptions(dir, config, absl::StrCat("augmented_", threads)), &summary);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(summary.test_rows, 12);
    models.push_back(testing::LoadVersion(*out));
  }
  ResetDefaultThreadPoolForTesting(original_threads);
  ASSERT_NE(models[0], nullptr);
  ASSERT_NE(models[1], nullptr);
  const auto& a = models[0]->tensors().f32;
  const auto& b = models[1]->tensors().f32;
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, tensor] : a) {
    ASSERT_EQ(b.count(name), 1u) << name;
    EXPECT_EQ(Values(tensor), Values(b.at(name))) << name;
  }
}

TEST(AudioTrainTest, AugmentationFieldsAreChecked) {
  const std::string ok = Augmented(AudioConfig("/clips", "seed: 1"));
  ASSERT_TRUE(ParseTrainConfig(ok, "test").ok()) << ParseTrainConfig(ok, "test").status();
  const absl::Status s =
      ParseTrainConfig(absl::StrReplaceAll(ok, {{"snr_db_range { min: 10 max: 30 }", ""}}), "test")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("data.audio.augmentation.snr_db: noise needs"));
  EXPECT_THAT(
      std::string(ParseTrainConfig(absl::StrReplaceAll(ok, {{"copies: 2", "copies: -1"}}), "test")
                      .status()
                      .message()),
      HasSubstr("data.audio.augmentation.copies: -1"));
}

// train/configs/spoken_digits.textproto, with FSDD_DIR replaced by a folder
// of FSDD-named clips: valid, its certificate group fits its front end (64 bins × 62
// frames), and the speaker jackson is the test set.
TEST(AudioTrainTest, TheShippedSpokenDigitsConfigPlans) {
  TempDir dir;
  const std::string clips = dir.path() + "/recordings";
  WriteSpokenDigits(clips, 10, {"george", "jackson", "theo"}, 1);
  const std::string text = absl::StrReplaceAll(
      ReadText(std::string(INVARIANT_SOURCE_DIR) + "/train/configs/spoken_digits.textproto"),
      {{"FSDD_DIR", clips}});
  ASSERT_THAT(text, HasSubstr(clips));
  absl::StatusOr<DataPlan> plan = Plan(text);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->schema.audio.has_value());
  EXPECT_EQ(plan->schema.audio->frames(), 62);
  EXPECT_THAT(plan->schema.input_shape, ElementsAre(64, 62, 1));
  EXPECT_THAT(plan->schema.class_names,
              ElementsAre("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"));
  EXPECT_EQ(plan->test.rows(), 10);
  EXPECT_THAT(plan->test.groups, Each("jackson"));
}

}  // namespace
}  // namespace invariant::train
