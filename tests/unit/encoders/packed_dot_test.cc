// PackedDot: bit-identical to a plain fma loop on every kernel path, for
// every tail of rows, columns and panels, column windows and thread counts.
#include "core/encoders/packed_dot.h"

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <vector>

#include "core/base/bf16.h"
#include "core/base/kernel_path.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

FloatMatrix Gaussian(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  FloatMatrix m = FloatMatrix::Zeros(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.mutable_data()[i] = static_cast<float>(rng.Normal());
  return m;
}

// The stated order: acc = fma(x[i][k], b[c][k], acc) for k ascending from 0.
std::vector<float> NaiveDot(const FloatMatrix& x, const FloatMatrix& b) {
  std::vector<float> p(static_cast<size_t>(x.rows() * b.rows()));
  for (int64_t i = 0; i < x.rows(); ++i) {
    for (int64_t c = 0; c < b.rows(); ++c) {
      float acc = 0.0f;
      for (int64_t k = 0; k < x.cols(); ++k) acc = std::fma(x.row(i)[k], b.row(c)[k], acc);
      p[static_cast<size_t>(i * b.rows() + c)] = acc;
    }
  }
  return p;
}

// Restores the best path after each test.
class PackedDotTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok());
    ResetDefaultThreadPoolForTesting(2);
  }
};

TEST_F(PackedDotTest, ReportsPathsAndRejectsUnsupported) {
  const std::vector<KernelPath> paths = SupportedKernelPaths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), KernelPath::kScalar);
  std::cout << "kernel paths on this CPU:";
  for (KernelPath p : paths) std::cout << " " << KernelPathName(p);
  std::cout << "\n";
  for (KernelPath p : {KernelPath::kAvx512, KernelPath::kAvx2, KernelPath::kScalar}) {
    const absl::Status s = SetKernelPath(p);
    EXPECT_EQ(s.ok(), KernelPathSupported(p)) << KernelPathName(p) << ": " << s;
    if (s.ok()) {
      EXPECT_EQ(ActiveKernelPath(), p);
    }
  }
}

TEST_F(PackedDotTest, PackingPadsTheLastPanelWithZeros) {
  const FloatMatrix b = Gaussian(17, 5, 1);
  const PackedBank packed = PackedBank::Pack(b);
  EXPECT_EQ(packed.cols(), 17);
  EXPECT_EQ(packed.dim(), 5);
  ASSERT_EQ(packed.num_panels(), 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.panel(1)) % 64, 0u);
  for (int64_t k = 0; k < 5; ++k) {
    EXPECT_EQ(packed.panel(0)[k * 16 + 3], b.row(3)[k]);
    EXPECT_EQ(packed.panel(1)[k * 16 + 0], b.row(16)[k]);
    for (int64_t c = 1; c < 16; ++c) EXPECT_EQ(packed.panel(1)[k * 16 + c], 0.0f);
  }
}

TEST_F(PackedDotTest, EveryPathEqualsTheNaiveLoopBitForBit) {
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int64_t d : {1, 7, 64, 97}) {
      for (int64_t cols : {1, 15, 16, 17, 33, 50}) {
        const FloatMatrix b = Gaussian(cols, d, 100 + d * 7 + cols);
        const PackedBank packed = PackedBank::Pack(b);
        const FloatMatrix x = Gaussian(200, d, 200 + d);
        const std::vector<float> want = NaiveDot(x, b);
        for (int64_t n : {1, 2, 3, 5, 6, 7, 8, 9, 13, 17, 96, 97, 200}) {
          std::vector<float> got(static_cast<size_t>(n * cols), -1.0f);
          PackedDot(packed, n, x.data(), got.data(), cols);
          ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
              << KernelPathName(path) << " d " << d << " cols " << cols << " n " << n;
        }
      }
    }
  }
}

TEST_F(PackedDotTest, ColumnWindowsAndRowStridesGiveTheSameBits) {
  const int64_t d = 40, cols = 70;
  const FloatMatrix b = Gaussian(cols, d, 3);
  const PackedBank packed = PackedBank::Pack(b);
  const FloatMatrix x = Gaussian(11, d, 4);
  const std::vector<float> want = NaiveDot(x, b);
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int64_t c0 : {0, 1, 15, 16, 31}) {
      for (int64_t c1 : {c0 + 1, c0 + 16, c0 + 20, cols}) {
        const int64_t w = c1 - c0;
        std::vector<float> got(static_cast<size_t>(11 * (w + 3)), -1.0f);
        PackedDot(packed, 11, x.data(), d, c0, c1, got.data(), w + 3);
        for (int64_t i = 0; i < 11; ++i) {
          for (int64_t c = c0; c < c1; ++c) {
            ASSERT_EQ(got[static_cast<size_t>(i * (w + 3) + c - c0)],
                      want[static_cast<size_t>(i * cols + c)])
                << KernelPathName(path) << " window " << c0 << ".." << c1;
          }
          for (int64_t pad = 0; pad < 3; ++pad) {
            ASSERT_EQ(got[static_cast<size_t>(i * (w + 3) + w + pad)], -1.0f) << "wrote past c1";
          }
        }
      }
    }
  }
}

TEST_F(PackedDotTest, ParallelSplitGivesTheSameBitsForAnyThreadCount) {
  const int64_t d = 33, cols = 1000, n = 130;
  const FloatMatrix b = Gaussian(cols, d, 5);
  const PackedBank packed = PackedBank::Pack(b);
  const FloatMatrix x = Gaussian(n, d, 6);
  const std::vector<float> want = NaiveDot(x, b);
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int threads = 1; threads <= 8; ++threads) {
      ResetDefaultThreadPoolForTesting(threads);
      for (int64_t rows : {1, 64, 130}) {
        std::vector<float> got(static_cast<size_t>(rows * cols));
        ParallelPackedDot(packed, rows, x.data(), got.data(), cols);
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
            << KernelPathName(path) << " threads " << threads << " rows " << rows;
      }
    }
  }
}

}  // namespace
}  // namespace invariant

namespace invariant {
namespace {

FloatMatrix RoundedToBf16(const FloatMatrix& b) {
  FloatMatrix r = FloatMatrix::Zeros(b.rows(), b.cols());
  for (int64_t i = 0; i < b.size(); ++i) r.mutable_data()[i] = Bf16Value(FloatToBf16(b.data()[i]));
  return r;
}

TEST(Bf16Test, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(Bf16Value(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(FloatToBf16(1.0f + 1.0f / 256), 0x3f80);
  // 1 + 3·2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even.
  EXPECT_EQ(FloatToBf16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(Bf16Value(FloatToBf16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(Bf16Value(FloatToBf16(std::numeric_limits<float>::infinity()))));
  EXPECT_STREQ(BankDtypeName(BankDtype::kBfloat16), "bf16");
}

// A bf16 bank gives, on every path, exactly the float result of the bank
// rounded to bf16 (the widening is exact, the fma order unchanged); the
// scalar path needs no bf16 instructions.
TEST(Bf16Test, EveryPathEqualsTheNaiveLoopOnTheRoundedBank) {
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int64_t cols : {1, 17, 50}) {
      const FloatMatrix b = Gaussian(cols, 37, 300 + cols);
      const PackedBank packed = PackedBank::Pack(b, BankDtype::kBfloat16);
      EXPECT_EQ(packed.dtype(), BankDtype::kBfloat16);
      EXPECT_EQ(packed.bytes(), static_cast<size_t>(packed.num_panels() * 37 * 16 * 2));
      const FloatMatrix x = Gaussian(23, 37, 400 + cols);
      const std::vector<float> want = NaiveDot(x, RoundedToBf16(b));
      for (int64_t n : {1, 7, 9, 23}) {
        std::vector<float> got(static_cast<size_t>(n * cols));
        PackedDot(packed, n, x.data(), got.data(), cols);
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
            << KernelPathName(path) << " cols " << cols << " n " << n;
      }
    }
  }
  ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok());
}

}  // namespace
}  // namespace invariant
