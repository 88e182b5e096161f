#include "train/data/data_config.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "core/io/idx.h"
#include "gtest/gtest.h"
#include "tests/unit/data/test_files.h"
#include "train/data/idx.h"
#include "train/data/rotated.h"
#include "train/data/xperm.h"

namespace invariant::train {
namespace {

TEST(DataConfigTest, XpermBagOfWords) {
  v1::DataConfig config;
  config.mutable_xperm()->set_seed(4);
  config.mutable_xperm()->set_bag_of_words(true);
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->test, nullptr);
  EXPECT_EQ(parts->train->schema().dim, 8);
  EXPECT_EQ(parts->train->schema().num_rows, kXpermSize);
}

TEST(DataConfigTest, CoulombDefaultsAndTorus) {
  v1::DataConfig config;
  config.mutable_coulomb()->set_num_molecules(5);
  auto coulomb = OpenDataConfig(config);
  ASSERT_TRUE(coulomb.ok()) << coulomb.status();
  EXPECT_EQ(coulomb->train->schema().dim, 23 * 23);
  config.mutable_torus()->set_num_points(7);
  config.mutable_torus()->set_dim(4);
  auto torus = OpenDataConfig(config);
  ASSERT_TRUE(torus.ok());
  EXPECT_EQ(torus->train->schema().dim, 4);
  EXPECT_EQ(torus->train->schema().num_targets, 1);
}

TEST(DataConfigTest, TsvDelimiterAndBadDelimiter) {
  const std::string path = WriteText("t.tsv", "a\tb\tlabel\n1\t2\tx\n");
  v1::DataConfig config;
  config.mutable_csv()->set_path(path);
  config.mutable_csv()->set_delimiter("\t");
  config.mutable_csv()->set_label_column("label");
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->train->schema().dim, 2);
  config.mutable_csv()->set_delimiter(";;");
  auto bad = OpenDataConfig(config);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("data.csv.delimiter"), std::string::npos);
}

TEST(DataConfigTest, RotatedFashionMnistHasBothParts) {
  v1::DataConfig config;
  config.mutable_fashion_mnist();
  config.mutable_rotated()->set_enabled(true);
  config.mutable_rotated()->set_seed(3);
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_NE(parts->test, nullptr);
  EXPECT_EQ(parts->train->schema().name, "fashion-mnist/train/rotated");
  EXPECT_EQ(parts->test->schema().num_rows, 10000);
  std::vector<float> x(784);
  int32_t label = -1;
  auto got = parts->test->Next(1, x.data(), &label, nullptr);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 1);
  EXPECT_GE(label, 0);
  EXPECT_LT(label, 10);
}

TEST(DataConfigTest, MissingSourceIsAnError) {
  auto parts = OpenDataConfig(v1::DataConfig());
  ASSERT_FALSE(parts.ok());
  EXPECT_NE(parts.status().message().find("data.source"), std::string::npos);
}

// A CSV of two 2 × 2 × 3 images with a label column; the header names the
// columns r0, g0, b0, r1, ... (channels last) or r0..r3, g0..g3, b0..b3.
std::string ColourCsv(const std::string& leaf, bool channels_last) {
  std::string text = "label";
  for (int k = 0; k < 12; ++k) {
    const int pixel = channels_last ? k / 3 : k % 4, ch = channels_last ? k % 3 : k / 4;
    absl::StrAppend(&text, ",", std::string(1, "rgb"[ch]), pixel);
  }
  for (int row = 0; row < 2; ++row) {
    absl::StrAppend(&text, "\n", row == 0 ? "cat" : "dog");
    for (int k = 0; k < 12; ++k) absl::StrAppend(&text, ",", 0.5 * k + row);
  }
  return WriteText(leaf, text + "\n");
}

v1::DataConfig CsvImageConfig(const std::string& path, int height, int width, int channels) {
  v1::DataConfig config;
  config.mutable_csv()->set_path(path);
  config.mutable_csv()->set_label_column("label");
  config.mutable_image()->set_height(height);
  config.mutable_image()->set_width(width);
  config.mutable_image()->set_channels(channels);
  return config;
}

TEST(DataConfigTest, CsvColourImagesInChannelsLastOrderRotate) {
  v1::DataConfig config = CsvImageConfig(ColourCsv("last.csv", true), 2, 2, 3);
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->train->schema().input_shape, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(parts->train->schema().column_names.front(), "r0");
  config.mutable_rotated()->set_enabled(true);
  auto rotated = OpenDataConfig(config);
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ(rotated->train->schema().input_shape, (std::vector<int64_t>{2, 2, 3}));
  std::vector<float> x(24);
  auto got = rotated->train->Next(2, x.data(), nullptr, nullptr);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 2);
  // Without data.image the CSV rows are flat and the rotated protocol says
  // which field to set.
  config.clear_image();
  auto flat = OpenDataConfig(config);
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.status().message().find("set data.image"), std::string::npos);
}

TEST(DataConfigTest, CsvColourImagesInChannelsFirstOrderAreRefused) {
  const std::string path = ColourCsv("first.csv", false);
  auto parts = OpenDataConfig(CsvImageConfig(path, 2, 2, 3));
  ASSERT_FALSE(parts.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(parts.status()));
  const std::string message(parts.status().message());
  EXPECT_NE(message.find(path + ": data.image.channels is 3"), std::string::npos) << message;
  EXPECT_NE(message.find("channels first"), std::string::npos) << message;
  EXPECT_NE(message.find("column 'r1'"), std::string::npos) << message;
  // The same file read as one channel of 2 × 6: nothing to check but the size.
  EXPECT_TRUE(OpenDataConfig(CsvImageConfig(path, 2, 6, 1)).ok());
}

TEST(DataConfigTest, ImageLayoutMustMatchTheColumnCountAndIdxDims) {
  auto parts = OpenDataConfig(CsvImageConfig(ColourCsv("count.csv", true), 2, 2, 4));
  ASSERT_FALSE(parts.ok());
  EXPECT_NE(parts.status().message().find("data.image is 2 x 2 x 4 = 16 values per row"),
            std::string::npos)
      << parts.status();
  EXPECT_NE(parts.status().message().find("rows of 12"), std::string::npos);
  parts = OpenDataConfig(CsvImageConfig(ColourCsv("zero.csv", true), 0, 2, 3));
  ASSERT_FALSE(parts.ok());
  EXPECT_NE(parts.status().message().find("data.image.height must be > 0"), std::string::npos);

  const std::string images = ScratchPath("colour.idx4");
  const std::string labels = ScratchPath("labels.idx1");
  ASSERT_TRUE(io::WriteIdx(images, {2, 4, 2, 3}, std::vector<uint8_t>(48, 9), false).ok());
  ASSERT_TRUE(WriteIdxLabels(labels, std::vector<uint8_t>{0, 1}, false).ok());
  v1::DataConfig config;
  config.mutable_idx()->set_train_images(images);
  config.mutable_idx()->set_train_labels(labels);
  config.mutable_idx()->set_test_images(images);
  config.mutable_idx()->set_test_labels(labels);
  config.mutable_image()->set_height(4);
  config.mutable_image()->set_width(2);
  config.mutable_image()->set_channels(3);
  parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->test->schema().input_shape, (std::vector<int64_t>{4, 2, 3}));
  config.mutable_image()->set_height(2);
  config.mutable_image()->set_width(4);
  parts = OpenDataConfig(config);
  ASSERT_FALSE(parts.ok());
  EXPECT_NE(parts.status().message().find("data.image.height is 2 but '" + images +
                                          "' has images of height 4 (4 x 2 x 3)"),
            std::string::npos)
      << parts.status();
  config.mutable_image()->set_height(4);
  config.mutable_image()->set_width(6);
  config.mutable_image()->set_channels(1);
  parts = OpenDataConfig(config);
  ASSERT_FALSE(parts.ok());
  EXPECT_NE(parts.status().message().find("data.image.width is 6"), std::string::npos)
      << parts.status();
}

}  // namespace
}  // namespace invariant::train
