#include "train/data/image_layout.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;

const ImageShape k2x2x3{2, 2, 3};

// Channel-word names for a 2 × 2 × 3 image, channels last or first.
std::vector<std::string> WordNames(bool channels_last, const std::string& words = "rgb",
                                   int base = 0) {
  std::vector<std::string> names;
  for (int k = 0; k < 12; ++k) {
    const int pixel = channels_last ? k / 3 : k % 4;
    const int ch = channels_last ? k % 3 : k / 4;
    names.push_back(absl::StrCat(std::string(1, words[ch]), pixel + base));
  }
  return names;
}

// pixel_<a>_<b>_<c> names for a 2 × 2 × 3 image: (row, col, ch) of
// channels-last position k, or (ch, row, col) of channels-first position k.
std::vector<std::string> TripleNames(bool channels_last) {
  std::vector<std::string> names;
  for (int k = 0; k < 12; ++k) {
    if (channels_last) {
      names.push_back(absl::StrCat("pixel_", k / 6, "_", (k / 3) % 2, "_", k % 3));
    } else {
      names.push_back(absl::StrCat("pixel_", k / 4, "_", (k / 2) % 2, "_", k % 2));
    }
  }
  return names;
}

TEST(ImageLayoutTest, ChannelsLastHeadersAreAccepted) {
  EXPECT_TRUE(CheckChannelsLastColumns(WordNames(true), k2x2x3, "data.image", "f.csv").ok());
  // Any fixed channel order, from 0 or 1, any case and separator.
  EXPECT_TRUE(CheckChannelsLastColumns(WordNames(true, "bgr"), k2x2x3, "data.image", "f").ok());
  EXPECT_TRUE(CheckChannelsLastColumns(WordNames(true, "RGB", 1), k2x2x3, "data.image", "f").ok());
  std::vector<std::string> long_names;
  for (int k = 0; k < 12; ++k) {
    const char* words[] = {"red", "green", "blue"};
    long_names.push_back(absl::StrCat(words[k % 3], "_", k / 3));
  }
  EXPECT_TRUE(CheckChannelsLastColumns(long_names, k2x2x3, "data.image", "f").ok());
  EXPECT_TRUE(CheckChannelsLastColumns(TripleNames(true), k2x2x3, "data.image", "f").ok());
  // (channel, row, col) spelling of the channels-last order.
  std::vector<std::string> crc;
  for (int k = 0; k < 12; ++k)
    crc.push_back(absl::StrCat("x-", k % 3, "-", k / 6, "-", (k / 3) % 2));
  EXPECT_TRUE(CheckChannelsLastColumns(crc, k2x2x3, "data.image", "f").ok());
}

TEST(ImageLayoutTest, UninformativeNamesAreAssumedChannelsLast) {
  std::vector<std::string> names;
  for (int k = 0; k < 12; ++k) names.push_back(absl::StrCat("pixel", k));
  EXPECT_TRUE(CheckChannelsLastColumns(names, k2x2x3, "data.image", "f").ok());
  names[0] = "r0";  // a mix of forms says nothing either
  EXPECT_TRUE(CheckChannelsLastColumns(names, k2x2x3, "data.image", "f").ok());
}

TEST(ImageLayoutTest, ChannelsFirstChannelWordsAreRefusedNamingTheColumn) {
  const absl::Status s = CheckChannelsLastColumns(WordNames(false), k2x2x3, "data.image", "f.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("f.csv: data.image.channels is 3"));
  EXPECT_THAT(s.message(), HasSubstr("channels first")) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("column 'r1' (input 1) is channel r of pixel 1"));
  EXPECT_THAT(s.message(), HasSubstr("channels last has channel g of pixel 0 there"));
  EXPECT_THAT(s.message(), HasSubstr("r0, g0, b0, r1"));
  EXPECT_THAT(s.message(), HasSubstr("transpose(0, 2, 3, 1)"));
}

TEST(ImageLayoutTest, ChannelsFirstTriplesAreRefusedNamingTheColumn) {
  const absl::Status s =
      CheckChannelsLastColumns(TripleNames(false), k2x2x3, "data.image", "f.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("channels first")) << s.message();
  // pixel_0_0_1 at input 1 also reads as channels last; input 2 does not.
  EXPECT_THAT(s.message(), HasSubstr("column 'pixel_0_1_0' (input 2)"));
  EXPECT_THAT(s.message(), HasSubstr("(row, col, channel) = (0, 0, 2)"));
}

TEST(ImageLayoutTest, NamesInNeitherOrderAreRefused) {
  std::vector<std::string> names = WordNames(true);
  std::swap(names[4], names[7]);  // g1 and g2 swapped
  absl::Status s = CheckChannelsLastColumns(names, k2x2x3, "data.image", "f.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("not channels last"));
  EXPECT_THAT(s.message(), HasSubstr("column 'g2' (input 4)"));
  names = TripleNames(true);
  names[5] = "pixel_9_9_9";
  s = CheckChannelsLastColumns(names, k2x2x3, "data.image", "f.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("not in channels-last order"));
  EXPECT_THAT(s.message(), HasSubstr("'pixel_9_9_9' (input 5)"));
}

TEST(ImageLayoutTest, SizeAndShapeMismatchesNameTheField) {
  RowSchema schema;
  schema.name = "x.idx";
  schema.dim = 12;
  schema.input_shape = {2, 2, 3};
  EXPECT_TRUE(CheckImageLayout(schema, k2x2x3, "data.image").ok());
  absl::Status s = CheckImageLayout(schema, ImageShape{2, 2, 3 * 1}, "data.image");
  EXPECT_TRUE(s.ok());
  s = CheckImageLayout(schema, ImageShape{2, 6, 1}, "data.image");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("data.image.width is 6 but 'x.idx' has images of width 2"));
  s = CheckImageLayout(schema, ImageShape{1, 4, 3}, "data.image");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("data.image.height is 1"));
  s = CheckImageLayout(schema, ImageShape{2, 2, 2}, "data.image");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("data.image is 2 x 2 x 2 = 8 values per row but 'x.idx' has "
                                     "rows of 12"));
  schema.input_shape = {2, 2};  // a grey IDX file
  s = CheckImageLayout(schema, ImageShape{2, 2, 3}, "data.image");
  ASSERT_FALSE(s.ok());
  schema.dim = 4;
  s = CheckImageLayout(schema, ImageShape{2, 2, 1}, "data.image");
  EXPECT_TRUE(s.ok()) << s;

  v1::ImageLayout layout;
  layout.set_width(3);
  auto shape = ImageShapeFromConfig(layout, "data.image");
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(), HasSubstr("data.image.height must be > 0, got 0"));
  layout.set_height(2);
  shape = ImageShapeFromConfig(layout, "data.image");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->channels, 1);  // 0 means 1
}

}  // namespace
}  // namespace invariant::train
