#include "core/io/byte_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "tests/unit/io/io_test_files.h"

namespace invariant::io {
namespace {

using ::testing::HasSubstr;

std::string Text(int n) {
  std::string text;
  for (int64_t i = 0; i < n; ++i) absl::StrAppend(&text, i, ",", i * i, "\n");
  return text;
}

TEST(ByteStreamTest, PlainAndGzipFilesReadTheSameBytes) {
  const std::string text = Text(50000);  // larger than one buffer
  for (const bool gzip : {false, true}) {
    const std::string path = WriteScratch(gzip ? "t.gz" : "t", text, gzip);
    auto reader = ByteReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_EQ((*reader)->gzip(), gzip);
    EXPECT_EQ((*reader)->path(), path);
    auto bytes = ReadAll(**reader);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, text) << "gzip=" << gzip;
  }
}

TEST(ByteStreamTest, ConcatenatedGzipMembersAndMemoryInput) {
  const std::string a = ReadBytes(WriteScratch("a.gz", "1,2\n", true));
  const std::string b = ReadBytes(WriteScratch("b.gz", "3,4\n", true));
  auto reader = ByteReader::FromString(a + b, "ab.csv.gz");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->gzip());
  auto bytes = ReadAll(**reader);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "1,2\n3,4\n");
}

TEST(ByteStreamTest, TruncatedOrCorruptGzipIsDataLossNamingTheInput) {
  const std::string gz = ReadBytes(WriteScratch("t.gz", Text(1000), true));
  auto reader = ByteReader::FromString(gz.substr(0, gz.size() / 2), "half.gz");
  ASSERT_TRUE(reader.ok());
  auto bytes = ReadAll(**reader);
  ASSERT_FALSE(bytes.ok());
  EXPECT_TRUE(absl::IsDataLoss(bytes.status())) << bytes.status();
  EXPECT_THAT(bytes.status().message(), HasSubstr("half.gz: "));
  std::string corrupt = gz;
  for (size_t i = 20; i < 40; ++i) corrupt[i] = static_cast<char>(~corrupt[i]);
  reader = ByteReader::FromString(corrupt, "bad.gz");
  ASSERT_TRUE(reader.ok());
  bytes = ReadAll(**reader);
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(), HasSubstr("bad.gz: "));
}

TEST(ByteStreamTest, StdinIsDashAndNamedStdin) {
  const std::string path = WriteScratch("in.gz", "a\tb\n1\t2\n", true);
  ASSERT_NE(std::freopen(path.c_str(), "rb", stdin), nullptr);
  auto reader = ByteReader::Open("-");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->path(), "<stdin>");
  EXPECT_TRUE((*reader)->gzip());
  auto bytes = ReadAll(**reader);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "a\tb\n1\t2\n");
  EXPECT_EQ(DisplayName("-"), "<stdin>");
  EXPECT_EQ(DisplayName("x.csv"), "x.csv");
}

TEST(ByteStreamTest, MissingFileIsNotFound) {
  auto reader = ByteReader::Open(ScratchPath("nope"));
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::IsNotFound(reader.status()));
  EXPECT_THAT(reader.status().message(), HasSubstr("nope: cannot open"));
}

}  // namespace
}  // namespace invariant::io
