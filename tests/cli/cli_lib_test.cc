// cli_lib_test.cc: unit tests of the CLI library (input rows, formatting,
// flag parsing) and of the load generator's pure parts — no server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "client/cli/flag_parser.h"
#include "client/cli/format.h"
#include "client/cli/rows.h"
#include "core/base/random.h"
#include "tools/loadgen/loadgen.h"

ABSL_FLAG(int, test_count, 1, "test flag");
ABSL_FLAG(bool, test_switch, false, "test flag");
ABSL_FLAG(std::string, test_name, "", "test flag");

namespace invariant::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseRowsTest, CsvWithHeaderCommentsBlankLinesCrlfAndQuotes) {
  const auto rows = ParseRows("a,b,c\r\n# note\r\n\r\n1, 2.5 ,\"-3e2\"\r\n+4,5,6\r\n", "x.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->num_rows, 2);
  EXPECT_EQ(rows->dim, 3);
  EXPECT_THAT(rows->column_names, ElementsAre("a", "b", "c"));
  EXPECT_THAT(rows->values, ElementsAre(1, 2.5, -300, 4, 5, 6));
}

TEST(ParseRowsTest, TsvByExtensionAndExplicitDelimiter) {
  auto rows = ParseRows("1\t2\n3\t4\n", "x.tsv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim, 2);
  RowReadOptions options;
  options.delimiter = ';';
  rows = ParseRows("1;2;3\n", "x.csv", options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim, 3);
}

TEST(ParseRowsTest, DelimiterOfStdinAndUnknownNamesComesFromTheFirstLine) {
  auto rows = ParseRows("# tab separated\n1\t2\t3\n4\t5\t6\n", "<stdin>");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim, 3);
  rows = ParseRows("1,2\n3,4\n", "rows.txt");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim, 2);
  // The extension wins: a .csv with tabs is one field per line, reported.
  rows = ParseRows("1\t2\n", "x.csv");
  EXPECT_FALSE(rows.ok());
}

TEST(ParseRowsTest, PandasIndexColumnIsSkipped) {
  const auto rows = ParseRows(",a,b\n0,1,2\n1,3,4\n", "df.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim, 2);
  EXPECT_THAT(rows->column_names, ElementsAre("a", "b"));
  EXPECT_THAT(rows->values, ElementsAre(1, 2, 3, 4));
}

TEST(ParseRowsTest, IdColumnByNameOrOneBasedNumberIsKeptAsText) {
  RowReadOptions options;
  options.id_column = "key";
  auto rows = ParseRows("a,key,b\n1,r1,2\n3,r2,4\n", "ids.csv", options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim, 2);
  EXPECT_THAT(rows->ids, ElementsAre("r1", "r2"));
  EXPECT_EQ(rows->id_name, "key");
  EXPECT_THAT(rows->values, ElementsAre(1, 2, 3, 4));
  options.id_column = "1";  // 1-based: the first column
  rows = ParseRows("7,1,2\n8,3,4\n", "ids.csv", options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->ids, ElementsAre("7", "8"));
  EXPECT_EQ(rows->id_name, "id");
  options.id_column = "0";
  rows = ParseRows("7,1,2\n", "ids.csv", options);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(),
              HasSubstr("id column 0 out of range: columns are numbered from 1"));
}

TEST(ParseRowsTest, RaggedRowNamesLineAndCounts) {
  const auto rows = ParseRows("1,2,3\n\n4,5\n", "r.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rows.status().message(), "r.csv:3: ragged row: expected 3 fields as on line 1, got 2");
}

TEST(ParseRowsTest, NonNumericFieldNamesLineFieldAndColumn) {
  auto rows = ParseRows("1,2\n3,x\n", "n.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(), "n.csv:2: field 2: expected a number, got 'x'");
  rows = ParseRows("p,q\n1,2\n3,1e99\n", "n.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("n.csv:3: field 2 ('q'): expected a finite"));
  rows = ParseRows("1,\n", "e.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("e.csv:1: field 2: expected a number, got ''"));
  rows = ParseRows("1,2abc\n", "e.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("got '2abc'"));
}

TEST(ParseRowsTest, HeaderModesAndIgnoredColumns) {
  RowReadOptions options;
  options.header = HeaderMode::kAbsent;
  auto rows = ParseRows("a,b\n1,2\n", "h.csv", options);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("h.csv:1: field 1"));
  options.header = HeaderMode::kPresent;
  rows = ParseRows("1,2\n3,4\n", "h.csv", options);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->num_rows, 1);

  RowReadOptions ignore;
  ignore.ignore_columns = {"label", "3"};
  rows = ParseRows("label,x,y,z\ncat,1,2,3\ndog,4,5,6\n", "t.csv", ignore);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim, 2);
  EXPECT_THAT(rows->column_names, ElementsAre("x", "z"));
  EXPECT_THAT(rows->values, ElementsAre(1, 3, 4, 6));
  ignore.ignore_columns = {"9"};
  EXPECT_FALSE(ParseRows("1,2\n", "t.csv", ignore).ok());
}

TEST(ParseRowsTest, EmptyInputIsAnError) {
  const auto rows = ParseRows("# only a comment\n\n", "e.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(), "e.csv: no rows");
}

std::string IdxHeader(char type, std::vector<uint32_t> dims) {
  std::string h = {0, 0, type, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) h.push_back(static_cast<char>((d >> s) & 0xff));
  }
  return h;
}

TEST(ParseRowsTest, IdxUnsignedBytesAreScaledAndFloatsKept) {
  std::string data =
      IdxHeader(0x08, {2, 2, 2}) + std::string("\x00\xff\x33\x66\x99\xcc\x01\x02", 8);
  auto rows = ParseRows(data, "<stdin>");  // detected by magic, not by name
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->num_rows, 2);
  EXPECT_EQ(rows->dim, 4);
  EXPECT_FLOAT_EQ(rows->values[1], 1.0f);
  EXPECT_FLOAT_EQ(rows->values[2], 0x33 / 255.0f);

  data = IdxHeader(0x0D, {1, 2});
  for (float f : {1.5f, -2.25f}) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    for (int s = 24; s >= 0; s -= 8) data.push_back(static_cast<char>((u >> s) & 0xff));
  }
  rows = ParseRows(data, "f.idx");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->values, ElementsAre(1.5f, -2.25f));

  rows = ParseRows(IdxHeader(0x08, {2, 3}) + "abc", "t.idx");
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("t.idx: IDX data size: expected 18 bytes"));
  rows = ParseRows(std::string("\x00\x00\x01\x01", 4), "bad.idx");
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("not an IDX file"));
}

TEST(ParseRowsTest, GzipIsDecompressed) {
  const std::string text = "1,2\n3,4\n";
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(256, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  auto rows = ParseRows(out, "x.csv.gz");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->values, ElementsAre(1, 2, 3, 4));
  rows = ParseRows(out.substr(0, out.size() / 2), "x.csv.gz");
  EXPECT_FALSE(rows.ok());
}

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
