// core/image/resample.h: Pillow's resampling. Byte-for-byte agreement with
// Pillow itself is tests/python/test_image_reference.py; here, the
// properties any resampler must have.
#include "core/image/resample.h"

#include "gtest/gtest.h"
#include "tests/test_models/test_images.h"

namespace invariant::image {
namespace {

namespace ti = invariant::testing_images;

Box Whole(const Pixels& p) {
  return Box{0, 0, static_cast<double>(p.width), static_cast<double>(p.height)};
}

TEST(ResampleTest, TheWholeImageAtItsOwnSizeIsUnchanged) {
  const Pixels p = ti::Noise(17, 9, 3, 1);
  for (Filter f : {Filter::kBilinear, Filter::kBicubic}) {
    EXPECT_EQ(Resample(p, Whole(p), 17, 9, f).data, p.data);
  }
}

TEST(ResampleTest, AConstantImageStaysConstantAtAnySize) {
  Pixels p = Pixels::Zeros(23, 31, 3);
  for (size_t i = 0; i < p.data.size(); ++i) p.data[i] = static_cast<uint8_t>(40 + 70 * (i % 3));
  for (Filter f : {Filter::kBilinear, Filter::kBicubic}) {
    for (auto [w, h] : {std::pair{7, 5}, std::pair{64, 80}, std::pair{23, 10}, std::pair{1, 1}}) {
      const Pixels out = Resample(p, Whole(p), w, h, f);
      ASSERT_EQ(out.width, w);
      ASSERT_EQ(out.height, h);
      for (size_t i = 0; i < out.data.size(); ++i) {
        ASSERT_EQ(out.data[i], 40 + 70 * (i % 3)) << w << "x" << h << " at " << i;
      }
    }
  }
}

TEST(ResampleTest, HalvingStretchesTheTriangleOverTheSourcePixels) {
  // A reduction by 2 stretches the triangle to support 2: output 0 (centre
  // 1) weighs sources 0, 1, 2 by 0.75, 0.75, 0.25; output 1 (centre 3)
  // weighs sources 1, 2, 3 by 0.25, 0.75, 0.75; each normalised to unit sum.
  Pixels p = Pixels::Zeros(4, 1, 1);
  p.data = {0, 100, 200, 50};
  const Pixels out = Resample(p, Whole(p), 2, 1, Filter::kBilinear);
  ASSERT_EQ(out.width, 2);
  EXPECT_EQ(out.data[0], 71);   // (0·0.75 + 100·0.75 + 200·0.25) / 1.75 = 71.4
  EXPECT_EQ(out.data[1], 121);  // (100·0.25 + 200·0.75 + 50·0.75) / 1.75 = 121.4
}

TEST(ResampleTest, ABoxSelectsTheRegionItCovers) {
  // The left half of an image whose left half is black and right half white.
  Pixels p = Pixels::Zeros(8, 4, 1);
  for (int r = 0; r < 4; ++r) {
    for (int c = 4; c < 8; ++c) p.row(r)[c] = 255;
  }
  const Pixels left = Resample(p, Box{0, 0, 3, 4}, 3, 4, Filter::kBilinear);
  for (uint8_t v : left.data) EXPECT_EQ(v, 0);
}

}  // namespace
}  // namespace invariant::image
