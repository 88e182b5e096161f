// core/image/orientation.h: EXIF orientation read from TIFF blocks and JPEG
// segments, and applied as Pillow's ImageOps.exif_transpose applies it.
#include "core/image/orientation.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/test_models/test_images.h"

namespace invariant::image {
namespace {

namespace ti = invariant::testing_images;

// A 3 × 2 image (width 3) whose pixel (r, c) holds 10·r + c.
Pixels Numbered() {
  Pixels p = Pixels::Zeros(3, 2, 1);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) p.row(r)[c] = static_cast<uint8_t>(10 * r + c);
  }
  return p;
}

std::vector<uint8_t> Rows(const Pixels& p) { return p.data; }

TEST(OrientationTest, EachValueTurnsTheImageUpright) {
  // Source rows: [0 1 2] [10 11 12].
  EXPECT_EQ(Rows(ApplyOrientation(Numbered(), 1)), (std::vector<uint8_t>{0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(Rows(ApplyOrientation(Numbered(), 2)), (std::vector<uint8_t>{2, 1, 0, 12, 11, 10}));
  EXPECT_EQ(Rows(ApplyOrientation(Numbered(), 3)), (std::vector<uint8_t>{12, 11, 10, 2, 1, 0}));
  EXPECT_EQ(Rows(ApplyOrientation(Numbered(), 4)), (std::vector<uint8_t>{10, 11, 12, 0, 1, 2}));
  // 5..8 swap the sides: 2 wide, 3 high.
  const Pixels transposed = ApplyOrientation(Numbered(), 5);
  EXPECT_EQ(transposed.width, 2);
  EXPECT_EQ(transposed.height, 3);
  EXPECT_EQ(Rows(transposed), (std::vector<uint8_t>{0, 10, 1, 11, 2, 12}));
  // 6: rotate 90° clockwise (the left column becomes the top row, reversed).
  EXPECT_EQ(Rows(ApplyOrientation(Numbered(), 6)), (std::vector<uint8_t>{10, 0, 11, 1, 12, 2}));
  EXPECT_EQ(Rows(ApplyOrientation(Numbered(), 7)), (std::vector<uint8_t>{12, 2, 11, 1, 10, 0}));
  // 8: rotate 90° counter-clockwise (the right column becomes the top row).
  EXPECT_EQ(Rows(ApplyOrientation(Numbered(), 8)), (std::vector<uint8_t>{2, 12, 1, 11, 0, 10}));
}

TEST(OrientationTest, TiffBlocksOfEitherByteOrderAreRead) {
  for (int v = 1; v <= 8; ++v) {
    EXPECT_EQ(TiffOrientation(ti::ExifOrientation(v, true)), v);
    EXPECT_EQ(TiffOrientation(ti::ExifOrientation(v, false)), v);
  }
}

TEST(OrientationTest, MalformedOrMissingBlocksReadAsUpright) {
  const std::string good = ti::ExifOrientation(6);
  // Header 8 bytes, entry count 2, the entry 12: any shorter block reads 1.
  for (size_t cut = 0; cut < 22; ++cut) {
    EXPECT_EQ(TiffOrientation(good.substr(0, cut)), 1) << "cut at " << cut;
  }
  EXPECT_EQ(TiffOrientation(good.substr(0, 22)), 6);
  EXPECT_EQ(TiffOrientation(ti::ExifOrientation(9)), 1);  // out of range
  EXPECT_EQ(TiffOrientation("XX*\0garbage"), 1);          // no byte order mark
  std::string far = good;
  far[7] = 0x7F;  // IFD0 offset beyond the block
  EXPECT_EQ(TiffOrientation(far), 1);
  const std::string jpeg = ti::EncodeJpeg(ti::Noise(8, 8, 3, 1));
  EXPECT_EQ(JpegOrientation(jpeg), 1);
  EXPECT_EQ(JpegOrientation(ti::WithExif(jpeg, good)), 6);
  EXPECT_EQ(JpegOrientation(ti::WithExif(jpeg, good).substr(0, 20)), 1);
  EXPECT_EQ(JpegOrientation("not a jpeg"), 1);
}

}  // namespace
}  // namespace invariant::image
