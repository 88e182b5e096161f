// core/image/front_end.h: the image front end, file → row.
#include "core/image/front_end.h"

#include <string>
#include <vector>

#include "core/base/unit_byte.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_models/test_images.h"

namespace invariant::image {
namespace {

using ::testing::StartsWith;
namespace ti = invariant::testing_images;

v1::ImageFrontEnd Spec(int height, int width, int channels) {
  v1::ImageFrontEnd spec;
  spec.set_height(height);
  spec.set_width(width);
  spec.set_channels(channels);
  return spec;
}

std::unique_ptr<const ImageFrontEnd> Make(const v1::ImageFrontEnd& spec) {
  auto fe = ImageFrontEnd::Create(spec);
  EXPECT_TRUE(fe.ok()) << fe.status();
  return *std::move(fe);
}

std::vector<float> Row(const ImageFrontEnd& fe, const std::string& file) {
  std::vector<float> row(static_cast<size_t>(fe.output_dim()));
  absl::Status s = fe.Apply(file, fe.max_pixels(), row.data(), "f");
  EXPECT_TRUE(s.ok()) << s;
  return row;
}

TEST(ImageFrontEndTest, ALosslessFileOfTheModelsSizeGivesItsBytesOver255) {
  // The row a CIFAR or IDX reader gives the same pixels: channels last, b · (1/255).
  const Pixels rgb = ti::Noise(32, 32, 3, 9);
  const std::vector<float> row = Row(*Make(Spec(32, 32, 3)), ti::EncodePng(rgb));
  for (size_t i = 0; i < row.size(); ++i) ASSERT_EQ(row[i], UnitByteToFloat(rgb.data[i])) << i;
  const Pixels grey = ti::Noise(28, 28, 1, 10);
  const std::vector<float> g = Row(*Make(Spec(28, 28, 1)), ti::EncodePng(grey));
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], UnitByteToFloat(grey.data[i])) << i;
}

TEST(ImageFrontEndTest, ColourBecomesGreyByPillowsLumaAndGreyBecomesColourByCopying) {
  Pixels rgb = Pixels::Zeros(2, 1, 3);
  rgb.data = {255, 0, 0, 10, 200, 90};
  const Pixels grey = ToChannels(rgb, 1, 0);
  EXPECT_EQ(grey.data[0], (255 * 19595 + 0x8000) >> 16);  // 76
  EXPECT_EQ(grey.data[1], (10 * 19595 + 200 * 38470 + 90 * 7471 + 0x8000) >> 16);
  Pixels g = Pixels::Zeros(1, 1, 1);
  g.data = {77};
  EXPECT_EQ(ToChannels(g, 3, 0).data, (std::vector<uint8_t>{77, 77, 77}));
}

TEST(ImageFrontEndTest, AlphaIsCompositedOnTheBackground) {
  Pixels rgba = Pixels::Zeros(3, 1, 4);
  rgba.data = {200, 100, 0, 255, 200, 100, 0, 0, 200, 100, 0, 128};
  const Pixels over = ToChannels(rgba, 3, 255);
  EXPECT_EQ(over.data, (std::vector<uint8_t>{200, 100, 0,    // opaque: itself
                                             255, 255, 255,  // transparent: the background
                                             // round((c·128 + 255·127) / 255)
                                             227, 177, 127}));
  Pixels ga = Pixels::Zeros(1, 1, 2);
  ga.data = {0, 64};
  EXPECT_EQ(ToChannels(ga, 1, 255).data, (std::vector<uint8_t>{191}));  // (0 + 255·191 + 127) / 255
}

TEST(ImageFrontEndTest, FitsGiveTheModelsSizeAndPadUsesTheBackground) {
  const std::string wide = ti::EncodePng(ti::Noise(60, 20, 3, 2));
  for (auto fit :
       {v1::ImageFrontEnd::FIT_CROP, v1::ImageFrontEnd::FIT_PAD, v1::ImageFrontEnd::FIT_STRETCH}) {
    v1::ImageFrontEnd spec = Spec(16, 16, 3);
    spec.set_fit(fit);
    spec.set_background(7);
    absl::StatusOr<Pixels> p = Make(spec)->Prepare(wide, 1 << 20, "f");
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->width, 16);
    EXPECT_EQ(p->height, 16);
    if (fit == v1::ImageFrontEnd::FIT_PAD) {
      // 60 × 20 in 16 × 16: 16 × round(20/60·16) = 16 × 5, at row round(11/2) = 6 (half to even).
      for (int r : {0, 5, 11, 15}) {
        for (int c = 0; c < 16 * 3; ++c) ASSERT_EQ(p->row(r)[c], 7) << r << "," << c;
      }
    }
  }
}

TEST(ImageFrontEndTest, OrientationIsAppliedUnlessIgnored) {
  // A 4-wide, 2-high JPEG of flat quadrants, rotated by EXIF 6 (90° clockwise).
  Pixels p = Pixels::Zeros(16, 8, 1);
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 16; ++c) p.row(r)[c] = c < 8 ? 20 : 230;
  }
  const std::string rotated = ti::WithExif(ti::EncodeJpeg(p, 100), ti::ExifOrientation(6));
  v1::ImageFrontEnd spec = Spec(16, 8, 1);
  spec.set_fit(v1::ImageFrontEnd::FIT_STRETCH);
  absl::StatusOr<Pixels> up = Make(spec)->Prepare(rotated, 1000, "f");
  ASSERT_TRUE(up.ok()) << up.status();
  // Upright: 8 wide, 16 high; the left half (dark) is now the top.
  EXPECT_NEAR(up->row(1)[4], 20, 4);
  EXPECT_NEAR(up->row(14)[4], 230, 4);
  spec.set_ignore_orientation(true);
  absl::StatusOr<Pixels> as_stored = Make(spec)->Prepare(rotated, 1000, "f");
  ASSERT_TRUE(as_stored.ok());
  // Stored 16 × 8 stretched to 8 × 16: dark on the left, at every height.
  EXPECT_NEAR(as_stored->row(1)[1], 20, 4);
  EXPECT_NEAR(as_stored->row(14)[1], 20, 4);
}

TEST(ImageFrontEndTest, TheRowDependsOnlyOnTheFile) {
  const std::string jpeg = ti::EncodeJpeg(ti::Noise(100, 75, 3, 4, 2), 90);
  const auto fe = Make(Spec(32, 32, 3));
  EXPECT_EQ(Row(*fe, jpeg), Row(*fe, jpeg));
  EXPECT_EQ(Row(*fe, jpeg), Row(*Make(Spec(32, 32, 3)), jpeg));
}

TEST(ImageFrontEndTest, ApplyRefusesMoreThanTheGivenPixels) {
  const auto fe = Make(Spec(8, 8, 1));
  std::vector<float> row(64);
  absl::Status s = fe->Apply(ti::EncodePng(ti::Noise(40, 30, 1, 1)), 1199, row.data(), "x");
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "x: the PNG declares 40 x 30 = 1200 pixels, above the limit of 1199 pixels");
}

TEST(ImageFrontEndTest, AnInconsistentSpecIsRefusedNamingTheField) {
  const auto refused = [](v1::ImageFrontEnd spec) {
    return std::string(ImageFrontEnd::Complete(spec).status().message());
  };
  EXPECT_EQ(refused(Spec(0, 8, 1)), "image.height: expected 1 to 65500, received 0");
  EXPECT_EQ(refused(Spec(8, 8, 4)), "image.channels: expected 1 (grey) or 3 (RGB), received 4");
  v1::ImageFrontEnd bg = Spec(8, 8, 3);
  bg.set_background(256);
  EXPECT_EQ(refused(bg), "image.background: expected a grey level in [0, 255], received 256");
  EXPECT_THAT(refused(Spec(4096, 4096, 3)),
              StartsWith("image: expected height · width · channels"));
  EXPECT_TRUE(ImageFrontEnd::Complete(Spec(224, 224, 3)).ok());
}

}  // namespace
}  // namespace invariant::image
