// The builders of server_builders.h, each on its own: what the registry,
// batcher, budgets, access plan and HTTP server are given is what the
// options say, and the observers record into the metrics.
#include "server/server_builders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/time/time.h"

namespace invariant::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ServerBuildersTest, RegistryOptionsFollowTheModelControl) {
  ServerOptions options;
  options.models_dir = "/models";
  options.removal_grace_seconds = 2.5;
  RegistryOptions registry = RegistryOptionsFor(options, VersionPolicy{});
  EXPECT_EQ(registry.root, "/models");
  EXPECT_EQ(registry.removal_grace, absl::Milliseconds(2500));
  EXPECT_FALSE(registry.explicit_control);
  options.model_control = "explicit";
  options.load_models = {"a", "b"};
  registry = RegistryOptionsFor(options, VersionPolicy{});
  EXPECT_TRUE(registry.explicit_control);
  EXPECT_THAT(registry.startup_models, ElementsAre("a", "b"));
}

TEST(ServerBuildersTest, BatchingIsOffWithOneRowPerBatchOrWhenTurnedOff) {
  ServerMetrics metrics("test");
  ServerOptions options;
  BatcherOptions batcher = BatcherOptionsFor(options, &metrics);
  EXPECT_TRUE(batcher.enabled);
  EXPECT_EQ(batcher.max_batch_rows, 64);
  EXPECT_EQ(batcher.max_batch_delay, absl::Microseconds(500));
  EXPECT_EQ(batcher.max_queue_rows, 65536);
  EXPECT_EQ(batcher.max_queue_bytes, 256 << 20);
  EXPECT_EQ(batcher.max_concurrent_batches, 2);
  EXPECT_FALSE(batcher.wait_when_idle);
  EXPECT_FALSE(batcher.start_paused);
  options.max_batch_size = 1;
  EXPECT_FALSE(BatcherOptionsFor(options, &metrics).enabled);
  options.max_batch_size = 8;
  options.batching = false;
  EXPECT_FALSE(BatcherOptionsFor(options, &metrics).enabled);
}

TEST(ServerBuildersTest, TheBatchersObserversRecordIntoTheMetrics) {
  ServerMetrics metrics("test");
  const BatcherOptions batcher = BatcherOptionsFor(ServerOptions(), &metrics);
  batcher.observers.on_batch("clf", 3, "Predict", 5, 0.001);
  batcher.observers.on_queue_rows("clf", 7);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("invariant_rows_total{"));
  EXPECT_THAT(text, HasSubstr("invariant_queue_rows{model=\"clf\"} 7"));
}

TEST(ServerBuildersTest, TheBudgetsAreTheAdmissionFlags) {
  ServerMetrics metrics("test");
  ServerOptions options;
  options.max_inflight_bytes = 1000;
  options.max_connection_inflight_bytes = 300;
  options.max_decode_audio_seconds = 1;
  const InflightBudgetOptions memory = MemoryBudgetOptionsFor(options, &metrics);
  EXPECT_EQ(memory.name, "max_inflight_bytes");
  EXPECT_EQ(memory.unit, "bytes");
  EXPECT_EQ(memory.limit, 1000);
  EXPECT_EQ(memory.per_key_limit, 300);
  const InflightBudgetOptions audio = AudioBudgetOptionsFor(options, &metrics);
  EXPECT_EQ(audio.name, "max_decode_audio_seconds");
  EXPECT_EQ(audio.unit, "seconds of audio");
  EXPECT_EQ(audio.limit, 1);
  EXPECT_EQ(audio.per_key_limit, 1);  // half, but at least one second
  options.max_decode_audio_seconds = 3600;
  EXPECT_EQ(AudioBudgetOptionsFor(options, &metrics).per_key_limit, 1800);
}

TEST(ServerBuildersTest, AccessInputsAreTheBindAddressTlsAndTokens) {
  ServerOptions options;
  options.host = "127.0.0.1";
  options.tls_cert_file = "cert.pem";
  options.data_token = "secret";
  const AccessInputs access = AccessInputsFor(options);
  EXPECT_EQ(access.host, "127.0.0.1");
  EXPECT_TRUE(access.tls);
  EXPECT_FALSE(access.has_admin_token);
  EXPECT_TRUE(access.has_data_token);
  EXPECT_FALSE(access.insecure_admin);
}

TEST(ServerBuildersTest, HttpServerOptionsRoundSecondsUpToMilliseconds) {
  ServerOptions options;
  options.host = "0.0.0.0";
  options.http_port = 8080;
  options.http_idle_timeout_seconds = 0.0005;
  options.http_body_timeout_seconds = 2;
  HttpServerOptions http = HttpServerOptionsFor(options);
  EXPECT_EQ(http.host, "0.0.0.0");
  EXPECT_EQ(http.port, 8080);
  EXPECT_EQ(http.idle_timeout_ms, 1);
  EXPECT_EQ(http.body_timeout_ms, 2000);
  EXPECT_EQ(http.write_timeout_ms, 2000);
  EXPECT_EQ(http.header_timeout_ms, 10000);
  EXPECT_EQ(http.rate_grace_ms, 5000);
  EXPECT_TRUE(http.error_response != nullptr);
  options.http_host = "127.0.0.1";
  EXPECT_EQ(HttpServerOptionsFor(options).host, "127.0.0.1");
}

}  // namespace
}  // namespace invariant::server
