// The certificate of a model of sound acts on its held-out clips and goes
// through its front end (train/pipeline/clip_certificate.h): the clips are
// those of the rows the row certificate would check, a later start in
// digital silence moves nothing, noise moves more as it grows, and a point
// of the curve is the pair certificate of the same change written to files.
#include "train/pipeline/clip_certificate.h"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/audio/time_stretch.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/data/synthetic_clips.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/pair_certificate.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using testing::kTestFrontEnd;
using testing::RunOptions;
using testing::TempDir;

// CDF pooling over pitch shifts of the test front end's spectrograms; the
// certificate checks the encoder's own group. DATA_DIR and SPLIT are replaced.
constexpr char kClipCertificateConfig[] = R"pb(
  data { audio { dir: "DATA_DIR" front_end { FRONT_END } } }
  split { SPLIT }
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
        frequency_bins: 24
        frames: 30
        bins_per_octave: 6
        pitch_cents { uniform { low: -200 high: 200 } }
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

std::string ClipConfig(const std::string& clips, const std::string& split) {
  return absl::StrReplaceAll(kClipCertificateConfig,
                             {{"DATA_DIR", clips}, {"FRONT_END", kTestFrontEnd}, {"SPLIT", split}});
}

std::string WriteWords(const TempDir& dir) {
  const std::string clips = dir.path() + "/clips";
  testing::WriteSpokenDigits(clips, 3, {"ann", "bob", "cat"}, 4);
  return clips;
}

// The curve's points by generator, sizes ascending.
std::map<std::string, std::vector<v1::InvarianceCurvePoint>> ByGenerator(
    const v1::InvarianceCertificate& c) {
  std::map<std::string, std::vector<v1::InvarianceCurvePoint>> out;
  for (const v1::InvarianceCurvePoint& p : c.curve()) out[p.generator()].push_back(p);
  return out;
}

TEST(ClipCertificateTest, TheTrainerChangesHeldOutClipsAndSendsThemThroughTheFrontEnd) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, ClipConfig(WriteWords(dir), "test_groups: 'cat' seed: 1"), "w");
  absl::StatusOr<std::string> out = RunTraining(o, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(*out + "/" + kBundleFileName);
  ASSERT_TRUE(model.ok()) << model.status();
  const v1::InvarianceCertificate& c = (*model)->manifest().certificate();
  EXPECT_THAT(c.method(), HasSubstr("8 held-out clips, changed as recordings"));
  EXPECT_EQ(c.num_points(), 8);
  EXPECT_EQ(c.num_group_elements(), 4);
  EXPECT_TRUE(c.group().has_audio());
  EXPECT_GT(c.mean_pairwise_difference(), 0);
  EXPECT_GT(c.mean_discrepancy(), 0);  // real pitch shifts move a CDF model a little
  const auto curve = ByGenerator(c);
  ASSERT_EQ(curve.size(), 3u);
  ASSERT_EQ(curve.count("pitch"), 1u);
  for (const auto& [name, points] : curve) {
    ASSERT_FALSE(points.empty()) << name;
    EXPECT_EQ(points.front().magnitude(), 0) << name;
    EXPECT_EQ(points.front().mean_discrepancy(), 0) << name;  // the identity
  }
  EXPECT_EQ(curve.at("pitch").back().magnitude(), 200);
  EXPECT_EQ(curve.at("pitch").back().unit(), "cents");
  // Digital silence before a word is trimmed away: the rows, so the scores,
  // are the same bits.
  ASSERT_EQ(curve.at("offset").size(), static_cast<size_t>(kContinuousSizes));
  EXPECT_EQ(curve.at("offset").back().magnitude(), kMaxOffsetSeconds);
  for (const v1::InvarianceCurvePoint& p : curve.at("offset")) EXPECT_EQ(p.mean_discrepancy(), 0);
  // White noise from 30 dB to 0 dB under the word, and 1.5 s of it after.
  const std::vector<v1::InvarianceCurvePoint>& noise = curve.at("noise");
  ASSERT_EQ(noise.size(), 8u);
  EXPECT_NEAR(noise[3].magnitude(), 0.1, 1e-12);  // 20 dB
  EXPECT_EQ(noise[7].magnitude(), 1);             // 0 dB
  // This front end trims at 40 dB under the peak, without voice activity: 30
  // dB of noise already keeps the whole recording, so the word is lost.
  for (size_t i = 1; i < noise.size(); ++i) {
    EXPECT_GT(noise[i].relative_mean_discrepancy(), 0.3) << noise[i].magnitude();
  }
}

TEST(ClipCertificateTest, ABaselineMeetsTheSameChangedClips) {
  TempDir dir;
  const std::string clips = WriteWords(dir);
  // The plain baseline: the same model without pooling (one group element).
  std::string plain_config = ClipConfig(clips, "test_groups: 'cat' seed: 1");
  plain_config =
      absl::StrReplaceAll(plain_config, {{"num_group_elements: 6", "num_group_elements: 1"}});
  absl::StatusOr<std::string> plain = RunTraining(RunOptions(dir, plain_config, "plain"), nullptr);
  ASSERT_TRUE(plain.ok()) << plain.status();
  std::string config = ClipConfig(clips, "test_groups: 'cat' seed: 1");
  config = absl::StrReplaceAll(
      config, {{"certificate {", absl::StrCat("certificate { baseline: \"", *plain, "\"")}});
  absl::StatusOr<std::string> out = RunTraining(RunOptions(dir, config, "w"), nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string report = testing::ReadText(*out + "/report.json");
  const size_t baseline = report.find("\"baseline\"");
  ASSERT_NE(baseline, std::string::npos) << report;
  EXPECT_THAT(report.substr(baseline), HasSubstr("baseline " + *plain + ": 8 held-out clips"));
  EXPECT_THAT(report.substr(baseline), HasSubstr("\"generator\": \"noise\""));
}

TEST(ClipCertificateTest, HeldOutClipsAreTheClipsOfTheRowsARowCertificateChecks) {
  TempDir dir;
  const std::string clips = WriteWords(dir);
  for (const char* split : {"test_groups: 'bob' seed: 1", "leave_one_group_out: true seed: 1",
                            "train: 20 validation: 4 test: 6 seed: 3"}) {
    absl::StatusOr<v1::TrainConfig> config = ParseTrainConfig(ClipConfig(clips, split), "test");
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<DataPlan> plan = PlanData(*config);
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<FloatMatrix> rows = CertificationRows(*plan, 5);
    ASSERT_TRUE(rows.ok()) << rows.status();
    auto front_end = audio::AudioFrontEnd::Create(*plan->schema.audio);
    ASSERT_TRUE(front_end.ok()) << front_end.status();
    absl::StatusOr<std::vector<audio::Clip>> held_out =
        HeldOutClips(config->data().audio(), *plan, **front_end, 5);
    ASSERT_TRUE(held_out.ok()) << held_out.status();
    ASSERT_EQ(static_cast<int64_t>(held_out->size()), rows->rows()) << split;
    std::vector<float> row(static_cast<size_t>((*front_end)->output_dim()));
    for (size_t i = 0; i < held_out->size(); ++i) {
      const audio::Clip& clip = (*held_out)[i];
      ASSERT_TRUE((*front_end)->Apply(clip.samples, clip.sample_rate, row.data(), "clip").ok());
      EXPECT_EQ(row, std::vector<float>(rows->row(static_cast<int64_t>(i)),
                                        rows->row(static_cast<int64_t>(i)) + rows->cols()))
          << split << " clip " << i;
    }
  }
}

TEST(ClipCertificateTest, AManifestsTestClipsAreTheHeldOutOnes) {
  TempDir dir;
  const std::string clips = WriteWords(dir);
  std::set<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(clips)) {
    if (e.path().extension() == ".wav") paths.insert(e.path());
  }
  // bob's clips are marked test; split.test keeps 5 of them, drawn.
  std::string manifest = "path,label,split\n";
  for (const std::string& path : paths) {
    const std::string name = std::filesystem::path(path).filename();
    absl::StrAppend(&manifest, path, ",", name.substr(0, 1), ",",
                    name.find("_bob_") != std::string::npos ? "test" : "train", "\n");
  }
  std::string config =
      absl::StrReplaceAll(ClipConfig(clips, "test: 5 seed: 2"),
                          {{absl::StrCat("dir: \"", clips, "\""),
                            absl::StrCat("manifest: \"", dir.Write("m.csv", manifest), "\"")}});
  absl::StatusOr<v1::TrainConfig> parsed = ParseTrainConfig(config, "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<DataPlan> plan = PlanData(*parsed);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->separate_test);
  ASSERT_EQ(plan->test.rows(), 5);
  auto front_end = audio::AudioFrontEnd::Create(*plan->schema.audio);
  ASSERT_TRUE(front_end.ok()) << front_end.status();
  absl::StatusOr<std::vector<audio::Clip>> held_out =
      HeldOutClips(parsed->data().audio(), *plan, **front_end, 100);
  ASSERT_TRUE(held_out.ok()) << held_out.status();
  ASSERT_EQ(held_out->size(), 5u);
  std::vector<float> row(static_cast<size_t>((*front_end)->output_dim()));
  for (size_t i = 0; i < held_out->size(); ++i) {
    const audio::Clip& clip = (*held_out)[i];
    ASSERT_TRUE((*front_end)->Apply(clip.samples, clip.sample_rate, row.data(), "clip").ok());
    const float* want = plan->test.x.row(static_cast<int64_t>(i));
    EXPECT_EQ(row, std::vector<float>(want, want + plan->test.x.cols())) << i;
  }
}

TEST(ClipCertificateTest, ACurvePointIsThePairCertificateOfTheSameChangeWrittenToFiles) {
  TempDir dir;
  const std::string clips = WriteWords(dir);
  TrainOptions o = RunOptions(dir, ClipConfig(clips, "test_groups: 'cat' seed: 1"), "w");
  absl::StatusOr<std::string> out = RunTraining(o, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(*out + "/" + kBundleFileName);
  ASSERT_TRUE(model.ok()) << model.status();
  double curve_at_100 = -1;
  for (const v1::InvarianceCurvePoint& p : (*model)->manifest().certificate().curve()) {
    if (p.generator() == "pitch" && p.magnitude() == 100) curve_at_100 = p.mean_discrepancy();
  }
  ASSERT_GT(curve_at_100, 0);
  // cat's first 8 clips in path order, the certificate's points, each 100
  // cents up as a 16-bit WAV file.
  std::set<std::string> cats;
  for (const auto& e : std::filesystem::recursive_directory_iterator(clips)) {
    if (e.path().filename().string().find("_cat_") != std::string::npos) cats.insert(e.path());
  }
  std::string manifest = "original,transformed\n";
  int written = 0;
  for (const std::string& path : cats) {
    if (written == 8) break;
    absl::StatusOr<audio::Clip> clip = audio::ReadWavFile(path, 1 << 20);
    ASSERT_TRUE(clip.ok()) << clip.status();
    absl::StatusOr<std::vector<float>> up =
        audio::PitchShift(clip->samples, clip->sample_rate, 100, path);
    ASSERT_TRUE(up.ok()) << up.status();
    const std::string shifted = absl::StrCat(dir.path(), "/up/", written++, ".wav");
    testing::WriteClip(shifted, *up, clip->sample_rate);
    absl::StrAppend(&manifest, path, ",", shifted, "\n");
  }
  const std::string pairs = dir.Write("pairs.csv", manifest);
  absl::StatusOr<v1::InvarianceCertificate> files = CertifyModelOnPairs(**model, pairs);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->num_points(), 8);
  // The files hold 16-bit samples, the curve floats: equal within that.
  EXPECT_NEAR(files->mean_discrepancy(), curve_at_100, 0.005 * curve_at_100);
  EXPECT_NEAR(files->mean_pairwise_difference(),
              (*model)->manifest().certificate().mean_pairwise_difference(), 1e-9);
}

}  // namespace
}  // namespace invariant::train
