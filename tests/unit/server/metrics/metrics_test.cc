#include "server/metrics/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsTest, RecordsRpcAndBatchMetricsWithLabels) {
  ServerMetrics metrics("1.2.3");
  metrics.RpcStarted("invariant.v1.FeatureService", "Predict", "unary");
  metrics.RpcHandled("invariant.v1.FeatureService", "Predict", "unary", "OK", 0.001);
  metrics.BatchComputed("m", 1, "Predict", 7, 0.002);
  metrics.QueueRows("m", 3);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("invariant_build_info{version=\"1.2.3\"} 1"));
  EXPECT_THAT(text, HasSubstr("grpc_server_started_total{grpc_method=\"Predict\""));
  EXPECT_THAT(text, HasSubstr("grpc_code=\"OK\""));
  EXPECT_THAT(text, HasSubstr("grpc_server_handling_seconds_bucket"));
  EXPECT_THAT(text, HasSubstr("invariant_rows_total{method=\"Predict\",model=\"m\"} 7"));
  EXPECT_THAT(text, HasSubstr("invariant_batch_rows_sum{method=\"Predict\",model=\"m\"} 7"));
  EXPECT_THAT(text, HasSubstr("invariant_queue_rows{model=\"m\"} 3"));
}

TEST(MetricsTest, TheRestFrontEndsHeldBytesConnectionsAndQueueAreGauges) {
  ServerMetrics metrics("dev");
  EXPECT_THAT(metrics.Serialize(), HasSubstr("invariant_http_queued_requests 0"));
  HttpServerStats stats;
  stats.queued_requests = 3;
  stats.open_connections = 5;
  stats.body_bytes_held = 1024;
  metrics.HttpServed(stats);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("invariant_http_queued_requests 3"));
  EXPECT_THAT(text, HasSubstr("invariant_http_connections{kind=\"open\"} 5"));
  EXPECT_THAT(text, HasSubstr("invariant_http_held_bytes{kind=\"body\"} 1024"));
  stats.queued_requests = 0;
  metrics.HttpServed(stats);
  EXPECT_THAT(metrics.Serialize(), HasSubstr("invariant_http_queued_requests 0"));
}

TEST(MetricsTest, ModelInfoFollowsLoadAndUnload) {
  ServerMetrics metrics("dev");
  metrics.ModelReady("m", 2, "random_fourier", 4096);
  std::string text = metrics.Serialize();
  EXPECT_THAT(
      text, HasSubstr("invariant_model_info{kind=\"random_fourier\",model=\"m\",version=\"2\"} 1"));
  EXPECT_THAT(text, HasSubstr("invariant_model_bytes{model=\"m\",version=\"2\"} 4096"));
  metrics.ModelUnloaded("m", 2);
  metrics.ModelLoadFailed("m");
  text = metrics.Serialize();
  EXPECT_THAT(text, Not(HasSubstr("invariant_model_info{")));
  EXPECT_THAT(text, HasSubstr("invariant_model_load_failures_total{model=\"m\"} 1"));
}

TEST(MetricsTest, KnownSeriesStartAtZeroAndCountOnFromThere) {
  ServerMetrics metrics("dev");
  metrics.RpcKnown("invariant.v1.FeatureService", "Predict", "unary", "INVALID_ARGUMENT");
  metrics.ModelSeen("m");
  std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("grpc_server_handled_total{grpc_code=\"INVALID_ARGUMENT\","
                              "grpc_method=\"Predict\",grpc_service=\"invariant.v1."
                              "FeatureService\",grpc_type=\"unary\"} 0"));
  EXPECT_THAT(text,
              HasSubstr("grpc_server_started_total{grpc_method=\"Predict\","
                        "grpc_service=\"invariant.v1.FeatureService\",grpc_type=\"unary\"} 0"));
  EXPECT_THAT(text, HasSubstr("invariant_model_load_failures_total{model=\"m\"} 0"));
  EXPECT_THAT(text, HasSubstr("invariant_queue_rows{model=\"m\"} 0"));
  metrics.ModelLoadFailed("m");
  metrics.RpcHandled("invariant.v1.FeatureService", "Predict", "unary", "INVALID_ARGUMENT", 0.1);
  metrics.RpcKnown("invariant.v1.FeatureService", "Predict", "unary", "INVALID_ARGUMENT");
  metrics.ModelSeen("m");  // known again: counts are kept
  text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("invariant_model_load_failures_total{model=\"m\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("grpc_code=\"INVALID_ARGUMENT\",grpc_method=\"Predict\","
                        "grpc_service=\"invariant.v1.FeatureService\",grpc_type=\"unary\"} 1"));
}

TEST(MetricsTest, AVersionLoadedAgainAsAnotherKindKeepsOneInfoSeries) {
  ServerMetrics metrics("dev");
  metrics.ModelReady("m", 1, "random_fourier", 10);
  metrics.ModelReady("m", 1, "nystrom", 20);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, Not(HasSubstr("kind=\"random_fourier\"")));
  EXPECT_THAT(text,
              HasSubstr("invariant_model_info{kind=\"nystrom\",model=\"m\",version=\"1\"} 1"));
}

TEST(MetricsTest, ExposesOnAPickedPort) {
  ServerMetrics metrics("dev");
  ASSERT_TRUE(metrics.Expose("127.0.0.1", 0).ok());
  EXPECT_GT(metrics.port(), 0);
}

}  // namespace
}  // namespace invariant::server
