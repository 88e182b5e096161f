#include "train/data/rotated.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <vector>

#include "core/base/random.h"
#include "gtest/gtest.h"
#include "train/data/fashion_mnist.h"

namespace invariant::train {
namespace {

constexpr double kPi = 3.14159265358979323846;

// n images of 16 × 16: a random Gaussian blob inside the inscribed disc,
// labelled by which quadrant its centre lies in.
Dataset BlobImages(int64_t n, uint64_t seed, const std::string& name) {
  Dataset data;
  data.name = name;
  data.input_shape = {16, 16};
  data.class_names = {"q0", "q1", "q2", "q3"};
  data.x = FloatMatrix::Zeros(n, 256);
  data.labels.resize(n);
  Rng rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    const double cx = rng.Uniform(5.5, 9.5), cy = rng.Uniform(5.5, 9.5);
    const double sigma = rng.Uniform(1.0, 2.0);
    for (int r = 0; r < 16; ++r) {
      for (int c = 0; c < 16; ++c) {
        const double d2 = (c - cx) * (c - cx) + (r - cy) * (r - cy);
        data.x.mutable_row(i)[r * 16 + c] = static_cast<float>(std::exp(-d2 / (2 * sigma * sigma)));
      }
    }
    data.labels[i] = (cx > 7.5 ? 1 : 0) + (cy > 7.5 ? 2 : 0);
  }
  return data;
}

double Mass(const float* x, int64_t d) {
  double m = 0.0;
  for (int64_t k = 0; k < d; ++k) m += x[k];
  return m;
}

TEST(RotatedTest, EachImageIsRotatedByItsSampledAngleAndKeepsItsLabel) {
  const Dataset images = BlobImages(64, 1, "blobs");
  std::vector<double> angles;
  auto rotated = RotateEachImage(images, /*seed=*/17, &angles);
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  ASSERT_EQ(rotated->rows(), 64);
  EXPECT_EQ(rotated->labels, images.labels);
  EXPECT_EQ(rotated->input_shape, images.input_shape);
  ASSERT_EQ(angles.size(), 64u);
  std::vector<float> expected(256);
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_GE(angles[i], 0.0);
    EXPECT_LT(angles[i], 2 * kPi);
    EXPECT_EQ(angles[i], RotationAngle(17, i));
    RotateImages(16, 16, angles[i], 1, images.x.row(i), expected.data());
    EXPECT_EQ(std::memcmp(expected.data(), rotated->x.row(i), sizeof(float) * 256), 0);
    // Content inside the inscribed disc keeps its mass up to interpolation.
    const double before = Mass(images.x.row(i), 256);
    const double after = Mass(rotated->x.row(i), 256);
    EXPECT_NEAR(after, before, 0.03 * before) << "image " << i << " angle " << angles[i];
  }
}

TEST(RotatedTest, FashionMnistKeepsLabelsAndMostOfItsMass) {
  // Real images reach the frame, so corners rotated out lose some mass: on
  // the full 12k/50k protocol the mean relative change is 1.2 % (worst 22 %).
  auto test = LoadFashionMnist(FashionMnistPart::kTest);
  ASSERT_TRUE(test.ok()) << test.status();
  std::vector<int64_t> first(2000);
  std::iota(first.begin(), first.end(), 0);
  auto images = SelectRows(*test, first);
  ASSERT_TRUE(images.ok());
  std::vector<double> angles;
  auto rotated = RotateEachImage(*images, /*seed=*/6, &angles);
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ(rotated->labels, images->labels);
  EXPECT_EQ(rotated->class_names, FashionMnistClassNames());
  double mean_change = 0.0;
  for (int64_t i = 0; i < images->rows(); ++i) {
    const double before = Mass(images->x.row(i), 784);
    mean_change += std::abs(Mass(rotated->x.row(i), 784) - before) / before;
  }
  mean_change /= static_cast<double>(images->rows());
  EXPECT_LT(mean_change, 0.03);
  EXPECT_GT(mean_change, 0.0);  // the images really were rotated
}

TEST(RotatedTest, AnglesCoverTheCircle) {
  int bins[8] = {0};
  for (int64_t i = 0; i < 8000; ++i) ++bins[static_cast<int>(RotationAngle(3, i) / (2 * kPi) * 8)];
  for (int b : bins) EXPECT_NEAR(b, 1000, 150);
}

TEST(RotatedTest, RotatingBackRecoversTheImage) {
  const Dataset images = BlobImages(8, 2, "blobs");
  std::vector<double> angles;
  auto rotated = RotateEachImage(images, 5, &angles);
  ASSERT_TRUE(rotated.ok());
  std::vector<float> back(256);
  for (int64_t i = 0; i < 8; ++i) {
    RotateImages(16, 16, -angles[i], 1, rotated->x.row(i), back.data());
    double err = 0.0, norm = 0.0;
    for (int k = 0; k < 256; ++k) {
      err += std::pow(back[k] - images.x.row(i)[k], 2);
      norm += std::pow(images.x.row(i)[k], 2);
    }
    EXPECT_LT(std::sqrt(err / norm), 0.15) << "image " << i;
  }
  // A quarter turn of a square image moves pixels exactly.
  std::vector<float> quarter(256);
  RotateImages(16, 16, kPi / 2, 1, images.x.row(0), quarter.data());
  EXPECT_NEAR(Mass(quarter.data(), 256), Mass(images.x.row(0), 256), 1e-3);
}

TEST(RotatedTest, ProtocolDrawsTestFromTheUnusedTrainRowsAndTheTestPart) {
  const Dataset train = BlobImages(100, 4, "src/train");
  const Dataset test = BlobImages(30, 5, "src/test");
  RotatedOptions options;
  options.seed = 8;
  options.num_train = 40;
  options.num_test = 80;
  auto split = MakeRotatedProtocol(train, test, options);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->train.rows(), 40);
  ASSERT_EQ(split->test.rows(), 80);
  ASSERT_EQ(split->train_angles.size(), 40u);
  ASSERT_EQ(split->test_angles.size(), 80u);
  std::set<int64_t> train_rows(split->train_rows.begin(), split->train_rows.end());
  ASSERT_EQ(train_rows.size(), 40u);
  ASSERT_EQ(split->pool_train_rows.size(), 60u);
  for (int64_t r : split->pool_train_rows) EXPECT_EQ(train_rows.count(r), 0u);
  // Labels follow their source rows; test rows come from the pool without repeats.
  for (int64_t k = 0; k < 40; ++k) {
    EXPECT_EQ(split->train.labels[k], train.labels[split->train_rows[k]]);
  }
  std::set<int64_t> pool_rows(split->test_pool_rows.begin(), split->test_pool_rows.end());
  EXPECT_EQ(pool_rows.size(), 80u);
  std::vector<float> expected(256);
  for (int64_t k = 0; k < 80; ++k) {
    const int64_t p = split->test_pool_rows[k];
    ASSERT_LT(p, 90);
    const Dataset& from = p < 60 ? train : test;
    const int64_t row = p < 60 ? split->pool_train_rows[p] : p - 60;
    EXPECT_EQ(split->test.labels[k], from.labels[row]);
    RotateImages(16, 16, split->test_angles[k], 1, from.x.row(row), expected.data());
    EXPECT_EQ(std::memcmp(expected.data(), split->test.x.row(k), sizeof(float) * 256), 0);
  }
  // Seeded: the same options give the same split.
  auto again = MakeRotatedProtocol(train, test, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->test_pool_rows, split->test_pool_rows);
  EXPECT_EQ(again->train_angles, split->train_angles);
}

TEST(RotatedTest, ProtocolRejectsTooLargeCountsAndFlatRows) {
  const Dataset train = BlobImages(20, 4, "src/train");
  const Dataset test = BlobImages(5, 5, "src/test");
  RotatedOptions options;
  options.num_train = 10;
  options.num_test = 16;  // pool is 10 + 5
  auto split = MakeRotatedProtocol(train, test, options);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("num_test 16 not in [0, 15]"), std::string::npos);
  options.num_test = kRest;
  auto rest = MakeRotatedProtocol(train, test, options);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->test.rows(), 15);

  Dataset flat = train;
  flat.input_shape = {256};
  EXPECT_FALSE(RotateEachImage(flat, 1).ok());
}

// The blob images as colour images 16 × 16 × 3, channels last: channel ch
// is the blob times (1 + ch) plus, in channel 2 only, a second blob, so the
// channels differ.
Dataset ColourBlobImages(int64_t n, uint64_t seed) {
  const Dataset grey = BlobImages(n, seed, "colour-blobs");
  const Dataset other = BlobImages(n, seed + 100, "other");
  Dataset data = grey;
  data.input_shape = {16, 16, 3};
  data.x = FloatMatrix::Zeros(n, 16 * 16 * 3);
  for (int64_t i = 0; i < n; ++i) {
    for (int p = 0; p < 256; ++p) {
      for (int ch = 0; ch < 3; ++ch) {
        data.x.mutable_row(i)[p * 3 + ch] =
            (1.0f + ch) * grey.x.row(i)[p] + (ch == 2 ? other.x.row(i)[p] : 0.0f);
      }
    }
  }
  return data;
}

// Channel `ch` of a 16 × 16 × 3 channels-last image.
std::vector<float> Channel(const float* image, int ch) {
  std::vector<float> out(256);
  for (int p = 0; p < 256; ++p) out[p] = image[p * 3 + ch];
  return out;
}

TEST(RotatedTest, ColourImagesRotateEveryChannelByTheSameAngle) {
  const Dataset images = ColourBlobImages(24, 6);
  std::vector<double> angles;
  auto rotated = RotateEachImage(images, /*seed=*/29, &angles);
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ(rotated->input_shape, (std::vector<int64_t>{16, 16, 3}));
  EXPECT_EQ(rotated->labels, images.labels);
  std::vector<float> expected(256);
  for (int64_t i = 0; i < 24; ++i) {
    EXPECT_EQ(angles[i], RotationAngle(29, i));
    for (int ch = 0; ch < 3; ++ch) {
      // Each channel is the single-channel rotation of that channel by the
      // image's one angle.
      const std::vector<float> in = Channel(images.x.row(i), ch);
      RotateImages(16, 16, angles[i], 1, in.data(), expected.data());
      const std::vector<float> got = Channel(rotated->x.row(i), ch);
      for (int p = 0; p < 256; ++p) {
        ASSERT_NEAR(got[p], expected[p], 1e-6f)
            << "image " << i << " channel " << ch << " px " << p;
      }
    }
  }
}

TEST(RotatedTest, QuarterTurnMovesPixelOfEveryChannelToTheSamePlace) {
  // One lit pixel (r, c) = (2, 5) with a different value in each channel of
  // a 8 × 8 × 3 image; a quarter turn is exact on square images.
  std::vector<float> image(8 * 8 * 3, 0.0f), out(8 * 8 * 3, -1.0f);
  for (int ch = 0; ch < 3; ++ch) image[(2 * 8 + 5) * 3 + ch] = 0.25f * (ch + 1);
  RotateImages(8, 8, 3, kPi / 2, 1, image.data(), out.data());
  std::vector<float> grey(64, 0.0f), grey_out(64);
  grey[2 * 8 + 5] = 1.0f;
  RotateImages(8, 8, kPi / 2, 1, grey.data(), grey_out.data());
  int lit = -1;
  for (int p = 0; p < 64; ++p) {
    if (grey_out[p] == 1.0f) lit = p;
  }
  ASSERT_GE(lit, 0);
  EXPECT_NE(lit, 2 * 8 + 5);
  for (int p = 0; p < 64; ++p) {
    for (int ch = 0; ch < 3; ++ch) {
      EXPECT_EQ(out[p * 3 + ch], p == lit ? 0.25f * (ch + 1) : 0.0f) << p << " " << ch;
    }
  }
}

TEST(RotatedTest, ColourProtocolAndStreamingSourceKeepTheShape) {
  const Dataset train = ColourBlobImages(20, 8);
  const Dataset test = ColourBlobImages(6, 9);
  RotatedOptions options;
  options.num_train = 12;
  options.num_test = kRest;
  auto split = MakeRotatedProtocol(train, test, options);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->train.input_shape, (std::vector<int64_t>{16, 16, 3}));
  EXPECT_EQ(split->test.rows(), 14);
  auto source = MakeRotatedSource(MakeDatasetSource(train), 5);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->schema().input_shape, (std::vector<int64_t>{16, 16, 3}));
  // A shape whose product is not the row size is refused, naming the source.
  Dataset wrong = train;
  wrong.input_shape = {16, 16, 2};
  auto refused = MakeRotatedSource(MakeDatasetSource(wrong), 5);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("colour-blobs"), std::string::npos);
  EXPECT_NE(refused.status().message().find("[16, 16, 2]"), std::string::npos);
}

}  // namespace
}  // namespace invariant::train
