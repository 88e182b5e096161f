#include "server/access_log/access_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RequestRecord& Filled(RequestRecord& record) {
  record.trace = NewTraceContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "");
  record.start = absl::FromUnixMicros(1'796'000'000'123'456);
  record.protocol = "grpc";
  record.method = "/invariant.v1.FeatureService/Predict";
  record.peer = "ipv4:127.0.0.1:5000";
  return record;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + std::to_string(::getpid());
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return absl::StrSplit(text.str(), '\n', absl::SkipEmpty());
}

TEST(AccessLogTest, ParsesTheFlag) {
  AccessLogOptions options;
  ASSERT_TRUE(ParseAccessLogMode("all", &options).ok());
  EXPECT_EQ(options.mode, AccessLogMode::kAll);
  ASSERT_TRUE(ParseAccessLogMode("errors", &options).ok());
  EXPECT_EQ(options.mode, AccessLogMode::kErrors);
  ASSERT_TRUE(ParseAccessLogMode("sampled:0.25", &options).ok());
  EXPECT_EQ(options.mode, AccessLogMode::kSampled);
  EXPECT_DOUBLE_EQ(options.sample_rate, 0.25);
  ASSERT_TRUE(ParseAccessLogMode("off", &options).ok());
  EXPECT_EQ(options.mode, AccessLogMode::kOff);
  for (const char* bad : {"", "on", "sampled", "sampled:", "sampled:2", "sampled:-0.1", "ALL"}) {
    const absl::Status status = ParseAccessLogMode(bad, &options);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), HasSubstr("--access_log")) << bad;
  }
}

TEST(AccessLogTest, ALineHoldsTheCallsFiguresInOrder) {
  RequestRecord record;
  Filled(record);
  record.SetModel("digits", 3);
  record.SetAdmission("admitted");
  record.rows = 2;
  record.bytes_in = 100;
  record.bytes_out = 40;
  record.decode_ns = 1'500'000;
  record.batch_times->queue_ns = 250'000;
  record.batch_times->compute_ns = 2'000'000;
  CallOutcome outcome;
  outcome.end = record.start + absl::Milliseconds(5);
  EXPECT_EQ(AccessLogLine(record, outcome),
            "{\"time\":\"2026-11-30T00:53:20.123456Z\",\"level\":\"info\","
            "\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"span_id\":\"" +
                record.trace.span_id +
                "\",\"parent_span_id\":\"00f067aa0ba902b7\",\"trace_flags\":\"01\","
                "\"protocol\":\"grpc\",\"method\":\"/invariant.v1.FeatureService/Predict\","
                "\"model\":\"digits\",\"version\":3,\"rows\":2,\"inputs\":0,\"status\":\"OK\","
                "\"bytes_in\":100,\"bytes_out\":40,\"queue_ms\":0.250,\"decode_ms\":1.500,"
                "\"compute_ms\":2.000,\"total_ms\":5.000,\"peer\":\"ipv4:127.0.0.1:5000\","
                "\"admission\":\"admitted\"}");
}

TEST(AccessLogTest, AnErrorLineSaysWhyEscapedAndOmitsWhatIsUnknown) {
  RequestRecord record;
  Filled(record);
  CallOutcome outcome;
  outcome.code = absl::StatusCode::kInvalidArgument;
  outcome.message = "inputs: \"bad\"\n";
  outcome.http_status = 400;
  const std::string line = AccessLogLine(record, outcome);
  EXPECT_THAT(line, HasSubstr("\"level\":\"error\""));
  EXPECT_THAT(line, HasSubstr("\"status\":\"INVALID_ARGUMENT\",\"http_status\":400,"
                              "\"error\":\"inputs: \\\"bad\\\"\\n\""));
  EXPECT_THAT(line, Not(HasSubstr("\"model\"")));
  EXPECT_THAT(line, Not(HasSubstr("\"admission\"")));
}

TEST(AccessLogTest, EachModeLogsWhatItSays) {
  RequestRecord sampled_parent, unsampled_parent, low_id, high_id;
  sampled_parent.trace =
      NewTraceContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "");
  unsampled_parent.trace =
      NewTraceContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "");
  low_id.trace.trace_id = "ffffffffffffffff0000000000000001";   // fraction ≈ 0
  high_id.trace.trace_id = "0000000000000000fffffffffffffff0";  // fraction ≈ 1
  const auto log_of = [](const char* flag) {
    AccessLogOptions options;
    EXPECT_TRUE(ParseAccessLogMode(flag, &options).ok());
    options.path = TempPath("modes");
    return *AccessLog::Open(std::move(options));
  };
  std::unique_ptr<AccessLog> all = log_of("all"), errors = log_of("errors"),
                             sampled = log_of("sampled:0.5");
  EXPECT_TRUE(all->Logged(unsampled_parent, true));
  EXPECT_TRUE(errors->Logged(unsampled_parent, false));
  EXPECT_FALSE(errors->Logged(sampled_parent, true));
  EXPECT_TRUE(sampled->Logged(unsampled_parent, false));  // errors always
  EXPECT_TRUE(sampled->Logged(sampled_parent, true));     // the caller's decision
  EXPECT_FALSE(sampled->Logged(unsampled_parent, true));
  EXPECT_TRUE(sampled->Logged(low_id, true));  // a trace started here: its id's fraction
  EXPECT_FALSE(sampled->Logged(high_id, true));
}

TEST(AccessLogTest, WritesEveryLineToItsFile) {
  const std::string path = TempPath("written");
  std::remove(path.c_str());
  AccessLogOptions options;
  options.mode = AccessLogMode::kAll;
  options.path = path;
  int64_t counted = 0;
  options.on_written = [&counted](int64_t lines) { counted += lines; };
  {
    std::unique_ptr<AccessLog> log = *AccessLog::Open(std::move(options));
    for (int i = 0; i < 100; ++i) {
      RequestRecord record;
      Filled(record).rows = i;
      log->Close(record, CallOutcome());
    }
  }  // the destructor writes what is queued
  const std::vector<std::string> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 100u);
  EXPECT_THAT(lines[99], HasSubstr("\"rows\":99,"));
  EXPECT_EQ(counted, 100);
}

TEST(AccessLogTest, AFullQueueDropsAndCountsLinesWithoutWaiting) {
  const std::string path = TempPath("dropped");
  std::remove(path.c_str());
  AccessLogOptions options;
  options.mode = AccessLogMode::kAll;
  options.path = path;
  options.max_queued_lines = 3;
  int64_t dropped = 0;
  options.on_dropped = [&dropped](int64_t lines) { dropped += lines; };
  {
    std::unique_ptr<AccessLog> log = *AccessLog::Open(std::move(options));
    log->PauseWriter();  // before any line: none is written until Resume
    for (int i = 0; i < 10; ++i) {
      RequestRecord record;
      log->Close(Filled(record), CallOutcome());
    }
    EXPECT_EQ(log->dropped(), 7);
    EXPECT_EQ(log->written(), 0);
    EXPECT_EQ(dropped, 7);
    log->ResumeWriter();
  }
  EXPECT_EQ(ReadLines(path).size(), 3u);
}

TEST(AccessLogTest, AnUnopenableFileIsRefusedNamingTheFlag) {
  AccessLogOptions options;
  options.mode = AccessLogMode::kAll;
  options.path = "/nonexistent-dir/access.log";
  const absl::StatusOr<std::unique_ptr<AccessLog>> log = AccessLog::Open(std::move(options));
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.status().message(), HasSubstr("--access_log_file"));
}

}  // namespace
}  // namespace invariant::server
