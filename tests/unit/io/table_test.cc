// table_test.cc: core/io/table.h, the whole-input reader of invariant-client
// (client/cli/rows.h's ParseRows is io::ParseTable). The suite keeps the name
// ParseRowsTest it had in tests/cli/cli_lib_test.cc.
#include "core/io/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

namespace invariant::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<Table> ParseRows(const std::string& data, const std::string& name,
                                const TableOptions& options = {}) {
  return ParseTable(data, name, options);
}

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
  TableOptions options;
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
  TableOptions options;
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
  TableOptions options;
  options.header = HeaderMode::kAbsent;
  auto rows = ParseRows("a,b\n1,2\n", "h.csv", options);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("h.csv:1: field 1"));
  options.header = HeaderMode::kPresent;
  rows = ParseRows("1,2\n3,4\n", "h.csv", options);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->num_rows, 1);

  TableOptions ignore;
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

// Dims whose product wraps a 64-bit count are a size mismatch: 65,536⁴ bytes
// is 2⁶⁴, which would wrap to 0 and match a file of the header alone.
TEST(ParseRowsTest, IdxDimsBeyondTheFileAreRefusedWithoutOverflow) {
  const auto rows = ParseRows(IdxHeader(0x08, {65536, 65536, 65536, 65536}), "huge.idx");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      rows.status().message(),
      HasSubstr("huge.idx: IDX dims [65536,65536,65536,65536] need more than the 20 bytes"));
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

}  // namespace
}  // namespace invariant::io
