#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/io/idx.h"
#include "tests/unit/io/io_test_files.h"

namespace invariant::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(IdxFormatTest, BigEndianWordsRoundTrip) {
  unsigned char bytes[4];
  WriteBigEndian32(0x01020304u, bytes);
  EXPECT_THAT(bytes, ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(ReadBigEndian32(bytes), 0x01020304u);
  EXPECT_EQ(Hex32(kIdxImageMagic), "0x00000803");
}

TEST(IdxFormatTest, WrittenHeaderReadsBackPlainAndGzip) {
  for (const bool gzip : {false, true}) {
    const std::string path = ScratchPath(gzip ? "i.gz" : "i");
    ASSERT_TRUE(WriteIdx(path, {2, 1, 3}, std::vector<uint8_t>{0, 1, 2, 3, 4, 255}, gzip).ok());
    auto reader = ByteReader::Open(path);
    ASSERT_TRUE(reader.ok());
    auto header = ReadIdxHeader(**reader, kIdxImageMagic, "image");
    ASSERT_TRUE(header.ok()) << header.status();
    EXPECT_EQ(header->type, kIdxUnsignedByte);
    EXPECT_THAT(header->dims, ElementsAre(2, 1, 3));
    EXPECT_EQ(header->header_bytes(), 16);
    unsigned char data[6];
    ASSERT_EQ(*(*reader)->Read(data, 6), 6);
    float x[6];
    DecodeIdx(header->type, data, 6, x);
    EXPECT_EQ(x[0], 0.0f);
    EXPECT_EQ(x[5], 1.0f);
    EXPECT_FLOAT_EQ(x[1], 1.0f / 255.0f);
  }
}

TEST(IdxFormatTest, DecodesEveryElementType) {
  float x[2];
  const unsigned char s8[] = {0xff, 0x05};
  DecodeIdx(0x09, s8, 2, x);
  EXPECT_THAT(x, ElementsAre(-1.0f, 5.0f));
  const unsigned char s16[] = {0xff, 0xfe, 0x01, 0x00};
  DecodeIdx(0x0B, s16, 2, x);
  EXPECT_THAT(x, ElementsAre(-2.0f, 256.0f));
  const unsigned char s32[] = {0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 7};
  DecodeIdx(0x0C, s32, 2, x);
  EXPECT_THAT(x, ElementsAre(-3.0f, 7.0f));
  const float f = -2.25f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  unsigned char f32[4];
  WriteBigEndian32(u, f32);
  DecodeIdx(0x0D, f32, 1, x);
  EXPECT_EQ(x[0], -2.25f);
  const double d = 1.5;
  uint64_t w;
  std::memcpy(&w, &d, 8);
  unsigned char f64[8];
  WriteBigEndian32(static_cast<uint32_t>(w >> 32), f64);
  WriteBigEndian32(static_cast<uint32_t>(w), f64 + 4);
  DecodeIdx(0x0E, f64, 1, x);
  EXPECT_EQ(x[0], 1.5f);
}

TEST(IdxFormatTest, WrongUnknownAndShortHeadersNameTheInput) {
  auto reader = ByteReader::FromString(std::string("\0\0\x08\x01\0\0\0\x01\x07", 9), "l.idx");
  ASSERT_TRUE(reader.ok());
  auto header = ReadIdxHeader(**reader, kIdxImageMagic, "image");
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().message(),
            "l.idx: wrong IDX magic number for image file: expected 0x00000803, got 0x00000801");
  reader = ByteReader::FromString(std::string("\0\0\x01\x01", 4), "bad.idx");
  ASSERT_TRUE(reader.ok());
  header = ReadIdxHeader(**reader);
  ASSERT_FALSE(header.ok());
  EXPECT_THAT(header.status().message(), HasSubstr("bad.idx: not an IDX file"));
  reader = ByteReader::FromString(std::string("\0\0\x08\x03\0\0", 6), "short.idx");
  ASSERT_TRUE(reader.ok());
  header = ReadIdxHeader(**reader);
  ASSERT_FALSE(header.ok());
  EXPECT_TRUE(absl::IsDataLoss(header.status()));
  EXPECT_THAT(header.status().message(), HasSubstr("expected 16 bytes, got 6"));
  EXPECT_TRUE(LooksLikeIdx(std::string("\0\0\x0D\x02", 4)));
  EXPECT_FALSE(LooksLikeIdx(std::string("\0\0\x0D\x05", 4)));
  EXPECT_FALSE(LooksLikeIdx("a,b\n"));
}

TEST(IdxFormatTest, Rank4ColourAndFloatFilesRoundTrip) {
  const std::string bytes_path = ScratchPath("colour.idx");
  std::vector<uint8_t> pixels(2 * 2 * 3 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(7 * i);
  ASSERT_TRUE(WriteIdx(bytes_path, {2, 2, 3, 3}, pixels, false).ok());
  auto reader = ByteReader::Open(bytes_path);
  ASSERT_TRUE(reader.ok());
  auto header = ReadIdxHeader(**reader, kIdxColorImageMagic, "image");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->magic, 0x00000804u);
  EXPECT_THAT(header->dims, ElementsAre(2, 2, 3, 3));

  const std::string float_path = ScratchPath("colour_f32.idx.gz");
  const std::vector<float> values = {0.5f, -1.25f, 3.0e7f, 1e-30f, 0.0f, -0.0f};
  ASSERT_TRUE(WriteIdx(float_path, {1, 1, 2, 3}, values, true).ok());
  reader = ByteReader::Open(float_path);
  ASSERT_TRUE(reader.ok());
  header = ReadIdxHeader(**reader, IdxMagic(kIdxFloat32, 4), "image");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->magic, 0x00000D04u);
  EXPECT_EQ(header->element_bytes, 4);
  unsigned char data[24];
  ASSERT_EQ(*(*reader)->Read(data, 24), 24);
  float x[6];
  DecodeIdx(header->type, data, 6, x);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(std::memcmp(&x[i], &values[i], 4), 0) << i;

  EXPECT_FALSE(WriteIdx(ScratchPath("short"), {1, 2, 2}, std::vector<float>{1.0f}, false).ok());
}

TEST(IdxFormatTest, AcceptedMagicSetNamesEveryAcceptedMagic) {
  auto reader = ByteReader::FromString(std::string("\0\0\x08\x01\0\0\0\x01\x07", 9), "l.idx");
  ASSERT_TRUE(reader.ok());
  const uint32_t accepted[] = {kIdxImageMagic, kIdxColorImageMagic};
  auto header = ReadIdxHeader(**reader, accepted, "image");
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().message(),
            "l.idx: wrong IDX magic number for image file: expected 0x00000803 or 0x00000804, got "
            "0x00000801");
  reader = ByteReader::FromString(
      std::string("\0\0\x08\x04\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\x03", 20), "c.idx");
  ASSERT_TRUE(reader.ok());
  header = ReadIdxHeader(**reader, accepted, "image");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_THAT(header->dims, ElementsAre(1, 1, 1, 3));
}

}  // namespace
}  // namespace invariant::io
