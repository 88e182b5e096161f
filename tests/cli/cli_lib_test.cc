// cli_lib_test.cc: unit tests of the CLI library (formatting, flag parsing)
// and of the load generator's pure parts — no server. The input rows
// (client/cli/rows.h = core/io/table.h) are tested in tests/unit/io/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "client/cli/flag_parser.h"
#include "client/cli/format.h"
#include "client/loadgen/loadgen.h"
#include "core/base/random.h"

ABSL_FLAG(int, test_count, 1, "test flag");
ABSL_FLAG(bool, test_switch, false, "test flag");
ABSL_FLAG(std::string, test_name, "", "test flag");

namespace invariant::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FormatTest, FloatsRoundTripAndCsvJsonEscaping) {
  Rng rng(3);  // core/base/random.h: the same stream on every platform
  for (int i = 0; i < 1000; ++i) {
    const float v = static_cast<float>(100 * rng.Normal());
    EXPECT_EQ(std::stof(FormatFloat(v)), v);
  }
  EXPECT_EQ(FormatFloat(0.1f), "0.1");
  EXPECT_EQ(FormatFloat(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(JsonNumber(std::nan("")), "null");
  const float values[] = {1, std::numeric_limits<float>::quiet_NaN(), 2.5f};
  EXPECT_EQ(JsonFloatArray(values, 3), "[1,null,2.5]");
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,\"b\""), "\"a,\"\"b\"\"\"");
  EXPECT_EQ(JsonString("q\"\\\n\x01"), "\"q\\\"\\\\\\n\\u0001\"");
}

ParsedCommandLine Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(FlagParserTest, FormsPositionalsAndErrors) {
  ParsedCommandLine p = Parse({"sub", "--test_count=5", "-test_name", "x y", "--test_switch", "arg",
                               "-", "--", "--not-a-flag"});
  ASSERT_EQ(p.outcome, ParsedCommandLine::Outcome::kOk) << p.error;
  EXPECT_THAT(p.positional, ElementsAre("sub", "arg", "-", "--not-a-flag"));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_count), 5);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_name), "x y");
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_switch));
  p = Parse({"--notest_switch"});
  ASSERT_EQ(p.outcome, ParsedCommandLine::Outcome::kOk) << p.error;
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_switch));

  p = Parse({"--nope=1"});
  EXPECT_EQ(p.outcome, ParsedCommandLine::Outcome::kError);
  EXPECT_EQ(p.error, "unknown flag --nope");
  p = Parse({"--test_count=many"});
  EXPECT_EQ(p.outcome, ParsedCommandLine::Outcome::kError);
  EXPECT_THAT(p.error, HasSubstr("--test_count: "));
  p = Parse({"--test_count"});
  EXPECT_EQ(p.outcome, ParsedCommandLine::Outcome::kError);
  EXPECT_THAT(p.error, HasSubstr("needs a value"));
  EXPECT_EQ(Parse({"x", "--help"}).outcome, ParsedCommandLine::Outcome::kHelp);
}

TEST(LoadgenLibTest, QuantileIsNearestRank) {
  std::vector<double> samples = {5, 1, 4, 2, 3, 6, 7, 8, 9, 10};
  EXPECT_EQ(loadgen::Quantile(samples, 0.5), 5);
  EXPECT_EQ(loadgen::Quantile(samples, 0.9), 9);
  EXPECT_EQ(loadgen::Quantile(samples, 0.99), 10);
  EXPECT_EQ(loadgen::Quantile(samples, 0), 1);
  std::vector<double> empty;
  EXPECT_EQ(loadgen::Quantile(empty, 0.5), 0);
}

TEST(LoadgenLibTest, OptionsMustBeBounded) {
  loadgen::LoadOptions o;
  o.model = "m";
  o.rows = {1, 2};
  o.input_dim = 2;
  EXPECT_FALSE(loadgen::ValidateLoadOptions(o).ok());  // neither duration nor requests
  o.max_requests = 10;
  EXPECT_TRUE(loadgen::ValidateLoadOptions(o).ok());
  o.duration = loadgen::kMaxDuration + absl::Seconds(1);
  EXPECT_THAT(loadgen::ValidateLoadOptions(o).message(), HasSubstr("--duration"));
  o.duration = absl::Seconds(1);
  o.max_requests = loadgen::kMaxRequests + 1;
  EXPECT_THAT(loadgen::ValidateLoadOptions(o).message(), HasSubstr("--requests"));
  o.max_requests = 1;
  o.rows = {1, 2, 3};
  EXPECT_THAT(loadgen::ValidateLoadOptions(o).message(), HasSubstr("input_dim"));
}

TEST(LoadgenLibTest, JsonReportHasTheDocumentedKeys) {
  loadgen::LoadOptions o;
  o.model = "m";
  loadgen::LoadReport r;
  r.requests_ok = 7;
  r.requests_failed = 2;
  r.errors["UNAVAILABLE"] = 2;
  r.latency.p99_us = 12.5;
  const std::string json = loadgen::ReportJson(r, o, "127.0.0.1:1");
  EXPECT_THAT(json, HasSubstr("\"requests\":{\"ok\":7,\"failed\":2,\"total\":9}"));
  EXPECT_THAT(json, HasSubstr("\"errors\":{\"UNAVAILABLE\":2}"));
  EXPECT_THAT(json, HasSubstr("\"p99\":12.5"));
  EXPECT_THAT(json, HasSubstr("\"qps\":0"));
  EXPECT_THAT(json, HasSubstr("\"rows_per_second\":0"));
}

}  // namespace
}  // namespace invariant::cli
