// The model repository layout: one version-name rule for readers and
// writers, labels, and staging with atomic publish.
#include "core/model/repository.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace invariant {
namespace {

namespace fs = std::filesystem;

class RepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("repository_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void MakeVersionDir(const std::string& dir_name, bool with_bundle) {
    fs::create_directories(root_ / "m" / dir_name);
    if (with_bundle) std::ofstream(root_ / "m" / dir_name / kBundleFileName) << "x";
  }
  fs::path root_;
};

TEST(ParseVersionTest, OnlyPlainPositiveDecimalNumbersAreVersions) {
  EXPECT_EQ(ParseVersion("1"), 1);
  EXPECT_EQ(ParseVersion("123456789012345678"), 123456789012345678);
  EXPECT_EQ(ParseVersion("999999999999999999"), kMaxVersion);
  // Issue 50: "01" served as version 1 while its page was looked up at "1/",
  // and with both "1" and "01" the directory order decided: one spelling.
  for (const char* not_a_version : {"", "0", "00", "01", "007", "+3", "-3", " 3", "3 ", "3a", "1e3",
                                    ".tmp-3-42", "1234567890123456789"}) {
    EXPECT_EQ(ParseVersion(not_a_version), std::nullopt) << "'" << not_a_version << "'";
  }
}

TEST_F(RepositoryTest, ReadersAndWritersAgreeOnWhichDirectoriesAreVersions) {
  MakeVersionDir("1", true);
  MakeVersionDir("3", false);  // still being written by hand: listed for writers only
  MakeVersionDir("0", true);
  MakeVersionDir("+5", true);
  MakeVersionDir(".tmp-9-1", true);
  MakeVersionDir("01", true);
  fs::create_directories(root_ / ".hidden" / "1");  // issue 50: served as a model
  std::ofstream(root_ / ".hidden" / "1" / kBundleFileName) << "x";
  const std::string model_dir = ModelDir(root_.string(), "m");
  EXPECT_EQ(*ListVersionDirs(model_dir), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(*NextVersion(model_dir), 4);
  const std::map<int64_t, VersionFile> published = ListPublishedVersions(root_.string(), "m");
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(published.at(1).bundle_path, BundlePath(root_.string(), "m", 1));
  EXPECT_EQ(*ListModelNames(root_.string()), std::vector<std::string>{"m"});
  EXPECT_EQ(*NextVersion(ModelDir(root_.string(), "absent")), 1);
  EXPECT_EQ(ListModelNames((root_ / "absent").string()).status().code(),
            absl::StatusCode::kNotFound);
}

// Issue 50: a trainer published a 19-digit version the server never saw,
// after which every training failed with ALREADY_EXISTS.
TEST_F(RepositoryTest, NoVersionPastTheHighestIsWritten) {
  MakeVersionDir("999999999999999999", true);
  const std::string model_dir = ModelDir(root_.string(), "m");
  const absl::StatusOr<int64_t> next = NextVersion(model_dir);
  EXPECT_EQ(next.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(next.status().message().find("pass --version"), std::string::npos) << next.status();
  EXPECT_EQ(StagedVersion::Create(model_dir, kMaxVersion + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Issue 50: killed trainers left their .tmp-* staging folders forever.
TEST_F(RepositoryTest, TheNextWriterRemovesAKilledWritersStagingFolder) {
  const pid_t dead = fork();  // a pid that no longer exists once reaped
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string model_dir = ModelDir(root_.string(), "m");
  const fs::path old_dead = fs::path(model_dir) / (".tmp-4-" + std::to_string(dead));
  const fs::path new_dead = fs::path(model_dir) / (".tmp-5-" + std::to_string(dead));
  const fs::path old_alive = fs::path(model_dir) / (".tmp-6-" + std::to_string(getpid()));
  for (const fs::path& p : {old_dead, new_dead, old_alive}) fs::create_directories(p);
  const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(old_dead, two_hours_ago);
  fs::last_write_time(old_alive, two_hours_ago);
  auto staged = StagedVersion::Create(model_dir, 7);
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_FALSE(fs::exists(old_dead)) << "a killed writer's old staging folder stays";
  EXPECT_TRUE(fs::exists(new_dead)) << "a recent folder may be a live writer's elsewhere";
  EXPECT_TRUE(fs::exists(old_alive)) << "a live writer's folder was removed";
}

TEST_F(RepositoryTest, LabelsSkipCommentsAndMalformedLines) {
  fs::create_directories(root_ / "m");
  std::ofstream(root_ / "m" / kLabelsFileName) << "# comment\n\nstable 2\ncanary 0\nbad\nnext 5\n";
  EXPECT_EQ(ReadLabels(root_.string(), "m"),
            (std::map<std::string, int64_t>{{"next", 5}, {"stable", 2}}));
  EXPECT_TRUE(ReadLabels(root_.string(), "absent").empty());
}

TEST_F(RepositoryTest, StagedVersionIsInvisibleUntilPublishedAndNeverOverwrites) {
  const std::string model_dir = ModelDir(root_.string(), "m");
  {
    auto staged = StagedVersion::Create(model_dir, 2);
    ASSERT_TRUE(staged.ok()) << staged.status();
    std::ofstream(fs::path(staged->path()) / kBundleFileName) << "x";
    EXPECT_TRUE(ListPublishedVersions(root_.string(), "m").empty());
    EXPECT_TRUE(ListVersionDirs(model_dir)->empty());
    ASSERT_TRUE(staged->Publish().ok());
    EXPECT_EQ(ListPublishedVersions(root_.string(), "m").count(2), 1u);
  }
  {
    auto abandoned = StagedVersion::Create(model_dir, 3);
    ASSERT_TRUE(abandoned.ok());
  }
  EXPECT_EQ(*ListVersionDirs(model_dir), std::vector<int64_t>{2});
  EXPECT_EQ(std::distance(fs::directory_iterator(model_dir), fs::directory_iterator()), 1);
  EXPECT_EQ(StagedVersion::Create(model_dir, 2).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(StagedVersion::Create(model_dir, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RepositoryTest, BundlesResolvingOutsideTheRootAreRefused) {
  const fs::path outside = fs::path(root_.string() + "_outside");
  const fs::path sibling = fs::path(root_.string() + "2");  // shares the root's prefix
  fs::create_directories(outside / "v");
  fs::create_directories(sibling);
  std::ofstream(outside / "passwd") << "root:x:0:0:root:/root:/bin/bash\n";
  std::ofstream(outside / "v" / kBundleFileName) << "bundle";
  std::ofstream(sibling / kBundleFileName) << "bundle";
  fs::create_directories(root_ / "m" / "1");
  fs::create_symlink(outside / "passwd", root_ / "m" / "1" / kBundleFileName);  // file link
  fs::create_symlink(outside / "v", root_ / "m" / "2");                         // version dir link
  fs::create_directories(root_ / "m" / "3");
  fs::create_symlink(sibling / kBundleFileName, root_ / "m" / "3" / kBundleFileName);
  for (int64_t v : {1, 2, 3}) {
    const absl::StatusOr<std::string> resolved =
        ResolveInsideRoot(root_.string(), BundlePath(root_.string(), "m", v));
    ASSERT_EQ(resolved.status().code(), absl::StatusCode::kPermissionDenied) << v;
    EXPECT_NE(resolved.status().message().find("outside the models root"), std::string::npos);
  }
  // The readers still list them (so the refusal is reported as a failed load).
  EXPECT_EQ(ListPublishedVersions(root_.string(), "m").size(), 3u);
  fs::remove_all(outside);
  fs::remove_all(sibling);
}

TEST_F(RepositoryTest, SymlinksInsideTheRootAndASymlinkedRootAreAllowed) {
  fs::create_directories(root_ / "store");
  std::ofstream(root_ / "store" / kBundleFileName) << "bundle";
  fs::create_directories(root_ / "m" / "1");
  fs::create_symlink(root_ / "store" / kBundleFileName, root_ / "m" / "1" / kBundleFileName);
  MakeVersionDir("2", true);
  const absl::StatusOr<std::string> linked =
      ResolveInsideRoot(root_.string(), BundlePath(root_.string(), "m", 1));
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_EQ(*linked, fs::canonical(root_ / "store" / kBundleFileName).string());
  const fs::path root_link = fs::path(root_.string() + "_link");
  fs::remove(root_link);
  fs::create_directory_symlink(root_, root_link);
  const absl::StatusOr<std::string> via_link =
      ResolveInsideRoot(root_link.string(), BundlePath(root_link.string(), "m", 2));
  EXPECT_TRUE(via_link.ok()) << via_link.status();
  EXPECT_EQ(ResolveInsideRoot(root_.string(), BundlePath(root_.string(), "m", 9)).status().code(),
            absl::StatusCode::kNotFound);
  fs::remove(root_link);
}

}  // namespace
}  // namespace invariant
