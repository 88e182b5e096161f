// The empirical certificate over real (original, transformed) files
// (train/pipeline/pair_certificate.h): WAV clips through a sound model's own
// front end, IDX and text rows for other models, at training time
// (certificate.pairs) and on an existing model; errors name file and line.
#include "train/pipeline/pair_certificate.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/base/random.h"
#include "core/io/idx.h"
#include "core/model/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/data/synthetic_clips.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using testing::LoadVersion;
using testing::RunOptions;
using testing::TempDir;

constexpr int kRate = 8000;
constexpr int kHop = 64;
constexpr int kBins = 24, kFrames = 30;

// Clips from the start, untrimmed: delaying a clip by one hop moves its
// spectrogram by exactly one frame when its first and last frames are silent.
constexpr char kAudioConfig[] = R"pb(
  data {
    audio {
      dir: "DATA_DIR"
      front_end {
        sample_rate: 8000
        clip_seconds: 0.25
        clip_policy: CLIP_POLICY_START
        trim_silence: false
        normalisation: NORMALISATION_PEAK
        frame_length: 128
        hop_length: 64
        min_frequency: 200
        bins_per_octave: 6
        frequency_bins: 24
        max_clip_seconds: 2
      }
    }
  }
  split { test_groups: "cat" seed: 1 }
  encoder {
    cdf { num_templates: 6 num_bins: 8 range: 1.0 template_kind: TEMPLATE_DATA }
    group {
      audio {
        frequency_bins: 24
        frames: 30
        bins_per_octave: 6
        pitch_cents { uniform { low: -200 high: 200 } }
        time_shift { uniform { low: -2 high: 2 } }
      }
      enumerate: true
    }
    seed: 5
  }
  learner {
    kind: RIDGE
    task: TASK_CLASSIFICATION
    lambda_grid: [ 1e-2, 1 ]
  }
  certificate { num_points: 6 PAIRS }
)pb";

// A folder for a whole test suite (TempDir names itself after the current
// test, which SetUpTestSuite does not have), removed at its end.
class SuiteDir {
 public:
  SuiteDir()
      : path_(std::filesystem::temp_directory_path() /
              ("pair_certificate_test_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~SuiteDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = (path_ / name).string();
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

// A clean tone burst: `lead` silent samples, 0.1 s of tone, silence to 0.3 s.
std::vector<float> Burst(double hz, int lead) {
  std::vector<float> x(static_cast<size_t>(0.3 * kRate + lead), 0.0f);
  const int n = kRate / 10;
  for (int i = 0; i < n; ++i) {
    const double envelope = 0.5 - 0.5 * std::cos(2 * M_PI * i / n);
    x[static_cast<size_t>(lead + i)] =
        static_cast<float>(0.6 * envelope * std::sin(2 * M_PI * hz * i / kRate));
  }
  return x;
}

// DIR/pairs/{o,t}<k>.wav for three tones, t delayed by one hop, and
// DIR/pairs/pairs.csv listing them.
std::string WriteDelayedPairs(const SuiteDir& dir) {
  std::string csv = "original,transformed\n";
  const double tones[] = {400, 700, 1100};
  for (int k = 0; k < 3; ++k) {
    testing::WriteClip(absl::StrCat(dir.path(), "/pairs/o", k, ".wav"), Burst(tones[k], 256),
                       kRate);
    testing::WriteClip(absl::StrCat(dir.path(), "/pairs/t", k, ".wav"), Burst(tones[k], 256 + kHop),
                       kRate);
    absl::StrAppend(&csv, "o", k, ".wav,t", k, ".wav\n");
  }
  return dir.Write("pairs/pairs.csv", csv);
}

std::string AudioConfig(const std::string& clips, const std::string& pairs) {
  return absl::StrReplaceAll(
      kAudioConfig, {{"DATA_DIR", clips},
                     {"PAIRS", pairs.empty() ? "" : absl::StrCat("pairs: \"", pairs, "\"")}});
}

// One sound model shared by the tests (training it takes a moment).
class AudioPairsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new SuiteDir();
    version_ = new std::string();
    const std::string clips = dir_->path() + "/clips";
    testing::WriteSpokenDigits(clips, 3, {"ann", "bob", "cat"}, 3);
    pairs_ = new std::string(WriteDelayedPairs(*dir_));
    TrainOptions o;
    o.config_path = dir_->Write("digits.textproto", AudioConfig(clips, *pairs_));
    o.models_dir = dir_->path() + "/models";
    o.name = "digits";
    absl::StatusOr<std::string> out = RunTraining(o);
    ASSERT_TRUE(out.ok()) << out.status();
    *version_ = *out;
  }
  static void TearDownTestSuite() {
    delete version_;
    delete pairs_;
    delete dir_;
  }
  static SuiteDir* dir_;
  static std::string* pairs_;
  static std::string* version_;
};
SuiteDir* AudioPairsTest::dir_ = nullptr;
std::string* AudioPairsTest::pairs_ = nullptr;
std::string* AudioPairsTest::version_ = nullptr;

TEST_F(AudioPairsTest, AnExactlyInvariantMapGivesZeroAndAPlainOneDoesNot) {
  std::shared_ptr<const Model> model = LoadVersion(*version_);
  ASSERT_NE(model, nullptr);
  absl::StatusOr<PairRows> rows = ReadPairs(*pairs_, model->input_dim(), ModelInputReader(*model));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->original.rows(), 3);
  // The front end turned the one-hop delay into a shift by one frame.
  for (int64_t p = 0; p < 3; ++p) {
    for (int64_t f = 0; f < kBins; ++f) {
      EXPECT_EQ(rows->original.row(p)[f * kFrames + kFrames - 1], 0.0f);
      for (int64_t t = 1; t < kFrames; ++t) {
        ASSERT_EQ(rows->transformed.row(p)[f * kFrames + t],
                  rows->original.row(p)[f * kFrames + t - 1]);
      }
    }
  }
  // Per-bin sums over time: exactly invariant to that shift.
  BatchFunction sums = [](int64_t n, const float* x, float* out) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t f = 0; f < kBins; ++f) {
        double s = 0;
        for (int64_t t = 0; t < kFrames; ++t) s += x[i * kBins * kFrames + f * kFrames + t];
        out[i * kBins + f] = static_cast<float>(s);
      }
    }
  };
  BatchFunction plain = [](int64_t n, const float* x, float* out) {
    std::copy(x, x + n * kBins * kFrames, out);
  };
  absl::StatusOr<v1::InvarianceCertificate> zero = CertifyPairs(sums, kBins, *rows, *pairs_);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->mean_discrepancy(), 0.0);
  EXPECT_EQ(zero->max_discrepancy(), 0.0);
  EXPECT_EQ(zero->relative_mean_discrepancy(), 0.0);
  EXPECT_GT(zero->mean_pairwise_difference(), 0.0);
  EXPECT_EQ(zero->num_points(), 3);
  EXPECT_EQ(zero->method(), absl::StrCat("pairs: 3 (original, transformed) files from ", *pairs_));
  absl::StatusOr<v1::InvarianceCertificate> moved =
      CertifyPairs(plain, kBins * kFrames, *rows, *pairs_);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_GT(moved->mean_discrepancy(), 0.0);
  EXPECT_GT(moved->relative_mean_discrepancy(), 0.0);
  EXPECT_NEAR(moved->relative_mean_discrepancy(),
              moved->mean_discrepancy() / moved->mean_pairwise_difference(), 1e-12);
}

TEST_F(AudioPairsTest, TrainingStoresThePairsCertificateBesideTheGroupOne) {
  std::shared_ptr<const Model> model = LoadVersion(*version_);
  ASSERT_NE(model, nullptr);
  const v1::Manifest& m = model->manifest();
  // The enumerated audio group: 3 bin shifts × 5 frame shifts, every one checked.
  EXPECT_TRUE(m.certificate().exhaustive());
  EXPECT_EQ(m.certificate().num_group_elements(), 15);
  EXPECT_THAT(m.certificate().method(), HasSubstr("all 15 elements of"));
  ASSERT_TRUE(m.has_pairs_certificate());
  EXPECT_EQ(m.pairs_certificate().num_points(), 3);
  EXPECT_THAT(m.pairs_certificate().method(), HasSubstr("pairs: 3 (original, transformed)"));
  // Re-certified on the stored model: the same figures.
  absl::StatusOr<v1::InvarianceCertificate> again = RunPairsCertify(*version_, *pairs_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->mean_discrepancy(), m.pairs_certificate().mean_discrepancy());
  EXPECT_EQ(again->mean_pairwise_difference(), m.pairs_certificate().mean_pairwise_difference());

  // A clip paired with itself (listed twice: the spread counts it once).
  const std::string same = dir_->Write("pairs/same.csv",
                                       "original,transformed\no0.wav,o0.wav\n"
                                       "o0.wav,o0.wav\no1.wav,o1.wav\n");
  absl::StatusOr<v1::InvarianceCertificate> zero = RunPairsCertify(*version_, same);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->max_discrepancy(), 0.0);
  EXPECT_EQ(zero->num_points(), 3);
}

TEST_F(AudioPairsTest, ErrorsNameTheFileAndLine) {
  const std::string folder = dir_->path() + "/pairs";
  dir_->Write("pairs/not_a_clip.wav", "hello");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"path,label\no0.wav,t0.wav\n",
       {"bad_header.csv:1:", "the header must be original,transformed, got path,label"}},
      {"original,transformed\no0.wav,t0.wav\no1.wav,missing.wav\n",
       {"missing.csv:3:", "transformed file '", "missing.wav' does not exist"}},
      {"original,transformed\nnot_a_clip.wav,t0.wav\n",
       {"undecodable.csv:2:", "original file '", "not_a_clip.wav'"}},
      {"original,transformed\n", {"empty.csv", "no (original, transformed) pairs"}},
  };
  const char* names[] = {"bad_header.csv", "missing.csv", "undecodable.csv", "empty.csv"};
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string manifest = dir_->Write(absl::StrCat("pairs/", names[i]), cases[i].first);
    absl::StatusOr<v1::InvarianceCertificate> c = RunPairsCertify(*version_, manifest);
    ASSERT_FALSE(c.ok()) << names[i];
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << c.status();
    for (const std::string& part : cases[i].second) {
      EXPECT_THAT(std::string(c.status().message()), HasSubstr(part)) << names[i];
    }
  }
  absl::StatusOr<v1::InvarianceCertificate> none =
      RunPairsCertify(*version_, folder + "/no_such_manifest.csv");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("no_such_manifest.csv"));
}

// A row model (Xperm: CDF pooled over all 120 block permutations of 5 × 8
// values) read from IDX and text files: a block-permuted copy moves the
// scores only by rounding, another input moves them as far as the spread.
TEST(RowPairsTest, IdxAndTextRowsOfABlockPermutationInvariantModel) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, testing::kXpermConfig, "xperm");
  absl::StatusOr<std::string> out = RunTraining(o);
  ASSERT_TRUE(out.ok()) << out.status();
  std::shared_ptr<const Model> model = LoadVersion(*out);
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->input_dim(), 40);
  Rng rng(3);
  std::string invariant_csv = "original,transformed\n", other_csv = invariant_csv;
  for (int k = 0; k < 4; ++k) {
    std::vector<float> x(40), permuted(40), other(40);
    for (float& v : x) v = static_cast<float>(rng.Normal());
    for (float& v : other) v = static_cast<float>(rng.Normal());
    const int order[5] = {3, 0, 4, 1, 2};
    for (int b = 0; b < 5; ++b) {
      for (int j = 0; j < 8; ++j) permuted[b * 8 + j] = x[order[b] * 8 + j];
    }
    const std::string o_name = absl::StrCat("x", k, ".idx");
    ASSERT_TRUE(io::WriteIdx(absl::StrCat(dir.path(), "/", o_name), {1, 5, 8}, x, false).ok());
    const std::string p_name = absl::StrCat("p", k, ".txt");
    dir.Write(p_name, absl::StrJoin(permuted, ", ", [](std::string* text, float v) {
                absl::StrAppend(text, absl::StrFormat("%.9g", v));
              }));
    const std::string q_name = absl::StrCat("q", k, ".idx");
    ASSERT_TRUE(io::WriteIdx(absl::StrCat(dir.path(), "/", q_name), {1, 40}, other, true).ok());
    absl::StrAppend(&invariant_csv, o_name, ",", p_name, "\n");
    absl::StrAppend(&other_csv, o_name, ",", q_name, "\n");
  }
  absl::StatusOr<v1::InvarianceCertificate> inv =
      CertifyModelOnPairs(*model, dir.Write("invariant.csv", invariant_csv));
  ASSERT_TRUE(inv.ok()) << inv.status();
  absl::StatusOr<v1::InvarianceCertificate> moved =
      CertifyModelOnPairs(*model, dir.Write("other.csv", other_csv));
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_LT(inv->relative_mean_discrepancy(), 0.05);
  EXPECT_GT(moved->relative_mean_discrepancy(), 0.3);
  EXPECT_EQ(inv->num_points(), 4);

  // A row of the wrong length names the file and the line.
  dir.Write("short.txt", "1, 2, 3");
  absl::StatusOr<v1::InvarianceCertificate> bad = CertifyModelOnPairs(
      *model, dir.Write("bad.csv", "original,transformed\nx0.idx,p0.txt\nx1.idx,short.txt\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::AllOf(HasSubstr("bad.csv:3:"), HasSubstr("short.txt"),
                               HasSubstr("3 numbers, expected the model's input_dim 40")));
}

}  // namespace
}  // namespace invariant::train
