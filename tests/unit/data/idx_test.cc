#include "train/data/idx.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/io/byte_stream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/data/test_files.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;

struct IdxFiles {
  std::string images;
  std::string labels;
  std::vector<uint8_t> pixels;
  std::vector<uint8_t> label_bytes;
};

// n images of 3 × 4 with pixel (i, p) = (7i + 13p) mod 256, labels i mod 3.
IdxFiles WriteSmallIdx(int64_t n, bool gzip) {
  IdxFiles f;
  const std::string suffix = gzip ? ".gz" : "";
  f.images = ScratchPath("images.idx3" + suffix);
  f.labels = ScratchPath("labels.idx1" + suffix);
  for (int64_t i = 0; i < n; ++i) {
    for (int p = 0; p < 12; ++p) f.pixels.push_back(static_cast<uint8_t>((7 * i + 13 * p) % 256));
    f.label_bytes.push_back(static_cast<uint8_t>(i % 3));
  }
  EXPECT_TRUE(WriteIdxImages(f.images, n, 3, 4, f.pixels, gzip).ok());
  EXPECT_TRUE(WriteIdxLabels(f.labels, f.label_bytes, gzip).ok());
  return f;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class IdxRoundTripTest : public ::testing::TestWithParam<bool> {};

TEST_P(IdxRoundTripTest, ReadsBackWhatWasWritten) {
  const bool gzip = GetParam();
  const IdxFiles f = WriteSmallIdx(10, gzip);
  const std::string raw = ReadBytes(f.images);
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(raw[0]) == 0x1f && static_cast<uint8_t>(raw[1]) == 0x8b, gzip);

  auto data = LoadIdx(f.images, f.labels);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->rows(), 10);
  ASSERT_EQ(data->dim(), 12);
  EXPECT_EQ(data->input_shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(data->class_names, (std::vector<std::string>{"0", "1", "2"}));
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(data->labels[i], i % 3);
    for (int p = 0; p < 12; ++p) {
      EXPECT_FLOAT_EQ(data->x.row(i)[p], f.pixels[i * 12 + p] / 255.0f);
    }
  }
  EXPECT_TRUE(ValidateDataset(*data).ok());
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, IdxRoundTripTest, ::testing::Bool());

TEST(IdxTest, PixelScalingCoversZeroToOne) {
  const std::string images = ScratchPath("i");
  const std::string labels = ScratchPath("l");
  ASSERT_TRUE(WriteIdxImages(images, 1, 1, 2, std::vector<uint8_t>{0, 255}, false).ok());
  ASSERT_TRUE(WriteIdxLabels(labels, std::vector<uint8_t>{4}, false).ok());
  auto data = LoadIdx(images, labels);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->x.row(0)[0], 0.0f);
  EXPECT_EQ(data->x.row(0)[1], 1.0f);
  EXPECT_EQ(data->num_classes(), 5);
  auto source = OpenIdxSource(images, labels, {});
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_TRUE((*source)->schema().unit_byte_scaled);  // recorded as INPUT_SCALING_UNIT_BYTE
  EXPECT_TRUE((*source)->schema().column_names.empty());
}

// The IDX source reads its files once per pass: stdin cannot be one of them.
TEST(IdxTest, StdinIsRefusedAsItCannotBeReadTwice) {
  auto source = OpenIdxSource("-", "labels.idx", {});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(), HasSubstr("not '-' (stdin)"));
}

TEST(IdxTest, WrongMagicNamesFileAndBothNumbers) {
  const IdxFiles f = WriteSmallIdx(4, false);
  // Labels passed as images: magic 0x00000801 where 0x00000803 is expected.
  auto data = LoadIdx(f.labels, f.labels);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(f.labels));
  EXPECT_THAT(data.status().message(), HasSubstr("wrong IDX magic"));
  EXPECT_THAT(data.status().message(), HasSubstr("expected 0x00000803"));
  EXPECT_THAT(data.status().message(), HasSubstr("got 0x00000801"));
}

TEST(IdxTest, TruncatedImageDataIsReported) {
  for (const bool gzip : {false, true}) {
    const IdxFiles f = WriteSmallIdx(5, false);
    // Keep the header (promising 5 images) and 2.5 images of pixels.
    const std::string raw = ReadBytes(f.images);
    const std::string cut = ScratchPath(gzip ? "cut.gz" : "cut");
    auto writer = io::ByteWriter::Create(cut, gzip);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Write(raw.data(), 16 + 30).ok());
    ASSERT_TRUE((*writer)->Close().ok());
    auto data = LoadIdx(cut, f.labels);
    ASSERT_FALSE(data.ok()) << "gzip=" << gzip;
    EXPECT_THAT(data.status().message(), HasSubstr(cut));
    EXPECT_THAT(data.status().message(), HasSubstr("truncated"));
    EXPECT_THAT(data.status().message(), HasSubstr("inside image 2"));
  }
}

TEST(IdxTest, TruncatedHeaderIsReported) {
  const std::string path = WriteText("short", std::string("\0\0\x08\x03\0\0", 6));
  const IdxFiles f = WriteSmallIdx(1, false);
  auto data = LoadIdx(path, f.labels);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr("truncated IDX header"));
  EXPECT_THAT(data.status().message(), HasSubstr("expected 16 bytes, got 6"));
}

TEST(IdxTest, TruncatedGzipLabelsAreReported) {
  const IdxFiles f = WriteSmallIdx(6, true);
  // Cut the compressed label stream in the middle: the gzip data is corrupt
  // or short, and either way the reader must fail, naming the file.
  const std::string raw = ReadBytes(f.labels);
  const std::string cut = WriteText("labels_cut.gz", raw.substr(0, raw.size() / 2));
  auto data = LoadIdx(f.images, cut);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(cut));
}

TEST(IdxTest, MismatchedCountsNameBothFiles) {
  const IdxFiles five = WriteSmallIdx(5, false);
  const std::string labels = ScratchPath("four_labels");
  ASSERT_TRUE(WriteIdxLabels(labels, std::vector<uint8_t>{0, 1, 2, 0}, false).ok());
  auto source = OpenIdxSource(five.images, labels);
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(source.status().message(), HasSubstr("count mismatch"));
  EXPECT_THAT(source.status().message(), HasSubstr("5 images"));
  EXPECT_THAT(source.status().message(), HasSubstr("4 labels"));
  EXPECT_THAT(source.status().message(), HasSubstr(labels));
}

TEST(IdxTest, LabelOutsideGivenClassesIsAnError) {
  const IdxFiles f = WriteSmallIdx(3, false);  // labels 0, 1, 2
  IdxOptions options;
  options.class_names = {"a", "b"};
  auto data = LoadIdx(f.images, f.labels, options);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr("label 2 of example 2"));
}

// A big-endian IDX header: magic, then the dims.
std::string IdxHeader(uint32_t magic, std::initializer_list<uint32_t> dims) {
  std::string bytes;
  std::vector<uint32_t> words = {magic};
  words.insert(words.end(), dims.begin(), dims.end());
  for (const uint32_t v : words) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(v >> shift));
  }
  return bytes;
}

// Regression (idx_fuzz corpus: huge_count): a header promising 4,294,967,295 images made LoadIdx
// allocate them all before reading (terabytes), so a 30-byte file aborted
// the process. Now memory follows the data and the truncation is reported.
TEST(IdxTest, HeaderPromisingMoreImagesThanTheFileHoldsIsTruncatedNotAllocated) {
  const std::string images =
      WriteText("huge_count_images",
                IdxHeader(kIdxImageMagic, {0xffffffffu, 28, 28}) + std::string(784, 'x'));
  const std::string labels =
      WriteText("huge_count_labels", IdxHeader(kIdxLabelMagic, {0xffffffffu}) + std::string(1, 3));
  auto data = LoadIdx(images, labels);
  ASSERT_FALSE(data.ok());
  EXPECT_TRUE(absl::IsDataLoss(data.status())) << data.status();
  EXPECT_THAT(data.status().message(), HasSubstr("truncated IDX image data"));
  EXPECT_THAT(data.status().message(), HasSubstr("inside image 1"));
}

// Regression (idx_fuzz corpus: huge_side): sides near 2^32 overflowed rows × cols.
TEST(IdxTest, ImageSideBeyondTheLimitIsRefusedNamingTheFile) {
  const std::string images =
      WriteText("huge_side_images", IdxHeader(kIdxImageMagic, {1, 0xfffffff0u, 0xfffffff0u}));
  const std::string labels = WriteText("huge_side_labels", IdxHeader(kIdxLabelMagic, {1}));
  auto source = OpenIdxSource(images, labels);
  ASSERT_FALSE(source.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(source.status())) << source.status();
  EXPECT_THAT(source.status().message(), HasSubstr(images));
  EXPECT_THAT(source.status().message(), HasSubstr("exceeds the largest supported side 4096"));
}

// n colour images of 3 × 4 × 3 (channels last) written by the io IDX
// writer: value (i, r, c, ch) = (11i + 5(4r + c) + 80ch) mod 256.
std::vector<uint8_t> ColourPixels(int64_t n) {
  std::vector<uint8_t> pixels;
  for (int64_t i = 0; i < n; ++i) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) {
        for (int ch = 0; ch < 3; ++ch) {
          pixels.push_back(static_cast<uint8_t>((11 * i + 5 * (4 * r + c) + 80 * ch) % 256));
        }
      }
    }
  }
  return pixels;
}

class IdxColourRoundTripTest : public ::testing::TestWithParam<bool> {};

TEST_P(IdxColourRoundTripTest, Rank4FileReadsAsChannelsLastImages) {
  const bool gzip = GetParam();
  const std::string images = ScratchPath(gzip ? "colour.idx4.gz" : "colour.idx4");
  const std::string labels = ScratchPath("colour_labels.idx1");
  const std::vector<uint8_t> pixels = ColourPixels(5);
  ASSERT_TRUE(io::WriteIdx(images, {5, 3, 4, 3}, pixels, gzip).ok());
  ASSERT_TRUE(WriteIdxLabels(labels, std::vector<uint8_t>{0, 1, 0, 1, 1}, false).ok());
  EXPECT_EQ(static_cast<uint8_t>(ReadBytes(images)[gzip ? 0 : 3]), gzip ? 0x1f : 0x04);
  auto source = OpenIdxSource(images, labels);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->schema().input_shape, (std::vector<int64_t>{3, 4, 3}));
  EXPECT_EQ((*source)->schema().dim, 36);
  EXPECT_TRUE((*source)->schema().unit_byte_scaled);
  auto data = LoadIdx(images, labels);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->rows(), 5);
  EXPECT_EQ(data->input_shape, (std::vector<int64_t>{3, 4, 3}));
  for (int64_t i = 0; i < 5; ++i) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) {
        for (int ch = 0; ch < 3; ++ch) {
          // Channels last: (r, c, ch) at (r·width + c)·channels + ch.
          const float want = ((11 * i + 5 * (4 * r + c) + 80 * ch) % 256) * (1.0f / 255.0f);
          EXPECT_EQ(data->x.row(i)[(r * 4 + c) * 3 + ch], want) << i << " " << r << " " << c;
        }
      }
    }
  }
  EXPECT_TRUE(ValidateDataset(*data).ok());
  // WriteIdxColorImages writes the same file.
  const std::string again = ScratchPath("colour_again.idx4");
  ASSERT_TRUE(WriteIdxColorImages(again, 5, 3, 4, 3, pixels, false).ok());
  if (!gzip) {
    EXPECT_EQ(ReadBytes(again), ReadBytes(images));
  }
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, IdxColourRoundTripTest, ::testing::Bool());

TEST(IdxTest, Float32ImagesAreReadAsTheyAre) {
  const std::string images = ScratchPath("f32.idx4");
  const std::string labels = ScratchPath("f32_labels.idx1");
  const std::vector<float> values = {-1.5f, 0.25f, 2.0f, 7.0f, 0.0f, 1e-3f};  // 1 × 1 × 2 × 3
  ASSERT_TRUE(io::WriteIdx(images, {1, 1, 2, 3}, values, false).ok());
  ASSERT_TRUE(WriteIdxLabels(labels, std::vector<uint8_t>{2}, false).ok());
  auto data = LoadIdx(images, labels);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->input_shape, (std::vector<int64_t>{1, 2, 3}));
  for (int k = 0; k < 6; ++k) EXPECT_EQ(data->x.row(0)[k], values[k]);
  auto source = OpenIdxSource(images, labels);
  ASSERT_TRUE(source.ok());
  EXPECT_FALSE((*source)->schema().unit_byte_scaled);

  const std::string bad = ScratchPath("nan.idx3");
  ASSERT_TRUE(io::WriteIdx(bad, {1, 1, 2}, std::vector<float>{1.0f, NAN}, false).ok());
  auto nan = LoadIdx(bad, labels);
  ASSERT_FALSE(nan.ok());
  EXPECT_THAT(nan.status().message(), HasSubstr(bad));
  EXPECT_THAT(nan.status().message(), HasSubstr("non-finite"));
}

TEST(IdxTest, Rank4FileWhoseLastDimIsNotChannelsIsRefusedNamingTheDim) {
  const std::string labels = ScratchPath("labels.idx1");
  ASSERT_TRUE(WriteIdxLabels(labels, std::vector<uint8_t>{0}, false).ok());
  // Channels first: 1 × 3 × 8 × 8.
  const std::string first = ScratchPath("chw.idx4");
  ASSERT_TRUE(io::WriteIdx(first, {1, 3, 8, 8}, std::vector<uint8_t>(192), false).ok());
  auto source = OpenIdxSource(first, labels);
  ASSERT_FALSE(source.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(source.status()));
  EXPECT_THAT(source.status().message(), HasSubstr(first));
  EXPECT_THAT(source.status().message(), HasSubstr("the last dim (channels) is 8"));
  EXPECT_THAT(source.status().message(), HasSubstr("channels-first"));
  // Zero channels.
  const std::string zero = ScratchPath("zero.idx4");
  ASSERT_TRUE(io::WriteIdx(zero, {1, 8, 8, 0}, std::vector<uint8_t>(), false).ok());
  source = OpenIdxSource(zero, labels);
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(source.status().message(), HasSubstr("the last dim (channels) is 0"));
  // A rank-2 file is not an image file.
  const std::string flat = ScratchPath("flat.idx2");
  ASSERT_TRUE(io::WriteIdx(flat, {1, 64}, std::vector<uint8_t>(64), false).ok());
  source = OpenIdxSource(flat, labels);
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(source.status().message(), HasSubstr("got 0x00000802"));
}

TEST(IdxTest, MissingFileIsNotFound) {
  auto data = LoadIdx(ScratchPath("nope"), ScratchPath("nope2"));
  ASSERT_FALSE(data.ok());
  EXPECT_TRUE(absl::IsNotFound(data.status()));
  EXPECT_THAT(data.status().message(), HasSubstr("nope"));
}

}  // namespace
}  // namespace invariant::train
