// clips_test.cc: the CLI's clip files (client/cli/clips.h) without a server:
// --input lists and folders, the WAV check, request cutting by count and
// bytes, and finding the clip a server error names.
#include "client/cli/clips.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace invariant::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

constexpr char kWavHead[] = "RIFF\x24\0\0\0WAVEfmt ";

class ClipsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::path(::testing::TempDir()) /
        ("clips_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static std::vector<std::string> Ids(const std::vector<ClipFile>& files) {
    std::vector<std::string> ids;
    for (const ClipFile& f : files) ids.push_back(f.id);
    return ids;
  }
  fs::path dir_;
};

TEST_F(ClipsTest, FolderListsItsWavFilesSortedAndNotRecursively) {
  const std::string head(kWavHead, sizeof(kWavHead) - 1);
  Write("b.wav", head);
  Write("A.WAV", head);
  Write("c.wav", head);
  Write("notes.txt", "x");
  fs::create_directories(dir_ / "sub.wav");
  fs::create_directories(dir_ / "deeper");
  Write("deeper/d.wav", head);
  absl::StatusOr<std::vector<ClipFile>> files = ListClipFiles(dir_.string());
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Ids(*files), ElementsAre("A.WAV", "b.wav", "c.wav"));
  EXPECT_EQ((*files)[1].path, (dir_ / "b.wav").string());
}

TEST_F(ClipsTest, ListsKeepTheirOrderAndIdsAreThePathsAsWritten) {
  const std::string head(kWavHead, sizeof(kWavHead) - 1);
  const std::string z = Write("z.wav", head);
  const std::string a = Write("a.wav", head);
  absl::StatusOr<std::vector<ClipFile>> files = ListClipFiles(z + ", " + a);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Ids(*files), ElementsAre(z, a));
  files = ListClipFiles("-");
  ASSERT_TRUE(files.ok());
  EXPECT_THAT(Ids(*files), ElementsAre("<stdin>"));
}

TEST_F(ClipsTest, ListErrorsNameThePath) {
  absl::StatusOr<std::vector<ClipFile>> files = ListClipFiles((dir_ / "missing.wav").string());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(files.status().message(), HasSubstr("missing.wav: no such file"));
  files = ListClipFiles(dir_.string());  // empty folder
  EXPECT_THAT(files.status().message(), HasSubstr("no .wav files in this folder"));
  const std::string a = Write("a.wav", std::string(kWavHead, sizeof(kWavHead) - 1));
  EXPECT_THAT(ListClipFiles(a + ",,").status().message(), HasSubstr("an empty name"));
  EXPECT_THAT(ListClipFiles(a + ",-").status().message(), HasSubstr("must be the only input"));
}

TEST_F(ClipsTest, OnlyWavBytesAreRead) {
  const std::string good = Write("good.wav", std::string(kWavHead, sizeof(kWavHead) - 1) + "data");
  const std::string text = Write("text.wav", "id,x\n1,2\n");
  absl::StatusOr<std::string> bytes = ReadClipBytes({"good.wav", good});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->size(), sizeof(kWavHead) - 1 + 4);
  bytes = ReadClipBytes({"text.wav", text});
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bytes.status().message(), HasSubstr("text.wav: not a WAV file"));
  EXPECT_TRUE(LooksLikeWav(std::string("RF64\0\0\0\0WAVE", 12)));
  EXPECT_TRUE(LooksLikeWav(std::string("RIFX\0\0\0\0WAVE", 12)));
  EXPECT_FALSE(LooksLikeWav(std::string("RIFF\0\0\0\0AVI ", 12)));
  EXPECT_FALSE(LooksLikeWav("RIFF"));
}

TEST_F(ClipsTest, NamesClipsForWavNamesAndFolders) {
  EXPECT_TRUE(NamesClips("a.WAV"));
  EXPECT_TRUE(NamesClips("rows.csv,b.wav"));
  EXPECT_TRUE(NamesClips(dir_.string()));
  EXPECT_FALSE(NamesClips("rows.csv"));
  EXPECT_FALSE(NamesClips("-"));
}

TEST(ClipBatchTest, RequestsAreCutByCountAndBytesWithAtLeastOneClip) {
  const std::vector<int64_t> sizes = {10, 10, 10, 50, 10, 10};
  EXPECT_EQ(ClipBatchEnd(sizes, 0, 2, 100), 2);   // by count
  EXPECT_EQ(ClipBatchEnd(sizes, 0, 10, 30), 3);   // by bytes: 10+10+10
  EXPECT_EQ(ClipBatchEnd(sizes, 3, 10, 30), 4);   // a clip above the limit goes alone
  EXPECT_EQ(ClipBatchEnd(sizes, 4, 10, 100), 6);  // the end
  EXPECT_EQ(ClipBatchEnd(sizes, 6, 10, 100), 6);
}

TEST(ClipBatchTest, ClipIndexInServerMessages) {
  EXPECT_EQ(ClipIndexInMessage("inputs.clips[3].wav: not a WAV file"), 3);
  EXPECT_EQ(ClipIndexInMessage("inputs.clips[12]: 700 s, longer than 60"), 12);
  EXPECT_FALSE(ClipIndexInMessage("inputs.clips: 3 clips, more than 2").has_value());
  EXPECT_FALSE(ClipIndexInMessage("inputs.clips[x]").has_value());
  EXPECT_FALSE(ClipIndexInMessage("inputs.clips[-1]").has_value());
}

}  // namespace
}  // namespace invariant::cli
