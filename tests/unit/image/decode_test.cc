// core/image/image_file.h: JPEG and PNG decoding, header-first limits.
#include <cstdlib>
#include <string>

#include "core/image/image_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_models/test_images.h"
#include "tests/unit/image/largest_allocation.h"

namespace invariant::image {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace ti = invariant::testing_images;

double MeanAbsDifference(const Pixels& a, const Pixels& b) {
  double sum = 0;
  for (size_t i = 0; i < a.data.size(); ++i) sum += std::abs(a.data[i] - b.data[i]);
  return sum / static_cast<double>(a.data.size());
}

TEST(DecodeTest, APngOfKnownPixelsDecodesToThemInEveryLayout) {
  for (int channels : {1, 2, 3, 4}) {
    for (bool sixteen : {false, true}) {
      for (bool interlaced : {false, true}) {
        const Pixels source = ti::Noise(13, 7, channels, 10 + channels);
        const std::string png = ti::EncodePng(source, sixteen, interlaced);
        absl::StatusOr<Pixels> decoded = DecodeImage(png, 1000, "x.png");
        ASSERT_TRUE(decoded.ok()) << decoded.status();
        // Opaque images come out RGB, images with alpha RGBA; grey as R = G = B.
        const int expected = channels == 1 || channels == 3 ? 3 : 4;
        ASSERT_EQ(decoded->channels, expected);
        ASSERT_EQ(decoded->width, 13);
        ASSERT_EQ(decoded->height, 7);
        for (int64_t i = 0; i < 13 * 7; ++i) {
          const uint8_t* s = source.data.data() + i * channels;
          const uint8_t* d = decoded->data.data() + i * expected;
          const bool grey = channels <= 2;
          for (int c = 0; c < 3; ++c) {
            ASSERT_EQ(d[c], grey ? s[0] : s[c]) << "channels " << channels << " pixel " << i;
          }
          if (expected == 4) {
            ASSERT_EQ(d[3], s[channels - 1]);
          }
        }
      }
    }
  }
}

TEST(DecodeTest, APalettePngDecodesThroughItsPalette) {
  const Pixels indices = ti::Noise(9, 5, 1, 3);
  absl::StatusOr<Pixels> decoded = DecodeImage(ti::EncodePalettePng(indices), 1000, "p.png");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->channels, 3);
  for (int64_t i = 0; i < 45; ++i) {
    const int index = indices.data[i];
    EXPECT_EQ(decoded->data[3 * i], index);
    EXPECT_EQ(decoded->data[3 * i + 1], 255 - index);
    EXPECT_EQ(decoded->data[3 * i + 2], (3 * index) % 256);
  }
}

TEST(DecodeTest, BaselineProgressiveAndGreyJpegsDecodeCloseToTheirPixels) {
  for (int channels : {1, 3}) {
    for (bool progressive : {false, true}) {
      const Pixels source = ti::Noise(40, 24, channels, 7, 3);
      absl::StatusOr<Pixels> decoded =
          DecodeImage(ti::EncodeJpeg(source, 95, progressive), 10000, "x.jpg");
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      ASSERT_EQ(decoded->channels, channels);
      ASSERT_EQ(decoded->width, 40);
      EXPECT_LT(MeanAbsDifference(source, *decoded), 3.0);
    }
  }
}

TEST(DecodeTest, APngDeclaring30000By30000IsRefusedFromItsHeaderWithoutAllocatingIt) {
  const std::string bomb = ti::PngDeclaring(30000, 30000);
  absl::StatusOr<ImageHeader> header = ReadImageHeader(bomb, "inputs.images[0]");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->pixels(), int64_t{900'000'000});
  ti::LargestAllocation watch;
  absl::StatusOr<Pixels> decoded = DecodeImage(bomb, 50'000'000, "inputs.images[0]");
  const size_t largest = watch.largest();
  ASSERT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(decoded.status().message(),
            "inputs.images[0]: the PNG declares 30000 x 30000 = 900000000 pixels, above the "
            "limit of 50000000 pixels");
  EXPECT_LT(largest, size_t{1} << 20);
  // The watch sees a decoded image's pixels (so the bound above means something).
  ti::LargestAllocation decoding;
  ASSERT_TRUE(DecodeImage(ti::EncodePng(ti::Noise(600, 400, 3, 1)), 50'000'000, "ok").ok());
  EXPECT_GE(decoding.largest(), size_t{600 * 400 * 3});
}

TEST(DecodeTest, AJpegDeclaring60000By60000IsRefusedFromItsHeaderWithoutAllocatingIt) {
  const std::string bomb = ti::JpegDeclaring(ti::EncodeJpeg(ti::Noise(16, 16, 3, 1)), 60000, 60000);
  ti::LargestAllocation watch;
  absl::StatusOr<Pixels> decoded = DecodeImage(bomb, 50'000'000, "big.jpg");
  const size_t largest = watch.largest();
  ASSERT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(decoded.status().message(),
            "big.jpg: the JPEG declares 60000 x 60000 = 3600000000 pixels, above the limit of "
            "50000000 pixels");
  EXPECT_LT(largest, size_t{1} << 20);
}

TEST(DecodeTest, SidesOutsideOneToTheMaximumAreRefused) {
  for (uint32_t w : {0u, 70000u}) {
    absl::StatusOr<ImageHeader> header = ReadImageHeader(ti::PngDeclaring(w, 10), "f");
    ASSERT_FALSE(header.ok()) << w;
    EXPECT_THAT(std::string(header.status().message()), StartsWith("f: the PNG declares "));
    EXPECT_THAT(std::string(header.status().message()), HasSubstr("expected sides of 1 to 65500"));
  }
}

TEST(DecodeTest, TruncatedAndCorruptFilesAreInvalidArgumentNamingTheInput) {
  const Pixels source = ti::Noise(64, 64, 3, 5, 2);
  const std::string png = ti::EncodePng(source);
  const std::string jpeg = ti::EncodeJpeg(source);
  std::string flipped = png;
  flipped[flipped.size() / 2] ^= 0x5A;  // inside IDAT: its CRC no longer matches
  for (const std::string& file : {png.substr(0, png.size() / 2), jpeg.substr(0, jpeg.size() / 2),
                                  flipped, png.substr(0, 20), jpeg.substr(0, 3)}) {
    absl::StatusOr<Pixels> decoded = DecodeImage(file, 1'000'000, "inputs.images[2]");
    ASSERT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument)
        << file.size() << " bytes: " << decoded.status();
    EXPECT_THAT(std::string(decoded.status().message()),
                StartsWith("inputs.images[2]: a corrupt or truncated"));
  }
}

TEST(DecodeTest, ACmykJpegIsRefusedByName) {
  absl::StatusOr<Pixels> decoded =
      DecodeImage(ti::EncodeCmykJpeg(ti::Noise(16, 16, 4, 2)), 1000, "print.jpg");
  ASSERT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(decoded.status().message()),
              StartsWith("print.jpg: a YCCK JPEG (print colour)"));
}

TEST(DecodeTest, OtherBytesAreNotAnImage) {
  absl::StatusOr<Pixels> decoded = DecodeImage("GIF89a....", 1000, "a.gif");
  ASSERT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      decoded.status().message(),
      "a.gif: expected a JPEG or PNG file, received 10 bytes starting 47 49 46 38 39 61 2e 2e");
  EXPECT_EQ(DecodeImage("", 1000, "e").status().message(),
            "e: expected a JPEG or PNG file, received 0 bytes");
}

TEST(DecodeTest, TheOrientationOfAJpegAndOfAPngIsReported) {
  const Pixels source = ti::Noise(8, 8, 3, 4);
  int orientation = 0;
  ASSERT_TRUE(DecodeImage(ti::WithExif(ti::EncodeJpeg(source), ti::ExifOrientation(6)), 1000, "j",
                          &orientation)
                  .ok());
  EXPECT_EQ(orientation, 6);
  ASSERT_TRUE(DecodeImage(ti::EncodePng(source, false, false, ti::ExifOrientation(3, false)), 1000,
                          "p", &orientation)
                  .ok());
  EXPECT_EQ(orientation, 3);
  ASSERT_TRUE(DecodeImage(ti::EncodePng(source), 1000, "q", &orientation).ok());
  EXPECT_EQ(orientation, 1);
}

}  // namespace
}  // namespace invariant::image
