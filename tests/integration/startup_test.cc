// Operator mistakes at start-up fail loudly instead of starting a server that
// looks healthy: a models directory that does not exist, and a second server
// on a port that one already holds (gRPC's default SO_REUSEPORT would let both
// start and share the traffic).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

using ::testing::HasSubstr;

class StartupTest : public ServerTestBase {};

TEST_F(StartupTest, MissingModelsDirectoryIsRefused) {
  ServerProcess server;
  const std::string missing = (dir_ / "no_such_dir").string();
  EXPECT_FALSE(server.Start({"--models=" + missing}, (dir_ / "missing.log").string()).ok());
  EXPECT_EQ(server.WaitForExit(absl::Seconds(30)), 1);
  EXPECT_THAT(server.Log(), HasSubstr("models: expected an existing directory"));
  EXPECT_THAT(server.Log(), HasSubstr(missing));
}

TEST_F(StartupTest, SecondServerOnAHeldPortIsRefused) {
  WriteModel({});
  StartServer({});
  const std::string held = std::to_string(server_->grpc_port());
  ServerProcess second;
  EXPECT_FALSE(
      second.Start({"--models=" + models(), "--port=" + held}, (dir_ / "second.log").string())
          .ok());
  EXPECT_EQ(second.WaitForExit(absl::Seconds(30)), 1);
  EXPECT_THAT(second.Log(), HasSubstr("port: cannot listen on 127.0.0.1:" + held));
  // The first server still answers.
  bool serving = false;
  ASSERT_TRUE(client_->Health("", &serving).ok());
  EXPECT_TRUE(serving);
}

}  // namespace
}  // namespace invariant::testing_server
