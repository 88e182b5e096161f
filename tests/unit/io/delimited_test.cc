#include "core/io/delimited.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace invariant::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Split(const std::string& line, char delimiter = ',') {
  std::vector<std::string> fields;
  std::string error;
  EXPECT_TRUE(SplitFields(line, delimiter, &fields, &error)) << error;
  return fields;
}

std::string SplitError(const std::string& line) {
  std::vector<std::string> fields;
  std::string error;
  EXPECT_FALSE(SplitFields(line, ',', &fields, &error)) << line;
  return error;
}

absl::StatusOr<std::unique_ptr<DelimitedReader>> Open(const std::string& text,
                                                      const std::string& name,
                                                      DelimitedOptions options = {}) {
  auto bytes = ByteReader::FromString(text, name);
  if (!bytes.ok()) return bytes.status();
  return DelimitedReader::Open(*std::move(bytes), options);
}

TEST(DelimitedTest, UnquotedFieldsAreTrimmedQuotedFieldsKeepTheirBlanks) {
  EXPECT_THAT(Split(" a , b b ,c"), ElementsAre("a", "b b", "c"));
  EXPECT_THAT(Split("\" a \", \"b\" ,\"\""), ElementsAre(" a ", "b", ""));
  EXPECT_THAT(Split("1,,3,"), ElementsAre("1", "", "3", ""));
  EXPECT_THAT(Split(" x \t y ", '\t'), ElementsAre("x", "y"));
}

TEST(DelimitedTest, QuotedFieldsHoldDelimitersAndDoubledQuotes) {
  EXPECT_THAT(Split("\"a,b\",\"say \"\"hi\"\"\",c"), ElementsAre("a,b", "say \"hi\"", "c"));
  EXPECT_THAT(Split("ab\"c,d"), ElementsAre("ab\"c", "d"));  // a quote inside is kept
  EXPECT_EQ(SplitError("1,\"open"), "field 2: unterminated quoted field");
  EXPECT_EQ(SplitError("\"a\"b,2"), "field 1: text after the closing quote");
}

TEST(DelimitedTest, ParseNumberTakesBlanksAroundButNothingElse) {
  float v = 0;
  std::string error;
  EXPECT_TRUE(ParseNumber(" 2.5 ", &v, &error));
  EXPECT_EQ(v, 2.5f);
  EXPECT_TRUE(ParseNumber("+4e1", &v, &error));
  EXPECT_EQ(v, 40.0f);
  EXPECT_FALSE(ParseNumber("2 5", &v, &error));
  EXPECT_EQ(error, "expected a number, got '2 5'");
  EXPECT_FALSE(ParseNumber("nan", &v, &error));
  EXPECT_THAT(error, HasSubstr("expected a finite number"));
  EXPECT_FALSE(ParseNumber("1e99", &v, &error));
  EXPECT_FALSE(ParseNumber("", &v, &error));
}

TEST(DelimitedTest, CommentsAndBlankLinesAreSkippedButCounted) {
  auto reader = Open("# a comment\n\na,b\r\n  # indented comment\n1,2\n\"#3\",4\n5,6", "c.csv");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->has_header());
  EXPECT_EQ((*reader)->header_line(), 3);
  EXPECT_THAT((*reader)->header(), ElementsAre("a", "b"));
  Record record;
  std::vector<int64_t> lines;
  std::vector<std::string> first;
  while (true) {
    auto any = (*reader)->Next(&record);
    ASSERT_TRUE(any.ok()) << any.status();
    if (!*any) break;
    lines.push_back(record.line);
    first.push_back(record.fields[0]);
  }
  EXPECT_THAT(lines, ElementsAre(5, 6, 7));
  EXPECT_THAT(first, ElementsAre("1", "#3", "5"));  // a quoted '#' is data
}

TEST(DelimitedTest, HeaderDetectionAndPandasIndexColumn) {
  auto reader = Open("1,2\n3,4\n", "n.csv");
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE((*reader)->has_header());
  reader = Open("x,2\n3,4\n", "n.csv");  // not every field is a name
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE((*reader)->has_header());
  reader = Open(",a,b\n0,1,2\n", "df.csv");
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE((*reader)->has_header());
  EXPECT_TRUE((*reader)->index_column());
  reader = Open("a,,b\n0,1,2\n", "gap.csv");  // only the first name may be empty
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE((*reader)->has_header());
  reader = Open("1,2\n3,4\n", "n.csv", {0, HeaderMode::kPresent});
  ASSERT_TRUE(reader.ok());
  EXPECT_THAT((*reader)->header(), ElementsAre("1", "2"));
  EXPECT_FALSE((*reader)->index_column());
}

TEST(DelimitedTest, DelimiterByNameThenByTheFirstDataLine) {
  EXPECT_EQ(DetectDelimiter("x.tsv", "1,2"), '\t');
  EXPECT_EQ(DetectDelimiter("x.tab.gz", "1,2"), '\t');
  EXPECT_EQ(DetectDelimiter("x.csv", "1\t2"), ',');
  EXPECT_EQ(DetectDelimiter("<stdin>", "1\t2"), '\t');
  EXPECT_EQ(DetectDelimiter("<stdin>", "a\tb,c"), ',');
  auto reader = Open("# tabs follow\n1\t2\n", "<stdin>");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->delimiter(), '\t');
  EXPECT_EQ((*reader)->first_line(), 2);
}

TEST(DelimitedTest, RaggedRowsAndBadQuotesNameFileAndLine) {
  auto reader = Open("a,b\n1,2\n\n3\n", "r.csv");
  ASSERT_TRUE(reader.ok());
  Record record;
  ASSERT_TRUE((*reader)->Next(&record).ok());
  auto next = (*reader)->Next(&record);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().message(), "r.csv:4: ragged row: expected 2 fields as on line 1, got 1");
  reader = Open("a,b\n1,\"2\n", "q.csv");
  ASSERT_TRUE(reader.ok());
  next = (*reader)->Next(&record);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().message(), "q.csv:2: field 2: unterminated quoted field");
}

TEST(DelimitedTest, EmptyInputOpensWithoutFields) {
  auto reader = Open("# nothing\n\n", "e.csv");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->num_fields(), 0);
  Record record;
  auto next = (*reader)->Next(&record);
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(*next);
}

}  // namespace
}  // namespace invariant::io
