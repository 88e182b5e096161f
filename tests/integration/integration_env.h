// integration_env.h: shared fixture pieces of the integration tests — a fresh
// temp models directory per test, seeded random rows, and a started server.
#ifndef INVARIANT_TESTS_INTEGRATION_INTEGRATION_ENV_H_
#define INVARIANT_TESTS_INTEGRATION_INTEGRATION_ENV_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "client/client.h"
#include "core/base/random.h"
#include "tests/integration/server_process.h"
#include "tests/test_models/test_models.h"

namespace invariant::testing_server {

class ServerTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (std::string("it_") + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "models");
  }
  void TearDown() override {
    if (HasFailure() && server_ != nullptr) std::cerr << "server log:\n" << server_->Log();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string models() const { return (dir_ / "models").string(); }

  void WriteModel(const testing_models::TestModelSpec& spec) {
    auto path = testing_models::WriteTestModel(models(), spec);
    ASSERT_TRUE(path.ok()) << path.status();
  }

  // Starts the server with `flags` (plus --models) and a client for it.
  void StartServer(std::vector<std::string> flags, ClientOptions options = {}) {
    flags.push_back("--models=" + models());
    server_ = std::make_unique<ServerProcess>();
    const absl::Status status = server_->Start(flags, (dir_ / "server.log").string());
    ASSERT_TRUE(status.ok()) << status;
    client_ = Client::Create(server_->target(), options);
  }

  static std::vector<float> RandomRows(int64_t n, int64_t d, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> x(static_cast<size_t>(n * d));
    for (float& v : x) v = static_cast<float>(rng.Normal());
    return x;
  }

  // Polls `ready` every 10 ms until it holds (at most ~30 s); whether it
  // did. For states the server reaches on its own (a metric, the index).
  static bool Eventually(const std::function<bool()>& ready) {
    for (int i = 0; i < 3000; ++i) {
      if (ready()) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  std::filesystem::path dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Client> client_;
};

}  // namespace invariant::testing_server

#endif  // INVARIANT_TESTS_INTEGRATION_INTEGRATION_ENV_H_
