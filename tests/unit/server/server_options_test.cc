// ValidateOptions and CheckStartupModelsExist (server_options.h): each rule
// refuses naming its flag, the first rule broken is the one reported, and
// the defaults over an existing models directory pass.
#include "server/server_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace invariant::server {
namespace {

using ::testing::StartsWith;

ServerOptions Valid() {
  ServerOptions options;
  options.models_dir = ::testing::TempDir();
  return options;
}

TEST(ServerOptionsTest, TheDefaultsOverAnExistingDirectoryPass) {
  EXPECT_TRUE(ValidateOptions(Valid()).ok());
  ServerOptions http = Valid();
  http.http_port = 0;
  EXPECT_TRUE(ValidateOptions(http).ok());
}

TEST(ServerOptionsTest, TheModelsDirectoryMustExist) {
  ServerOptions options;
  EXPECT_EQ(ValidateOptions(options).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ValidateOptions(options).message()), StartsWith("models: "));
  options.models_dir = ::testing::TempDir() + "/no_such_models_dir";
  EXPECT_EQ(ValidateOptions(options).code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(ValidateOptions(options).message()),
              ::testing::HasSubstr("no_such_models_dir"));
}

TEST(ServerOptionsTest, EachBadValueIsRefusedNamingItsFlag) {
  const std::vector<std::pair<std::string, std::function<void(ServerOptions&)>>> cases = {
      {"port: expected 0..65535, received 70000", [](ServerOptions& o) { o.port = 70000; }},
      {"model_control: expected poll or explicit", [](ServerOptions& o) { o.model_control = "x"; }},
      {"load_model: ", [](ServerOptions& o) { o.load_models = {"a"}; }},
      {"metrics_port: expected -1..65535, received -2",
       [](ServerOptions& o) { o.metrics_port = -2; }},
      {"max_batch_size: expected >= 1, received 0", [](ServerOptions& o) { o.max_batch_size = 0; }},
      {"max_batch_delay_us: expected >= 0, received -1",
       [](ServerOptions& o) { o.max_batch_delay_us = -1; }},
      {"max_queue_rows, max_request_rows, threads", [](ServerOptions& o) { o.threads = 0; }},
      {"http_port: expected -1..65535, received 65536",
       [](ServerOptions& o) { o.http_port = 65536; }},
      {"http_max_body_bytes, http_threads",
       [](ServerOptions& o) {
         o.http_port = 0;
         o.http_threads = 0;
       }},
      {"http_max_connections, http_max_inflight_bytes",
       [](ServerOptions& o) {
         o.http_port = 0;
         o.http_idle_timeout_seconds = 0;
       }},
      {"max_queue_bytes: expected >= 1, received 0",
       [](ServerOptions& o) { o.max_queue_bytes = 0; }},
      {"max_audio_clip_seconds: ", [](ServerOptions& o) { o.max_audio_clip_seconds = 0; }},
      {"warmup_rows: expected 0..max_request_rows (65536), received -1",
       [](ServerOptions& o) { o.warmup_rows = -1; }},
      {"http_max_inflight_answer_bytes, ", [](ServerOptions& o) { o.http_probe_slots = -1; }},
      {"grpc_memory_quota_bytes: ", [](ServerOptions& o) { o.grpc_memory_quota_bytes = -1; }},
      {"max_inflight_bytes, ", [](ServerOptions& o) { o.decode_threads = 0; }},
      {"tls_cert/tls_key: ", [](ServerOptions& o) { o.tls_cert_file = "cert.pem"; }},
      {"tls_client_ca: ", [](ServerOptions& o) { o.tls_client_ca_file = "ca.pem"; }},
  };
  for (const auto& [message, change] : cases) {
    ServerOptions options = Valid();
    change(options);
    const absl::Status status = ValidateOptions(options);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(status.message()), StartsWith(message));
  }
}

TEST(ServerOptionsTest, TheFirstRuleBrokenIsReported) {
  ServerOptions options = Valid();
  options.tls_cert_file = "cert.pem";  // checked last
  options.max_batch_size = 0;
  options.port = -1;  // checked before both
  EXPECT_THAT(std::string(ValidateOptions(options).message()), StartsWith("port: "));
  options.port = 0;
  EXPECT_THAT(std::string(ValidateOptions(options).message()), StartsWith("max_batch_size: "));
}

TEST(ServerOptionsTest, StartupModelsMustBeModelDirectories) {
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / "server_options_test_models";
  std::filesystem::create_directories(root / "present");
  ServerOptions options = Valid();
  options.models_dir = root.string();
  options.model_control = "explicit";
  EXPECT_TRUE(CheckStartupModelsExist(options).ok());  // none asked for
  options.load_models = {"present"};
  EXPECT_TRUE(CheckStartupModelsExist(options).ok());
  options.load_models = {"present", "typo"};
  const absl::Status status = CheckStartupModelsExist(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("load_model: model 'typo' is not a model directory"));
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("(it holds: present)"));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace invariant::server
