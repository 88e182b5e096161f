// Publishing a trained version: a report that cannot be written says why.
#include "train/pipeline/publish.h"

#include <unistd.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Issue 50: a failed report write said only "write failed".
TEST(PublishTest, AReportThatCannotBeWrittenSaysWhy) {
  const fs::path root = fs::path(::testing::TempDir()) / ("publish_" + std::to_string(getpid()));
  fs::remove_all(root);
  absl::StatusOr<StagedVersion> staged =
      StageVersion((root / "m").string(), 1, nullptr, v1::Manifest());
  ASSERT_TRUE(staged.ok()) << staged.status();
  fs::create_symlink("/dev/full", fs::path(staged->path()) / "report.json");  // ENOSPC
  const absl::StatusOr<std::string> published = PublishVersion(*staged, TrainReport(), false);
  EXPECT_EQ(published.status().code(), absl::StatusCode::kResourceExhausted) << published.status();
  EXPECT_THAT(std::string(published.status().message()), HasSubstr("report.json: write failed"));
  EXPECT_THAT(std::string(published.status().message()), HasSubstr("No space left on device"));
  EXPECT_FALSE(fs::exists(root / "m" / "1")) << "a version was published without its report";
  fs::remove_all(root);
}

}  // namespace
}  // namespace invariant::train
