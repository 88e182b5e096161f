#include "train/data/fashion_mnist.h"

#include <numeric>

#include "gtest/gtest.h"

namespace invariant::train {
namespace {

// The Debian package dataset-fashion-mnist is a build dependency
// (deploy/install-deps.sh), so these tests assert, never skip.
TEST(FashionMnistTest, TrainPartHas60000ImagesOf784) {
  auto data = LoadFashionMnist(FashionMnistPart::kTrain);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->rows(), 60000);
  EXPECT_EQ(data->dim(), 784);
  EXPECT_EQ(data->input_shape, (std::vector<int64_t>{28, 28}));
  EXPECT_EQ(data->class_names, FashionMnistClassNames());
  EXPECT_TRUE(ValidateDataset(*data).ok());
  // Fashion-MNIST is balanced: 6,000 per class.
  for (int64_t count : ClassCounts(*data)) EXPECT_EQ(count, 6000);
  float lo = 1.0f, hi = 0.0f;
  for (int64_t i = 0; i < data->x.size(); ++i) {
    lo = std::min(lo, data->x.data()[i]);
    hi = std::max(hi, data->x.data()[i]);
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
}

TEST(FashionMnistTest, TestPartHas10000ImagesOf784) {
  auto data = LoadFashionMnist(FashionMnistPart::kTest);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->rows(), 10000);
  EXPECT_EQ(data->dim(), 784);
  EXPECT_EQ(data->name, "fashion-mnist/test");
  for (int64_t count : ClassCounts(*data)) EXPECT_EQ(count, 1000);
}

TEST(FashionMnistTest, TenClassNames) {
  ASSERT_EQ(FashionMnistClassNames().size(), 10u);
  EXPECT_EQ(FashionMnistClassNames()[0], "T-shirt/top");
  EXPECT_EQ(FashionMnistClassNames()[9], "Ankle boot");
}

TEST(FashionMnistTest, MissingDirectoryExplainsThePackage) {
  auto source = OpenFashionMnist(FashionMnistPart::kTest, "/nonexistent-fashion-dir");
  ASSERT_FALSE(source.ok());
  EXPECT_TRUE(absl::IsNotFound(source.status()));
  EXPECT_NE(source.status().message().find("dataset-fashion-mnist"), std::string::npos);
}

}  // namespace
}  // namespace invariant::train
