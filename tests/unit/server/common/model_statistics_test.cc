// The per-(model, version) statistics table, and ServerMetrics keeping it
// with the Prometheus series it agrees with.
#include "server/common/model_statistics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/metrics/metrics.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

inference::ModelStatistics FillOf(const ModelStatisticsTable& table, const std::string& model,
                                  int64_t version) {
  inference::ModelStatistics out;
  table.Fill(model, version, &out);
  return out;
}

TEST(ModelStatisticsTableTest, UnknownVersionIsZerosWithEveryDuration) {
  ModelStatisticsTable table;
  const inference::ModelStatistics s = FillOf(table, "m", 3);
  EXPECT_EQ(s.name(), "m");
  EXPECT_EQ(s.version(), "3");
  EXPECT_EQ(s.inference_count(), 0u);
  EXPECT_EQ(s.last_inference(), 0u);
  EXPECT_TRUE(s.inference_stats().has_success());
  EXPECT_TRUE(s.inference_stats().has_cache_miss());
  EXPECT_EQ(s.batch_stats_size(), 0);
}

TEST(ModelStatisticsTableTest, RecordsEachKindPerVersion) {
  ModelStatisticsTable table;
  table.RecordBatch("m", 1, 4, absl::Nanoseconds(100));
  table.RecordBatch("m", 1, 4, absl::Nanoseconds(50));
  table.RecordBatch("m", 1, 1, absl::Nanoseconds(7));
  table.RecordBatch("m", 2, 9, absl::Nanoseconds(1));  // another version
  table.RecordQueue("m", 1, absl::Nanoseconds(30));
  table.RecordRequest("m", 1, true, absl::Nanoseconds(1000), absl::FromUnixMillis(1234));
  table.RecordRequest("m", 1, false, absl::Nanoseconds(20), absl::FromUnixMillis(5678));
  table.RecordInput("m", 1, absl::Nanoseconds(11));
  table.RecordOutput("m", 1, absl::Nanoseconds(3));
  const inference::ModelStatistics s = FillOf(table, "m", 1);
  EXPECT_EQ(s.inference_count(), 9u);
  EXPECT_EQ(s.execution_count(), 3u);
  EXPECT_EQ(s.last_inference(), 5678u);
  const inference::InferStatistics& i = s.inference_stats();
  EXPECT_EQ(i.compute_infer().count(), 3u);
  EXPECT_EQ(i.compute_infer().ns(), 157u);
  EXPECT_EQ(i.queue().count(), 1u);
  EXPECT_EQ(i.queue().ns(), 30u);
  EXPECT_EQ(i.success().count(), 1u);
  EXPECT_EQ(i.success().ns(), 1000u);
  EXPECT_EQ(i.fail().count(), 1u);
  EXPECT_EQ(i.fail().ns(), 20u);
  EXPECT_EQ(i.compute_input().ns(), 11u);
  EXPECT_EQ(i.compute_output().ns(), 3u);
  ASSERT_EQ(s.batch_stats_size(), 2);  // sorted by size
  EXPECT_EQ(s.batch_stats(0).batch_size(), 1u);
  EXPECT_EQ(s.batch_stats(0).compute_infer().count(), 1u);
  EXPECT_EQ(s.batch_stats(1).batch_size(), 4u);
  EXPECT_EQ(s.batch_stats(1).compute_infer().count(), 2u);
  EXPECT_EQ(s.batch_stats(1).compute_infer().ns(), 150u);
  EXPECT_EQ(FillOf(table, "m", 2).inference_count(), 9u);
  EXPECT_EQ(FillOf(table, "m", 2).execution_count(), 1u);
}

TEST(ModelStatisticsTableTest, BatchSizesAreCappedButEveryBatchCounts) {
  ModelStatisticsTable table;
  const int sizes = static_cast<int>(ModelStatisticsTable::kMaxBatchSizes) + 10;
  for (int rows = 1; rows <= sizes; ++rows) table.RecordBatch("m", 1, rows, absl::Nanoseconds(1));
  table.RecordBatch("m", 1, 1, absl::Nanoseconds(1));  // a size already kept
  const inference::ModelStatistics s = FillOf(table, "m", 1);
  EXPECT_EQ(s.batch_stats_size(), static_cast<int>(ModelStatisticsTable::kMaxBatchSizes));
  EXPECT_EQ(s.batch_stats(0).compute_infer().count(), 2u);
  EXPECT_EQ(s.execution_count(), uint64_t(sizes + 1));
  EXPECT_EQ(s.inference_stats().compute_infer().count(), uint64_t(sizes + 1));
}

TEST(ModelStatisticsTableTest, ForgetStartsAVersionAgainAtZero) {
  ModelStatisticsTable table;
  table.RecordBatch("m", 1, 4, absl::Nanoseconds(1));
  table.Forget("m", 1);
  EXPECT_EQ(FillOf(table, "m", 1).inference_count(), 0u);
}

// Issue 50: the records of calls still in flight when a version was
// unloaded re-created its entry, and the version loaded again showed them.
TEST(ModelStatisticsTableTest, RecordsOfAnUnloadedVersionNeverReachItsNextLoad) {
  ModelStatisticsTable table;
  table.RecordBatch("m", 1, 4, absl::Nanoseconds(1));
  table.Forget("m", 1);
  table.RecordBatch("m", 1, 5, absl::Nanoseconds(1));  // a call that was in flight
  table.RecordRequest("m", 1, true, absl::Nanoseconds(1), absl::FromUnixMillis(7));
  table.RecordQueue("m", 1, absl::Nanoseconds(1));
  table.Loaded("m", 1);
  inference::ModelStatistics s = FillOf(table, "m", 1);
  EXPECT_EQ(s.inference_count(), 0u);
  EXPECT_EQ(s.last_inference(), 0u);
  EXPECT_EQ(s.inference_stats().success().count(), 0u);
  table.RecordBatch("m", 1, 3, absl::Nanoseconds(1));  // the new load's records count
  EXPECT_EQ(FillOf(table, "m", 1).inference_count(), 3u);
}

TEST(ModelStatisticsTableTest, ConcurrentRecordsAllCount) {
  ModelStatisticsTable table;
  constexpr int kThreads = 4, kEach = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&table, t] {
      for (int i = 0; i < kEach; ++i) {
        table.RecordBatch("m", 1, 1 + t, absl::Nanoseconds(1));
        table.RecordRequest("m", 1, i % 2 == 0, absl::Nanoseconds(1), absl::FromUnixMillis(1));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const inference::ModelStatistics s = FillOf(table, "m", 1);
  EXPECT_EQ(s.execution_count(), uint64_t{kThreads * kEach});
  EXPECT_EQ(s.inference_count(), uint64_t{(1 + 2 + 3 + 4) * kEach});
  EXPECT_EQ(s.inference_stats().success().count() + s.inference_stats().fail().count(),
            uint64_t{kThreads * kEach});
}

// The numbers a test reads from the statistics equal the Prometheus series
// kept by the same calls.
TEST(ModelStatisticsTableTest, ServerMetricsKeepsThemWithPrometheus) {
  ServerMetrics metrics("dev");
  metrics.BatchComputed("m", 1, "Predict", 7, 0.002);
  metrics.BatchComputed("m", 1, "Featurize", 3, 0.001);
  metrics.BatchComputed("m", 2, "Predict", 5, 0.001);
  metrics.Dequeued("m", 1, 0.0005);
  metrics.Dequeued("m", 2, 0.0005);
  metrics.RequestEnded("m", 1, true, 0.003);
  const inference::ModelStatistics v1 = FillOf(metrics.statistics(), "m", 1);
  const inference::ModelStatistics v2 = FillOf(metrics.statistics(), "m", 2);
  EXPECT_EQ(v1.inference_count(), 10u);
  EXPECT_EQ(v1.execution_count(), 2u);
  EXPECT_EQ(v1.inference_stats().compute_infer().ns(), 3000000u);
  EXPECT_EQ(v1.inference_stats().success().count(), 1u);
  EXPECT_EQ(v2.inference_count(), 5u);
  const std::string text = metrics.Serialize();
  // Prometheus has no version label: its series are the sums over versions.
  EXPECT_THAT(text, HasSubstr("invariant_rows_total{method=\"Predict\",model=\"m\"} 12"));
  EXPECT_THAT(text, HasSubstr("invariant_rows_total{method=\"Featurize\",model=\"m\"} 3"));
  EXPECT_EQ(v1.inference_count() + v2.inference_count(), 15u);
  EXPECT_THAT(text, HasSubstr("invariant_batch_rows_count{method=\"Predict\",model=\"m\"} 2"));
  EXPECT_THAT(text, HasSubstr("invariant_batch_rows_count{method=\"Featurize\",model=\"m\"} 1"));
  EXPECT_EQ(v1.execution_count() + v2.execution_count(), 3u);
  EXPECT_THAT(text, HasSubstr("invariant_queue_seconds_count{model=\"m\"} 2"));
  EXPECT_THAT(text, Not(HasSubstr("version=\"1\"")));  // no new label on the batch series
  metrics.ModelReady("m", 1, "cdf", 1);
  metrics.ModelUnloaded("m", 1);
  EXPECT_EQ(FillOf(metrics.statistics(), "m", 1).inference_count(), 0u);
}

}  // namespace
}  // namespace invariant::server
