#include "core/base/tensor.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(Array2DTest, ZerosIsAlignedAndWritable) {
  FloatMatrix m = FloatMatrix::Zeros(3, 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % 64, 0u);
  ASSERT_NE(m.mutable_data(), nullptr);
  m.mutable_row(2)[4] = 7.0f;
  EXPECT_EQ(m.map()(2, 4), 7.0f);
  EXPECT_EQ(m.map().sum(), 7.0f);
}

TEST(Array2DTest, ViewKeepsOwnerAliveAndIsReadOnly) {
  auto storage = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  FloatMatrix v = FloatMatrix::View(storage->data(), 2, 2, storage);
  std::weak_ptr<std::vector<float>> weak = storage;
  storage.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(v.row(1)[0], 3.0f);
  EXPECT_EQ(v.mutable_data(), nullptr);
}

TEST(Array2DTest, FromEigenCopiesValues) {
  Eigen::MatrixXd d(2, 2);
  d << 1, 2, 3, 4;
  DoubleMatrix m = DoubleMatrix::FromEigen(d);
  EXPECT_EQ(m.row(0)[1], 2.0);
  EXPECT_EQ(m.row(1)[0], 3.0);
}

TEST(TensorTest, SharedStorageIsReadOnlyForEveryCopy) {
  FloatMatrix a = FloatMatrix::Zeros(2, 3);
  ASSERT_NE(a.mutable_data(), nullptr);
  a.mutable_data()[0] = 1.5f;
  {
    const FloatMatrix b = a;  // shares a's storage
    EXPECT_EQ(a.mutable_data(), nullptr);
    FloatMatrix c = b;
    EXPECT_EQ(c.mutable_data(), nullptr);
    EXPECT_EQ(c.data()[0], 1.5f);
    EXPECT_EQ(c.data(), a.data());
  }
  EXPECT_NE(a.mutable_data(), nullptr);  // sole owner again
  const float x = 2.0f;
  FloatMatrix view = FloatMatrix::View(&x, 1, 1, nullptr);
  EXPECT_EQ(view.mutable_data(), nullptr);
}

}  // namespace
}  // namespace invariant
