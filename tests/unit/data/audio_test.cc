// The audio source: labels and groups from file names or a manifest, rows by
// the front end, errors that name the file or the field.
#include "train/data/audio.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/audio/front_end.h"
#include "core/audio/wav.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/unit/data/synthetic_clips.h"
#include "tests/unit/data/test_files.h"
#include "train/data/data_config.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kTestBins;
using testing::kTestFrames;
using testing::kTestFrontEnd;
using testing::SyntheticWord;
using testing::WriteClip;
using testing::WriteSpokenDigits;

// A fresh, empty folder for the running test.
std::string FreshDir(const std::string& leaf) {
  const std::string dir = ScratchPath(leaf);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

v1::AudioSource Source(const std::string& text) {
  v1::AudioSource source;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &source)) << text;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(kTestFrontEnd, source.mutable_front_end()));
  return source;
}

// The row the front end gives the WAV file at `path`.
std::vector<float> RowOf(const std::string& path) {
  auto spec = audio::AudioFrontEnd::Complete(Source("").front_end());
  EXPECT_TRUE(spec.ok()) << spec.status();
  auto front_end = audio::AudioFrontEnd::Create(*spec);
  EXPECT_TRUE(front_end.ok()) << front_end.status();
  auto clip = audio::ReadWavFile(path, 1 << 20);
  EXPECT_TRUE(clip.ok()) << clip.status();
  std::vector<float> row(static_cast<size_t>((*front_end)->output_dim()));
  EXPECT_TRUE((*front_end)->Apply(clip->samples, clip->sample_rate, row.data(), path).ok());
  return row;
}

TEST(FilePatternTest, PlaceholdersMatchUpToTheNextLiteralText) {
  auto p = FilePattern::Parse(kDefaultAudioFilePattern, "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->has_group());
  std::string label, group;
  ASSERT_TRUE(p->Match("3_jackson_12.wav", &label, &group));
  EXPECT_EQ(label, "3");
  EXPECT_EQ(group, "jackson");
  ASSERT_TRUE(p->Match("7_nicolas_0.x.wav", &label, &group));  // {*} reaches the last ".wav"
  EXPECT_EQ(label, "7");
  EXPECT_EQ(group, "nicolas");
  EXPECT_FALSE(p->Match("3_jackson.wav", &label, &group));   // no second "_"
  EXPECT_FALSE(p->Match("_jackson_1.wav", &label, &group));  // empty label
  EXPECT_FALSE(p->Match("3_jackson_1.WAV.txt", &label, &group));

  auto other = FilePattern::Parse("take{*}-{label}.wav", "f");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->has_group());
  ASSERT_TRUE(other->Match("take12-yes.wav", &label, nullptr));
  EXPECT_EQ(label, "yes");
  EXPECT_FALSE(other->Match("tak12-yes.wav", &label, nullptr));
}

TEST(FilePatternTest, BadPatternsAreRefusedNamingTheField) {
  for (const char* bad : {"{label}{group}.wav", "{label}_{speaker}.wav", "{group}_{*}.wav",
                          "{label}_{label}.wav", "{label}_{group}_{group}.wav", "{label.wav"}) {
    auto p = FilePattern::Parse(bad, "data.audio.file_pattern");
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(p.status().message()), HasSubstr("data.audio.file_pattern")) << bad;
  }
}

TEST(AudioSourceTest, FolderClipsAreLabelledByTheirNamesInPathOrder) {
  const std::string dir = FreshDir("clips");
  std::vector<std::string> paths = WriteSpokenDigits(dir, 3, {"ann", "bob"}, 2);
  // Labels "10" and "9": sorted as numbers, not as text.
  WriteClip(dir + "/zed/10_zed_0.wav", SyntheticWord(1, 3, 0, 16000), 16000);
  WriteClip(dir + "/zed/9_zed_0.wav", SyntheticWord(2, 3, 0, 16000), 16000);
  std::ofstream(dir + "/README.txt") << "not a clip";  // not *.wav: skipped
  // An upper-case extension is listed and matched as ".wav".
  std::filesystem::rename(dir + "/bob/2_bob_1.wav", dir + "/bob/2_bob_1.WAV");
  for (std::string& p : paths) {
    if (p == dir + "/bob/2_bob_1.wav") p = dir + "/bob/2_bob_1.WAV";
  }
  auto data = LoadAudio(Source(absl::StrCat("dir: '", dir, "'")), "data.audio");
  ASSERT_TRUE(data.ok()) << data.status();
  const Dataset& train = data->train;
  EXPECT_EQ(train.rows(), 14);
  EXPECT_EQ(data->test.rows(), 0);
  EXPECT_THAT(train.class_names, ElementsAre("0", "1", "2", "9", "10"));
  EXPECT_THAT(train.input_shape, ElementsAre(kTestBins, kTestFrames, 1));
  EXPECT_EQ(train.dim(), kTestBins * kTestFrames);
  EXPECT_EQ(data->front_end.frames(), kTestFrames);  // completed
  ASSERT_EQ(train.groups.size(), 14u);
  // Path order: ann/0_ann_0, ann/0_ann_1, ann/1_ann_0, ...
  EXPECT_EQ(train.groups[0], "ann");
  EXPECT_EQ(train.labels[0], 0);
  EXPECT_EQ(train.labels[2], 1);
  EXPECT_EQ(train.groups[6], "bob");
  EXPECT_EQ(train.groups[12], "zed");
  EXPECT_EQ(train.class_names[static_cast<size_t>(train.labels[12])], "10");
  EXPECT_EQ(train.class_names[static_cast<size_t>(train.labels[13])], "9");
  // Each row is the front end's row of its file, bit for bit (the parallel
  // decode keeps the file order).
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::vector<float> row = RowOf(paths[i]);
    ASSERT_EQ(std::vector<float>(train.x.row(static_cast<int64_t>(i)),
                                 train.x.row(static_cast<int64_t>(i)) + train.dim()),
              row)
        << paths[i];
  }
  // A 16 kHz clip is resampled to the front end's 8 kHz.
  EXPECT_EQ(std::vector<float>(train.x.row(12), train.x.row(12) + train.dim()),
            RowOf(dir + "/zed/10_zed_0.wav"));
}

TEST(AudioSourceTest, AFileThatDoesNotMatchThePatternIsNamed) {
  const std::string dir = FreshDir("clips");
  WriteSpokenDigits(dir, 2, {"ann"}, 1);
  WriteClip(dir + "/ann/stray.wav", SyntheticWord(0, 0, 0, 8000), 8000);
  auto data = LoadAudio(Source(absl::StrCat("dir: '", dir, "'")), "data.audio");
  EXPECT_EQ(data.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(data.status().message()), HasSubstr(dir + "/ann/stray.wav"));
  EXPECT_THAT(std::string(data.status().message()), HasSubstr("data.audio.file_pattern"));
}

TEST(AudioSourceTest, ABadWavIsNamed) {
  const std::string dir = FreshDir("clips");
  WriteSpokenDigits(dir, 2, {"ann"}, 2);
  std::ofstream(dir + "/ann/1_ann_9.wav") << "RIFF but not really a wave file";
  auto data = LoadAudio(Source(absl::StrCat("dir: '", dir, "'")), "data.audio");
  EXPECT_EQ(data.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(data.status().message()), HasSubstr(dir + "/ann/1_ann_9.wav"));
}

TEST(AudioSourceTest, AMissingFolderAndABadFrontEndAreRefused) {
  auto missing = LoadAudio(Source("dir: '/nonexistent/clips'"), "data.audio");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/clips"));
  v1::AudioSource source = Source("dir: '/tmp'");
  source.mutable_front_end()->set_frequency_bins(60);  // 200 Hz · 2^(59/6) > 4 kHz
  auto bad = LoadAudio(source, "data.audio");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("data.audio.front_end"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("frequency_bins"));
  auto both = LoadAudio(Source("dir: '/tmp' manifest: '/tmp/m.csv'"), "data.audio");
  EXPECT_THAT(std::string(both.status().message()), HasSubstr("exactly one of dir and manifest"));
}

TEST(AudioSourceTest, AManifestGivesLabelsGroupsAndTheTestPart) {
  const std::string dir = FreshDir("manifest");
  for (int i = 0; i < 6; ++i) {
    WriteClip(dir + "/audio/clip" + std::to_string(i) + ".wav",
              SyntheticWord(i % 2, i < 3 ? 0 : 2, i, 8000), 8000);
  }
  const std::string absolute = dir + "/audio/clip5.wav";
  std::ofstream(dir + "/clips.csv") << "path,label,group,split\n"
                                    << "audio/clip0.wav,yes,ann,train\n"
                                    << "# a comment line\n"
                                    << "audio/clip1.wav,no,ann,train\n"
                                    << "audio/clip2.wav,yes,ann,test\n"
                                    << "audio/clip3.wav,no,bob,train\n"
                                    << "audio/clip4.wav,yes,bob,train\n"
                                    << absolute << ",no,bob,test\n";
  auto data = LoadAudio(Source(absl::StrCat("manifest: '", dir, "/clips.csv'")), "data.audio");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->train.class_names, ElementsAre("no", "yes"));
  EXPECT_THAT(data->train.labels, ElementsAre(1, 0, 0, 1));
  EXPECT_THAT(data->train.groups, ElementsAre("ann", "ann", "bob", "bob"));
  EXPECT_THAT(data->test.labels, ElementsAre(1, 0));
  EXPECT_THAT(data->test.groups, ElementsAre("ann", "bob"));
  EXPECT_EQ(data->test.class_names, data->train.class_names);
  EXPECT_EQ(std::vector<float>(data->test.x.row(1), data->test.x.row(1) + data->test.dim()),
            RowOf(absolute));

  // class_names fixes the order; a label outside it names the clip.
  auto ordered =
      LoadAudio(Source(absl::StrCat("manifest: '", dir, "/clips.csv' class_names: ['yes', 'no']")),
                "data.audio");
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_THAT(ordered->train.labels, ElementsAre(0, 1, 1, 0));
  auto outside = LoadAudio(
      Source(absl::StrCat("manifest: '", dir, "/clips.csv' class_names: ['yes', 'maybe']")),
      "data.audio");
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outside.status().message()), HasSubstr("audio/clip1.wav"));
  EXPECT_THAT(std::string(outside.status().message()), HasSubstr("'no'"));
}

TEST(AudioSourceTest, ManifestErrorsNameTheLine) {
  const std::string dir = FreshDir("manifest");
  WriteClip(dir + "/a.wav", SyntheticWord(0, 0, 0, 8000), 8000);
  const auto error_of = [&](const std::string& text) {
    std::ofstream(dir + "/m.csv") << text;
    return std::string(LoadAudio(Source(absl::StrCat("manifest: '", dir, "/m.csv'")), "data.audio")
                           .status()
                           .message());
  };
  EXPECT_THAT(error_of("path,label,speaker\na.wav,x,ann\n"), HasSubstr("unknown column 'speaker'"));
  EXPECT_THAT(error_of("path,group\na.wav,ann\n"), HasSubstr("no 'label' column"));
  EXPECT_THAT(error_of("path,label,split\na.wav,x,dev\n"), HasSubstr("m.csv:2: split must be"));
  EXPECT_THAT(error_of("path,label,group\na.wav,x,\n"), HasSubstr("m.csv:2: empty group"));
  EXPECT_THAT(error_of("path,label,split\na.wav,x,test\n"),
              HasSubstr("every file is in the test part"));
  EXPECT_THAT(error_of("path,label\nmissing.wav,x\n"), HasSubstr(dir + "/missing.wav"));
}

TEST(AudioSourceTest, TheDataConfigCarriesTheFrontEndAndTheGroups) {
  const std::string dir = FreshDir("clips");
  WriteSpokenDigits(dir, 2, {"ann", "bob"}, 1);
  v1::DataConfig config;
  *config.mutable_audio() = Source(absl::StrCat("dir: '", dir, "'"));
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->test, nullptr);
  const RowSchema& s = parts->train->schema();
  ASSERT_TRUE(s.audio.has_value());
  EXPECT_EQ(s.audio->frames(), kTestFrames);
  EXPECT_THAT(s.groups, ElementsAre("ann", "ann", "bob", "bob"));
  EXPECT_THAT(s.input_shape, ElementsAre(kTestBins, kTestFrames, 1));
  auto all = ReadAllRows(*parts->train);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->groups, s.groups);

  config.mutable_rotated()->set_enabled(true);
  EXPECT_THAT(std::string(OpenDataConfig(config).status().message()),
              HasSubstr("data.rotated does not apply to data.audio"));
}

TEST(AudioSourceTest, AnAudioGroupMustFitTheFrontEnd) {
  RowSchema schema;
  schema.name = "clips";
  schema.dim = kTestBins * kTestFrames;
  v1::AudioTransformGroup g;
  g.set_frequency_bins(kTestBins);
  g.set_frames(kTestFrames);
  g.set_bins_per_octave(6);
  EXPECT_TRUE(CheckAudioGroup(schema, g, "encoder.group.audio").ok());  // rows of the right size
  schema.audio.emplace();
  schema.audio->set_frequency_bins(kTestBins);
  schema.audio->set_frames(kTestFrames);
  schema.audio->set_bins_per_octave(6);
  EXPECT_TRUE(CheckAudioGroup(schema, g, "encoder.group.audio").ok());
  g.set_bins_per_octave(12);
  EXPECT_THAT(std::string(CheckAudioGroup(schema, g, "encoder.group.audio").message()),
              HasSubstr("encoder.group.audio.bins_per_octave is 12"));
  g.set_bins_per_octave(6);
  g.set_frames(kTestFrames + 1);
  EXPECT_THAT(std::string(CheckAudioGroup(schema, g, "certificate.group.audio").message()),
              HasSubstr("certificate.group.audio.frames"));
  schema.audio.reset();
  EXPECT_THAT(std::string(CheckAudioGroup(schema, g, "encoder.group.audio").message()),
              HasSubstr("encoder.group.audio acts on frequency_bins 24 x frames 31"));
}

TEST(DatasetGroupsTest, SelectAndConcatKeepTheGroups) {
  Dataset d;
  d.name = "d";
  d.x = FloatMatrix::Zeros(3, 1);
  d.groups = {"a", "b", "c"};
  ASSERT_TRUE(ValidateDataset(d).ok());
  auto picked = SelectRows(d, {2, 0});
  ASSERT_TRUE(picked.ok());
  EXPECT_THAT(picked->groups, ElementsAre("c", "a"));
  auto both = ConcatRows(d, *picked);
  ASSERT_TRUE(both.ok());
  EXPECT_THAT(both->groups, ElementsAre("a", "b", "c", "c", "a"));
  Dataset plain = d;
  plain.groups.clear();
  EXPECT_THAT(std::string(ConcatRows(d, plain).status().message()), HasSubstr("group presence"));
  d.groups.pop_back();
  EXPECT_THAT(std::string(ValidateDataset(d).message()), HasSubstr("groups has 2 entries"));
}

}  // namespace
}  // namespace invariant::train
