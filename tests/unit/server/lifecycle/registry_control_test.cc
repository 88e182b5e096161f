// Explicit model control (RegistryOptions::explicit_control): LoadModel,
// UnloadModel and the repository index.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/lifecycle/registry.h"
#include "tests/unit/server/testing/fake_servable.h"

namespace invariant::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
class RegistryControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("registry_control_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    WriteVersion("a", 1, "11");
    WriteVersion("b", 1, "21");
  }
  void TearDown() override { fs::remove_all(root_); }

  void WriteVersion(const std::string& name, int64_t version, const std::string& content) {
    const fs::path dir = root_ / name / std::to_string(version);
    fs::create_directories(dir);
    std::ofstream(dir / "model.bundle") << content;
  }

  std::unique_ptr<ModelRegistry<FakeModel>> Make(bool explicit_control,
                                                 std::vector<std::string> startup = {}) {
    RegistryOptions options;
    options.root = root_.string();
    options.explicit_control = explicit_control;
    options.startup_models = std::move(startup);
    ModelRegistry<FakeModel>::Observers observers;
    observers.on_unloaded = [this](const std::string& name, int64_t v) {
      unloaded_.push_back(name + "/" + std::to_string(v));
    };
    auto registry = std::make_unique<ModelRegistry<FakeModel>>(options, LoadFake, observers);
    registry->Rescan();
    return registry;
  }

  // "name/version:STATE" for every index entry, in order.
  static std::vector<std::string> States(const ModelRegistry<FakeModel>& registry,
                                         bool ready_only = false) {
    std::vector<std::string> out;
    for (const RepositoryEntry& e : registry.Index(ready_only)) {
      out.push_back(e.name + "/" + std::to_string(e.version) + ":" + e.state);
    }
    return out;
  }

  fs::path root_;
  std::vector<std::string> unloaded_;
};

TEST_F(RegistryControlTest, ExplicitServesOnlyTheModelsNamedAtStartOrLoaded) {
  auto registry = Make(true, {"a"});
  EXPECT_TRUE(registry->Lookup("a").ok());
  EXPECT_EQ(registry->Lookup("b").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(States(*registry), ::testing::ElementsAre("a/1:READY", "b/1:UNAVAILABLE"));
  EXPECT_THAT(registry->Index()[1].reason, HasSubstr("not loaded"));
  // A rescan does not load what was not asked for.
  registry->Rescan();
  EXPECT_FALSE(registry->Lookup("b").ok());
  ASSERT_TRUE(registry->LoadModel("b").ok());
  EXPECT_EQ(registry->Lookup("b")->servable->payload, 21);
  EXPECT_THAT(States(*registry, true), ::testing::ElementsAre("a/1:READY", "b/1:READY"));
}

TEST_F(RegistryControlTest, UnloadLeavesLookupsAtOnceWhileHeldHandlesFinish) {
  auto registry = Make(true, {"a", "b"});
  auto held = registry->Lookup("a");  // a call in flight
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(registry->UnloadModel("a").ok());
  EXPECT_EQ(registry->Lookup("a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(held->servable->payload, 11);  // still usable by the call that holds it
  EXPECT_EQ(unloaded_, std::vector<std::string>{"a/1"});
  EXPECT_THAT(registry->Index()[0].reason, HasSubstr("unloaded by request"));
  EXPECT_FALSE(registry->Index()[0].load_error);
  // The other model serves on, and the registry stays serving without "a".
  EXPECT_TRUE(registry->Lookup("b").ok());
  EXPECT_TRUE(registry->Serving());
  // A rescan does not bring it back; a load does.
  registry->Rescan();
  EXPECT_FALSE(registry->Lookup("a").ok());
  ASSERT_TRUE(registry->LoadModel("a").ok());
  EXPECT_TRUE(registry->Lookup("a").ok());
  // Unloading a model that is not loaded is fine; an unknown one is not found.
  EXPECT_TRUE(registry->UnloadModel("a").ok());
  EXPECT_TRUE(registry->UnloadModel("a").ok());
  EXPECT_EQ(registry->UnloadModel("nope").code(), absl::StatusCode::kNotFound);
}

TEST_F(RegistryControlTest, ACorruptNewVersionIsRefusedWithItsReasonAndTheServedOneStays) {
  auto registry = Make(true, {"a"});
  WriteVersion("a", 2, "corrupt");
  const absl::Status status = registry->LoadModel("a");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("version 2: checksum mismatch"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("still serving version(s) 1"));
  EXPECT_EQ(registry->Lookup("a")->version, 1);
  EXPECT_THAT(States(*registry),
              ::testing::ElementsAre("a/2:UNAVAILABLE", "a/1:READY", "b/1:UNAVAILABLE"));
  EXPECT_THAT(registry->Index()[0].reason, HasSubstr("checksum mismatch"));
  EXPECT_TRUE(registry->Index()[0].load_error);  // names a file: kept off the data path
  // Fixed on disk, the next load serves it.
  WriteVersion("a", 2, "12");
  ASSERT_TRUE(registry->LoadModel("a").ok());
  EXPECT_EQ(registry->Lookup("a")->servable->payload, 12);
}

TEST_F(RegistryControlTest, NamesOutsideTheRootAreNotFoundAndPollModeRefusesControl) {
  auto registry = Make(true);
  EXPECT_EQ(registry->LoadModel("../a").code(), absl::StatusCode::kNotFound);
  const absl::Status missing = registry->LoadModel("zz");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("expected one of [a, b]"));

  auto poll = Make(false);
  EXPECT_TRUE(poll->Lookup("a").ok());
  EXPECT_TRUE(poll->Lookup("b").ok());
  for (const absl::Status& s : {poll->LoadModel("a"), poll->UnloadModel("a")}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(s.message()), HasSubstr("--model_control=explicit"));
  }
  EXPECT_TRUE(poll->Lookup("a").ok());
}

}  // namespace
}  // namespace invariant::server
