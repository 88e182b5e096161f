#include "train/data/data_config.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/unit/data/test_files.h"
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

}  // namespace
}  // namespace invariant::train
