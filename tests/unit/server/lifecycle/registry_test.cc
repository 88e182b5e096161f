#include "server/lifecycle/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/server/testing/fake_servable.h"

namespace invariant::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("registry_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void WriteVersion(const std::string& name, int64_t version, const std::string& content) {
    const fs::path dir = root_ / name / std::to_string(version);
    fs::create_directories(dir);
    std::ofstream(dir / "model.bundle") << content;
  }

  std::unique_ptr<ModelRegistry<FakeModel>> Make(const std::string& policy = "latest") {
    RegistryOptions options;
    options.root = root_.string();
    options.policy = *ParseVersionPolicy(policy);
    options.removal_grace = absl::Seconds(30);
    options.clock = [this] { return now_; };
    ModelRegistry<FakeModel>::Observers observers;
    observers.on_failed = [this](const std::string&, int64_t, const absl::Status&) { ++failures_; };
    return std::make_unique<ModelRegistry<FakeModel>>(options, LoadFake, observers);
  }

  static VersionState StateOf(const ModelRegistry<FakeModel>& registry, const std::string& name,
                              int64_t version) {
    const auto snapshot = registry.Snapshot();
    for (const auto& info : snapshot.at(name)) {
      if (info.version == version) return info.state;
    }
    ADD_FAILURE() << "no version " << version;
    return VersionState::kUnloaded;
  }

  fs::path root_;
  absl::Time now_ = absl::FromUnixSeconds(1000);
  int failures_ = 0;
};

TEST_F(RegistryTest, LoadsNewestVersionAndServesIt) {
  WriteVersion("m", 1, "10");
  WriteVersion("m", 2, "20");
  auto registry = Make();
  const ScanReport report = registry->Rescan();
  EXPECT_EQ(report.loaded, 1);
  auto handle = registry->Lookup("m");
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_EQ(handle->version, 2);
  EXPECT_EQ(handle->servable->payload, 20);
  EXPECT_TRUE(registry->Serving());
  // Version 1 was never wanted by "latest", so it is not served.
  EXPECT_EQ(registry->Lookup("m", 1).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RegistryTest, FailedLoadKeepsOldVersionServing) {
  WriteVersion("m", 1, "10");
  auto registry = Make();
  registry->Rescan();
  WriteVersion("m", 2, "corrupt");
  const ScanReport report = registry->Rescan();
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(report.unloaded, 0);
  EXPECT_EQ(failures_, 1);
  auto handle = registry->Lookup("m");
  ASSERT_TRUE(handle.ok());
  EXPECT_EQ(handle->version, 1);
  EXPECT_EQ(StateOf(*registry, "m", 2), VersionState::kFailed);
  bool found = false;
  const auto snapshot = registry->Snapshot();
  for (const auto& info : snapshot.at("m")) {
    if (info.version == 2) {
      EXPECT_THAT(info.error, HasSubstr("checksum mismatch"));
      found = true;
    }
  }
  EXPECT_TRUE(found);
  const absl::Status explicit_v2 = registry->Lookup("m", 2).status();
  EXPECT_EQ(explicit_v2.code(), absl::StatusCode::kNotFound);
  // The reason (which may name paths and quote file bytes) stays in the
  // snapshot (server log, ModelAdmin): the data-path lookup only says "failed".
  EXPECT_THAT(explicit_v2.message(), HasSubstr("version 2 is not ready (failed to load"));
  EXPECT_THAT(explicit_v2.message(), Not(HasSubstr("checksum")));
  EXPECT_THAT(explicit_v2.message(), Not(HasSubstr(root_.string())));
  // An unchanged failed file is not retried; a fixed one is, and then replaces v1.
  EXPECT_EQ(registry->Rescan().failed, 0);
  WriteVersion("m", 2, "22");
  fs::last_write_time(
      root_ / "m" / "2" / "model.bundle",
      fs::last_write_time(root_ / "m" / "2" / "model.bundle") + std::chrono::seconds(5));
  const ScanReport fixed = registry->Rescan();
  EXPECT_EQ(fixed.loaded, 1);
  EXPECT_EQ(fixed.unloaded, 1);
  EXPECT_EQ(registry->Lookup("m")->servable->payload, 22);
  EXPECT_EQ(StateOf(*registry, "m", 1), VersionState::kUnloaded);
}

TEST_F(RegistryTest, LookupEchoesABoundedPrefixOfUnknownNamesAndLabels) {
  WriteVersion("m", 1, "10");
  auto registry = Make();
  registry->Rescan();
  const std::string long_input(8000, 'x');
  for (const absl::Status& status :
       {registry->Lookup(long_input).status(), registry->Lookup("m", 0, long_input).status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(status.message(), HasSubstr("...(8000 bytes)"));
    EXPECT_LT(status.message().size(), 300u) << status.message();
  }
}

TEST_F(RegistryTest, EmptyOrFailingScanKeepsLastGoodVersion) {
  WriteVersion("m", 1, "10");
  auto registry = Make();
  registry->Rescan();
  fs::remove_all(root_ / "m");
  now_ += absl::Hours(1);
  registry->Rescan();
  now_ += absl::Hours(1);
  EXPECT_EQ(registry->Rescan().unloaded, 0);
  ASSERT_TRUE(registry->Lookup("m").ok());
  // Even the whole root vanishing (listing fails) unloads nothing.
  fs::remove_all(root_);
  now_ += absl::Hours(1);
  EXPECT_EQ(registry->Rescan().unloaded, 0);
  EXPECT_EQ(registry->Lookup("m")->servable->payload, 10);
}

TEST_F(RegistryTest, RemovedVersionUnloadsOnlyAfterGrace) {
  WriteVersion("m", 1, "10");
  WriteVersion("m", 2, "20");
  auto registry = Make("all");
  EXPECT_EQ(registry->Rescan().loaded, 2);
  fs::remove_all(root_ / "m" / "2");
  EXPECT_EQ(registry->Rescan().unloaded, 0);  // grace starts now
  now_ += absl::Seconds(29);
  EXPECT_EQ(registry->Rescan().unloaded, 0);
  EXPECT_TRUE(registry->Lookup("m", 2).ok());
  now_ += absl::Seconds(1);
  EXPECT_EQ(registry->Rescan().unloaded, 1);
  EXPECT_EQ(registry->Lookup("m", 2).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry->Lookup("m")->version, 1);
}

TEST_F(RegistryTest, ReappearingVersionCancelsRemoval) {
  WriteVersion("m", 1, "10");
  WriteVersion("m", 2, "20");
  auto registry = Make("all");
  registry->Rescan();
  fs::remove_all(root_ / "m" / "1");
  registry->Rescan();
  WriteVersion("m", 1, "10");
  now_ += absl::Minutes(5);
  EXPECT_EQ(registry->Rescan().unloaded, 0);
  EXPECT_TRUE(registry->Lookup("m", 1).ok());
}

TEST_F(RegistryTest, LatestNKeepsNewestN) {
  for (int v = 1; v <= 4; ++v) WriteVersion("m", v, std::to_string(v));
  auto registry = Make("latest:2");
  EXPECT_EQ(registry->Rescan().loaded, 2);
  EXPECT_TRUE(registry->Lookup("m", 4).ok());
  EXPECT_TRUE(registry->Lookup("m", 3).ok());
  EXPECT_FALSE(registry->Lookup("m", 2).ok());
  WriteVersion("m", 5, "5");
  const ScanReport report = registry->Rescan();
  EXPECT_EQ(report.loaded, 1);
  EXPECT_EQ(report.unloaded, 1);
  EXPECT_EQ(StateOf(*registry, "m", 3), VersionState::kUnloaded);
  EXPECT_EQ(registry->Lookup("m")->version, 5);
}

TEST_F(RegistryTest, LatestNWithACorruptNewestVersionKeepsServingTheNVersionsItHad) {
  for (int v = 1; v <= 2; ++v) WriteVersion("m", v, std::to_string(v));
  auto registry = Make("latest:2");
  EXPECT_EQ(registry->Rescan().loaded, 2);
  WriteVersion("m", 3, "corrupt");
  ScanReport report = registry->Rescan();
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(report.unloaded, 0);
  EXPECT_TRUE(registry->Lookup("m", 1).ok());
  EXPECT_TRUE(registry->Lookup("m", 2).ok());
  EXPECT_EQ(registry->Lookup("m")->version, 2);
  // A good version 4: the newest two are 4 and 3 (failed), so 2 stays in for 3.
  WriteVersion("m", 4, "4");
  report = registry->Rescan();
  EXPECT_EQ(report.loaded, 1);
  EXPECT_EQ(report.unloaded, 1);
  EXPECT_EQ(StateOf(*registry, "m", 1), VersionState::kUnloaded);
  EXPECT_TRUE(registry->Lookup("m", 2).ok());
  EXPECT_EQ(registry->Lookup("m")->version, 4);
}

TEST_F(RegistryTest, AllPolicyServesEveryVersion) {
  for (int v = 1; v <= 3; ++v) WriteVersion("m", v, std::to_string(v * 100));
  auto registry = Make("all");
  EXPECT_EQ(registry->Rescan().loaded, 3);
  for (int v = 1; v <= 3; ++v) EXPECT_EQ(registry->Lookup("m", v)->servable->payload, v * 100);
}

TEST_F(RegistryTest, LabelsPickVersions) {
  WriteVersion("m", 1, "10");
  WriteVersion("m", 2, "20");
  std::ofstream(root_ / "m" / "labels.txt") << "# comment\nstable 1\ncanary 2\nbroken x\n";
  auto registry = Make("all");
  registry->Rescan();
  EXPECT_EQ(registry->Lookup("m", 0, "stable")->version, 1);
  EXPECT_EQ(registry->Lookup("m", 0, "canary")->version, 2);
  EXPECT_EQ(registry->Lookup("m", 0, "latest")->version, 2);
  const absl::Status missing = registry->Lookup("m", 0, "nightly").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("[canary, stable]"));
  // A version with a label: they must agree.
  EXPECT_EQ(registry->Lookup("m", 1, "stable")->version, 1);
  const absl::Status unknown = registry->Lookup("m", 2, "nightly").status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(),
              HasSubstr("model.version_label: model 'm' has no label 'nightly'"));
  const absl::Status disagree = registry->Lookup("m", 2, "stable").status();
  EXPECT_EQ(disagree.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(disagree.message(), HasSubstr("names version 1, but model.version asks for 2"));
}

TEST_F(RegistryTest, UnknownModelNamesTheKnownOnes) {
  WriteVersion("alpha", 1, "1");
  auto registry = Make();
  registry->Rescan();
  const absl::Status status = registry->Lookup("beta").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("no model named 'beta'; expected one of [alpha]"));
}

TEST_F(RegistryTest, ServingOnceAModelIsReadyAndANeverLoadedModelDoesNotTakeItOut) {
  WriteVersion("a", 1, "corrupt");
  auto registry = Make();
  EXPECT_FALSE(registry->Serving());  // nothing scanned yet
  registry->Rescan();
  EXPECT_FALSE(registry->Serving());  // nothing to serve
  WriteVersion("b", 1, "1");
  registry->Rescan();
  EXPECT_TRUE(registry->Serving());  // "a" never loaded: it does not count
  EXPECT_TRUE(registry->ModelReady("b"));
  EXPECT_FALSE(registry->ModelReady("a"));
  EXPECT_FALSE(registry->ModelReady("unknown"));
  WriteVersion("a", 2, "2");
  registry->Rescan();
  EXPECT_TRUE(registry->ModelReady("a"));
  EXPECT_TRUE(registry->Serving());
}

// Sets the bundle's mtime `seconds` later, so its stamp surely changes.
void Touch(const fs::path& bundle, int seconds) {
  fs::last_write_time(bundle, fs::last_write_time(bundle) + std::chrono::seconds(seconds));
}

TEST_F(RegistryTest, ABundleChangedInPlaceIsLoadedAgainAndARefusedChangeKeepsTheOldBits) {
  WriteVersion("m", 1, "10");
  auto registry = Make();
  registry->Rescan();
  const fs::path bundle = root_ / "m" / "1" / "model.bundle";
  auto held = registry->Lookup("m");
  ASSERT_TRUE(held.ok());
  // Overwritten with a good file: loaded again, the new bits serve.
  std::ofstream(bundle) << "11";
  Touch(bundle, 5);
  ScanReport report = registry->Rescan();
  EXPECT_EQ(report.loaded, 1);
  EXPECT_EQ(report.unloaded, 0);
  EXPECT_EQ(registry->Lookup("m")->servable->payload, 11);
  EXPECT_EQ(held->servable->payload, 10);  // a request holding the old bits keeps them
  // Overwritten with a bad file: refused, the loaded bits keep serving.
  std::ofstream(bundle) << "corrupt";
  Touch(bundle, 10);
  report = registry->Rescan();
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(failures_, 1);
  auto handle = registry->Lookup("m");
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_EQ(handle->servable->payload, 11);
  EXPECT_EQ(StateOf(*registry, "m", 1), VersionState::kReady);
  EXPECT_THAT(registry->Snapshot().at("m").front().error,
              HasSubstr("changed in place and was refused"));
  EXPECT_TRUE(registry->Serving());
  // The refused file is not retried until it changes again.
  EXPECT_EQ(registry->Rescan().failed, 0);
  std::ofstream(bundle) << "12";
  Touch(bundle, 15);
  EXPECT_EQ(registry->Rescan().loaded, 1);
  EXPECT_EQ(registry->Lookup("m")->servable->payload, 12);
  EXPECT_EQ(registry->Snapshot().at("m").front().error, "");
}

struct timespec ChangeTime(const fs::path& file) {
  struct stat st;
  EXPECT_EQ(::stat(file.c_str(), &st), 0) << file;
  return st.st_ctim;
}

// `cp -p` over a serving bundle: same inode, same size, mtime set back to the
// old value. Only the change time (set by the kernel on every write) moves.
TEST_F(RegistryTest, ABundleRewrittenWithSameSizeAndMtimeIsLoadedAgain) {
  WriteVersion("m", 1, "10");
  auto registry = Make();
  registry->Rescan();
  const fs::path bundle = root_ / "m" / "1" / "model.bundle";
  const fs::file_time_type mtime = fs::last_write_time(bundle);
  const struct timespec loaded_ctime = ChangeTime(bundle);
  // The kernel's change time has a coarse clock: rewrite until it moved (a
  // condition, not a time margin; it moves within a clock tick).
  do {
    std::ofstream(bundle) << "12";
    fs::last_write_time(bundle, mtime);
  } while (ChangeTime(bundle).tv_sec == loaded_ctime.tv_sec &&
           ChangeTime(bundle).tv_nsec == loaded_ctime.tv_nsec);
  ASSERT_EQ(fs::file_size(bundle), 2u);
  ASSERT_EQ(fs::last_write_time(bundle), mtime);
  EXPECT_EQ(registry->Rescan().loaded, 1);
  EXPECT_EQ(registry->Lookup("m")->servable->payload, 12);
}

TEST_F(RegistryTest, RetiredVersionsAreBounded) {
  auto registry = Make();
  constexpr int kVersions = kMaxRetiredVersions + 5;
  for (int v = 1; v <= kVersions; ++v) {
    WriteVersion("m", v, v % 3 == 0 ? "corrupt" : std::to_string(v));
    registry->Rescan();
  }
  const auto versions = registry->Snapshot().at("m");
  int retired = 0;
  for (const auto& info : versions) {
    if (info.state == VersionState::kUnloaded || info.state == VersionState::kFailed) ++retired;
  }
  EXPECT_EQ(retired, kMaxRetiredVersions);
  EXPECT_EQ(versions.front().version, kVersions);  // the newest are kept
  EXPECT_EQ(registry->Lookup("m")->version, kVersions);
}

TEST_F(RegistryTest, HandleOutlivesUnload) {
  WriteVersion("m", 1, "10");
  auto registry = Make();
  registry->Rescan();
  auto handle = registry->Lookup("m");
  ASSERT_TRUE(handle.ok());
  WriteVersion("m", 2, "20");
  EXPECT_EQ(registry->Rescan().unloaded, 1);
  EXPECT_EQ(handle->servable->payload, 10);  // still alive for the request holding it
  EXPECT_EQ(handle->servable.use_count(), 1);
}

TEST_F(RegistryTest, VersionPolicyParsing) {
  EXPECT_EQ(ParseVersionPolicy("latest")->count, 1);
  EXPECT_EQ(ParseVersionPolicy("latest:3")->count, 3);
  EXPECT_EQ(ParseVersionPolicy("all")->kind, VersionPolicy::Kind::kAll);
  const absl::Status bad = ParseVersionPolicy("latest:0").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("received 'latest:0'"));
  EXPECT_FALSE(ParseVersionPolicy("newest").ok());
}

}  // namespace
}  // namespace invariant::server
