// audio_cli_test.cc: the REAL invariant-client binary sending WAV files to a
// model of sound served by the REAL invariant-server on 127.0.0.1: metadata
// shows the front end; featurize and predict on one file, a folder, a list
// and stdin give one line per file, ids = file names, in order, and the same
// numbers as the client library sent the same samples as int16_le; bad files
// exit 2 naming the file. The model and the WAV files come from
// audio_test_model.h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/cli/audio_test_model.h"
#include "tests/cli/cli_test_support.h"
#include "tests/integration/integration_env.h"

namespace invariant::cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_models::kAudioSampleRate;
using testing_models::TestTone;
using testing_models::Wav16;

constexpr int kClasses = 3;

class AudioCliTest : public testing_server::ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    auto path = testing_models::WriteAudioTestModel(models(), "words", 7);
    ASSERT_TRUE(path.ok()) << path.status();
    testing_models::TestModelSpec rf;  // a model of rows beside it
    WriteModel(rf);
    StartServer({});
    target_ = "--target=" + server_->target();
    std::filesystem::create_directories(dir_ / "clips");
  }

  ToolResult Cli(std::vector<std::string> args, const std::string& stdin_path = "") {
    return RunTool(INVARIANT_CLIENT_BINARY, args, dir_.string(), stdin_path);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a test tone of `seconds` at `rate` as clips/<name>; returns its samples.
  std::vector<int16_t> WriteTone(const std::string& name, double seconds, int rate, double f0,
                                 uint64_t seed) {
    std::vector<int16_t> pcm = TestTone(static_cast<int64_t>(seconds * rate), rate, f0, seed);
    WriteFile(Path("clips/" + name), Wav16(pcm, rate));
    return pcm;
  }

  // The fields of a CSV line.
  static std::vector<std::string> Fields(const std::string& line) {
    return absl::StrSplit(line, ',');
  }
  static float ParseFloat(const std::string& text) {
    float v = 0;
    EXPECT_TRUE(absl::SimpleAtof(text, &v)) << text;
    return v;
  }

  // The library's scores and classes for clips sent as int16_le.
  void LibraryPredict(const std::vector<std::vector<int16_t>>& pcm, const std::vector<int>& rates,
                      std::vector<float>* scores, std::vector<std::string>* classes) {
    std::vector<v1::AudioClip> clips;
    for (size_t i = 0; i < pcm.size(); ++i) clips.push_back(Int16Clip(pcm[i], rates[i]));
    const grpc::Status s = client_->PredictClips("words", clips, scores, classes);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // Checks CSV prediction lines (after the header) against the library's answers.
  static void ExpectPredictions(const std::vector<std::string>& lines,
                                const std::vector<std::string>& ids,
                                const std::vector<float>& scores,
                                const std::vector<std::string>& classes) {
    ASSERT_EQ(lines.size(), ids.size() + 1);
    EXPECT_EQ(lines[0], "id,predicted_class,predicted_index,score_yes,score_no,score_maybe");
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::vector<std::string> f = Fields(lines[i + 1]);
      ASSERT_EQ(f.size(), 3u + kClasses) << lines[i + 1];
      EXPECT_EQ(f[0], ids[i]);
      EXPECT_EQ(f[1], classes[i]);
      for (size_t j = 0; j < kClasses; ++j) {
        EXPECT_EQ(ParseFloat(f[3 + j]), scores[i * kClasses + j]) << ids[i] << " score " << j;
      }
    }
  }

  std::string target_;
};

TEST_F(AudioCliTest, MetadataShowsTheAudioFrontEnd) {
  ToolResult r = Cli({"metadata", "words", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  EXPECT_THAT(lines, ::testing::Contains("input_dim,224"));
  EXPECT_THAT(lines, ::testing::Contains("audio.sample_rate,8000"));
  EXPECT_THAT(lines, ::testing::Contains("audio.clip_seconds,0.25"));
  EXPECT_THAT(lines, ::testing::Contains("audio.clip_policy,centre"));
  EXPECT_THAT(lines, ::testing::Contains("audio.frequency_bins,16"));
  EXPECT_THAT(lines, ::testing::Contains("audio.frames,14"));
  EXPECT_THAT(lines, ::testing::Contains(::testing::StartsWith("audio.max_clip_seconds,")));

  r = Cli({"metadata", "words", target_, "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  google::protobuf::Struct json;
  ASSERT_TRUE(ParseJson(r.out, &json)) << r.out;
  const auto& audio = json.fields().at("audio").struct_value().fields();
  EXPECT_EQ(audio.at("sample_rate").number_value(), kAudioSampleRate);
  EXPECT_EQ(audio.at("frames").number_value(), 14);
  EXPECT_EQ(audio.at("normalisation").string_value(), "peak");
  EXPECT_FALSE(audio.at("trim_silence").bool_value());
  EXPECT_GT(audio.at("max_clip_seconds").number_value(), 0);

  // A model of rows has no audio fields.
  r = Cli({"metadata", "rf", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("audio.")));
}

TEST_F(AudioCliTest, PredictOneWavMatchesTheLibraryBitForBit) {
  const std::vector<int16_t> pcm = WriteTone("one.wav", 0.7, kAudioSampleRate, 300, 1);
  std::vector<float> scores;
  std::vector<std::string> classes;
  LibraryPredict({pcm}, {kAudioSampleRate}, &scores, &classes);
  const std::string file = Path("clips/one.wav");
  const ToolResult r = Cli({"predict", "words", target_, "--input=" + file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectPredictions(Lines(r.out), {file}, scores, classes);
}

TEST_F(AudioCliTest, PredictFolderGivesOneLinePerFileSortedByNameAcrossRequests) {
  // Written out of order, at two rates and three lengths; a text file and a
  // subfolder beside them are not clips.
  const auto c = WriteTone("c.wav", 0.3, 16000, 500, 3);
  const auto a = WriteTone("a.wav", 0.5, kAudioSampleRate, 200, 1);
  const auto b = WriteTone("B.WAV", 1.2, kAudioSampleRate, 800, 2);
  WriteFile(Path("clips/notes.txt"), "not a clip\n");
  std::filesystem::create_directories(dir_ / "clips" / "sub.wav");
  std::vector<float> scores;
  std::vector<std::string> classes;
  // Byte order: "B.WAV" < "a.wav" < "c.wav".
  LibraryPredict({b, a, c}, {kAudioSampleRate, kAudioSampleRate, 16000}, &scores, &classes);

  ToolResult r = Cli({"predict", "words", target_, "--input=" + Path("clips"), "--batch_size=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectPredictions(Lines(r.out), {"B.WAV", "a.wav", "c.wav"}, scores, classes);

  r = Cli({"predict", "words", target_, "--input=" + Path("clips"), "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  const std::vector<std::string> ids = {"B.WAV", "a.wav", "c.wav"};
  for (size_t i = 0; i < 3; ++i) {
    google::protobuf::Struct json;
    ASSERT_TRUE(ParseJson(out[i], &json)) << out[i];
    EXPECT_EQ(json.fields().at("row").number_value(), static_cast<double>(i));
    EXPECT_EQ(json.fields().at("id").string_value(), ids[i]);
    EXPECT_EQ(json.fields().at("predicted_class").string_value(), classes[i]);
  }
}

TEST_F(AudioCliTest, FeaturizeListAndStdinMatchTheLibrary) {
  const auto a = WriteTone("a.wav", 0.5, kAudioSampleRate, 250, 4);
  const auto b = WriteTone("b.wav", 0.25, 22050, 900, 5);
  std::vector<float> expected;
  ASSERT_TRUE(client_
                  ->FeaturizeClips("words", {Int16Clip(b, 22050), Int16Clip(a, kAudioSampleRate)},
                                   &expected)
                  .ok());
  const std::string list = Path("clips/b.wav") + "," + Path("clips/a.wav");
  ToolResult r = Cli({"featurize", "words", target_, "--input=" + list});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  EXPECT_THAT(out[0], ::testing::StartsWith("id,f_0,f_1,"));
  const size_t k = expected.size() / 2;
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<std::string> f = Fields(out[i + 1]);
    ASSERT_EQ(f.size(), k + 1);
    EXPECT_EQ(f[0], i == 0 ? Path("clips/b.wav") : Path("clips/a.wav"));
    for (size_t j = 0; j < k; ++j) EXPECT_EQ(ParseFloat(f[j + 1]), expected[i * k + j]);
  }

  r = Cli({"featurize", "words", target_, "--input=-"}, Path("clips/a.wav"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  out = Lines(r.out);
  ASSERT_EQ(out.size(), 2u) << r.out;
  const std::vector<std::string> f = Fields(out[1]);
  ASSERT_EQ(f.size(), k + 1);
  EXPECT_EQ(f[0], "<stdin>");
  for (size_t j = 0; j < k; ++j) EXPECT_EQ(ParseFloat(f[j + 1]), expected[k + j]);
}

TEST_F(AudioCliTest, FileThatIsNotWavExitsTwoNamingItBeforeAnyOutput) {
  WriteTone("a.wav", 0.5, kAudioSampleRate, 200, 1);
  WriteFile(Path("clips/b.wav"), "id,x\n1,2\n");
  const ToolResult r = Cli({"predict", "words", target_, "--input=" + Path("clips")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("b.wav: not a WAV file"));
  EXPECT_THAT(r.err, HasSubstr("takes audio clips"));
  EXPECT_EQ(r.out, "");
}

TEST_F(AudioCliTest, RowsForAnAudioModelAreRefusedClearly) {
  WriteFile(Path("rows.csv"), "1,2,3\n4,5,6\n");
  ToolResult r = Cli({"predict", "words", target_, "--input=" + Path("rows.csv")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model 'words' version 1 takes audio clips: --input=FILE.wav"));
  EXPECT_THAT(r.err, HasSubstr("rows.csv"));
  EXPECT_EQ(r.out, "");

  WriteTone("a.wav", 0.5, kAudioSampleRate, 200, 1);
  r = Cli({"predict", "words", target_, "--input=" + Path("clips"), "--id_column=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--id_column"));

  // And the other way round: WAV files for a model of rows.
  r = Cli({"predict", "rf", target_, "--input=" + Path("clips/a.wav")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("takes rows of input_dim=16 values, not audio clips or image files"));
}

TEST_F(AudioCliTest, ClipTheServerRefusesExitsTwoNamingTheFile) {
  WriteTone("a.wav", 0.5, kAudioSampleRate, 200, 1);
  // A RIFF/WAVE header and nothing after it: the client sends it, the server
  // cannot decode it.
  WriteFile(Path("clips/b.wav"), std::string("RIFF\x04\0\0\0WAVE", 12));
  // Longer than the model's max_clip_seconds (10 s).
  WriteTone("c.wav", 11, kAudioSampleRate, 200, 1);
  for (const std::string& bad : {"b.wav", "c.wav"}) {
    const ToolResult r = Cli({"predict", "words", target_,
                              "--input=" + Path("clips/a.wav") + "," + Path("clips/" + bad)});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(Path("clips/" + bad) + ": predict: INVALID_ARGUMENT: "));
    EXPECT_THAT(r.err, Not(HasSubstr("a.wav:")));
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(AudioCliTest, RandomRowsAreSeededNoiseClips) {
  const ToolResult r1 =
      Cli({"predict", "words", target_, "--random_rows=3", "--seed=9", "--batch_size=2"});
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  const std::vector<std::string> out = Lines(r1.out);
  ASSERT_EQ(out.size(), 4u) << r1.out;
  EXPECT_EQ(out[0], "predicted_class,predicted_index,score_yes,score_no,score_maybe");
  EXPECT_NE(out[1], out[2]);  // independent clips
  const ToolResult r2 = Cli({"predict", "words", target_, "--random_rows=3", "--seed=9"});
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_EQ(r2.out, r1.out);
  const ToolResult r3 = Cli({"predict", "words", target_, "--random_rows=3", "--seed=10"});
  ASSERT_EQ(r3.exit_code, 0) << r3.err;
  EXPECT_NE(r3.out, r1.out);
}

}  // namespace
}  // namespace invariant::cli_test
