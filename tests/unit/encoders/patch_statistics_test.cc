#include "core/encoders/patch_statistics.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;

FloatMatrix Gaussian(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  FloatMatrix x = FloatMatrix::Zeros(rows, cols);
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data()[i] = static_cast<float>(rng.Normal());
  return x;
}

TEST(SamplePatchesTest, EverySampleIsARealPatch) {
  const PatchGeometry g = PatchGeometry::Square(7, 6, 2, 3, 2, 1);  // positions 3 × 2
  const FloatMatrix images = Gaussian(4, g.image_dim(), 1);
  Rng rng(2);
  auto sampled = SamplePatches(g, images, 200, false, 1e-3, rng);
  ASSERT_TRUE(sampled.ok()) << sampled.status();
  ASSERT_EQ(sampled->rows(), 200);
  ASSERT_EQ(sampled->cols(), g.patch_dim());
  // All patches of all images.
  std::vector<std::vector<float>> all;
  std::vector<float> buffer(static_cast<size_t>(g.num_positions() * g.patch_dim()));
  for (int64_t i = 0; i < images.rows(); ++i) {
    ExtractPatches(g, images.row(i), buffer.data());
    for (int64_t p = 0; p < g.num_positions(); ++p) {
      all.emplace_back(buffer.begin() + p * g.patch_dim(),
                       buffer.begin() + (p + 1) * g.patch_dim());
    }
  }
  std::vector<int> hits(all.size(), 0);
  for (int64_t q = 0; q < sampled->rows(); ++q) {
    const std::vector<float> row(sampled->row(q), sampled->row(q) + g.patch_dim());
    const auto it = std::find(all.begin(), all.end(), row);
    ASSERT_NE(it, all.end()) << "sample " << q << " is no patch";
    ++hits[static_cast<size_t>(it - all.begin())];
  }
  // 24 patches, 200 draws: every one is drawn.
  for (int h : hits) EXPECT_GT(h, 0);
  // Normalised samples: the same draws, each normalised.
  Rng again(2);
  auto normalised = SamplePatches(g, images, 200, true, 1e-3, again);
  ASSERT_TRUE(normalised.ok());
  std::vector<float> want(sampled->row(5), sampled->row(5) + g.patch_dim());
  NormalizePatch(g.patch_dim(), 1e-3, want.data());
  EXPECT_EQ(0, std::memcmp(want.data(), normalised->row(5), want.size() * sizeof(float)));
}

TEST(SamplePatchesTest, RejectsBadInput) {
  const PatchGeometry g = PatchGeometry::Square(8, 8, 1, 3, 1, 1);
  Rng rng(1);
  EXPECT_THAT(std::string(SamplePatches(g, FloatMatrix(), 10, false, 1e-3, rng).status().message()),
              HasSubstr("no images"));
  EXPECT_THAT(
      std::string(SamplePatches(g, Gaussian(2, 63, 1), 10, false, 1e-3, rng).status().message()),
      HasSubstr("needs 64"));
  EXPECT_THAT(
      std::string(SamplePatches(g, Gaussian(2, 64, 1), 0, false, 1e-3, rng).status().message()),
      HasSubstr("statistics_patches must be >= 1"));
  PatchGeometry bad = g;
  bad.patch_height = bad.patch_width = 9;
  const auto s = SamplePatches(bad, Gaussian(2, 64, 1), 10, false, 1e-3, rng).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("patch.patch_size"));
}

TEST(ZcaWhiteningTest, WhitenedPatchesHaveIdentityCovariance) {
  const int64_t n = 20000, d = 6;
  // Correlated data: x = A z + μ.
  Rng rng(3);
  Eigen::MatrixXd a(d, d);
  for (int64_t i = 0; i < d; ++i) {
    for (int64_t j = 0; j < d; ++j) a(i, j) = rng.Normal() + (i == j ? 2.0 : 0.0);
  }
  FloatMatrix x = FloatMatrix::Zeros(n, d);
  for (int64_t i = 0; i < n; ++i) {
    Eigen::VectorXd z(d);
    for (int64_t t = 0; t < d; ++t) z(t) = rng.Normal();
    const Eigen::VectorXd v = a * z;
    for (int64_t t = 0; t < d; ++t) x.mutable_row(i)[t] = static_cast<float>(v(t) + 3.0 * t);
  }
  auto w = ComputeZcaWhitening(x, 1e-6);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->mean.rows(), 1);
  ASSERT_EQ(w->matrix.rows(), d);
  for (int64_t t = 0; t < d; ++t) EXPECT_NEAR(w->mean.row(0)[t], 3.0 * t, 0.1);
  const Eigen::MatrixXd wm = w->matrix.map().cast<double>();
  EXPECT_EQ((wm - wm.transpose()).cwiseAbs().maxCoeff(), 0.0);
  Eigen::MatrixXd centred = x.map().cast<double>().rowwise() - w->mean.map().cast<double>().row(0);
  const Eigen::MatrixXd y = centred * wm;  // W symmetric: rows are W(x − μ)
  const Eigen::MatrixXd cov = y.transpose() * y / double(n - 1);
  EXPECT_LT((cov - Eigen::MatrixXd::Identity(d, d)).cwiseAbs().maxCoeff(), 1e-3);
  // A large ε shrinks every direction instead.
  auto damped = ComputeZcaWhitening(x, 1e3);
  ASSERT_TRUE(damped.ok());
  const Eigen::MatrixXd yd = centred * damped->matrix.map().cast<double>();
  EXPECT_LT((yd.transpose() * yd / double(n - 1)).diagonal().maxCoeff(), 0.9);
}

TEST(ZcaWhiteningTest, RejectsBadInput) {
  EXPECT_THAT(std::string(ComputeZcaWhitening(Gaussian(1, 4, 1), 0.1).status().message()),
              HasSubstr("at least 2 patches"));
  EXPECT_THAT(std::string(ComputeZcaWhitening(Gaussian(5, 4, 1), 0.0).status().message()),
              HasSubstr("whitening_epsilon must be finite and > 0"));
}

TEST(SphericalKMeansTest, RecoversPlantedDirections) {
  const int64_t d = 10, k = 4, per = 300;
  // Planted unit directions e_0, e_3, e_6, e_9; points ±(5 e_c + noise).
  Rng rng(4);
  FloatMatrix x = FloatMatrix::Zeros(k * per, d);
  for (int64_t i = 0; i < k * per; ++i) {
    const int64_t c = i % k;
    const double sign = rng.Uniform() < 0.5 ? -1.0 : 1.0;
    for (int64_t t = 0; t < d; ++t) {
      x.mutable_row(i)[t] =
          static_cast<float>(sign * ((t == 3 * c ? 5.0 : 0.0) + 0.5 * rng.Normal()));
    }
  }
  Rng seed(5);
  auto centres = SphericalKMeans(x, k, 10, seed);
  ASSERT_TRUE(centres.ok()) << centres.status();
  ASSERT_EQ(centres->rows(), k);
  std::vector<int> found(static_cast<size_t>(k), 0);
  for (int64_t c = 0; c < k; ++c) {
    double norm = 0.0;
    for (int64_t t = 0; t < d; ++t) norm += double(centres->row(c)[t]) * centres->row(c)[t];
    EXPECT_NEAR(norm, 1.0, 1e-5);
    for (int64_t p = 0; p < k; ++p) {
      if (std::abs(centres->row(c)[3 * p]) > 0.99) ++found[static_cast<size_t>(p)];
    }
  }
  for (int f : found) EXPECT_EQ(f, 1);
}

TEST(SphericalKMeansTest, SameCentresWhateverTheThreadCount) {
  const FloatMatrix x = Gaussian(700, 12, 6);
  ResetDefaultThreadPoolForTesting(1);
  Rng a(7);
  auto one = SphericalKMeans(x, 9, 5, a);
  ResetDefaultThreadPoolForTesting(3);
  Rng b(7);
  auto three = SphericalKMeans(x, 9, 5, b);
  ResetDefaultThreadPoolForTesting(2);
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(0, std::memcmp(one->data(), three->data(), one->bytes()));
}

TEST(SphericalKMeansTest, RejectsBadInput) {
  Rng rng(1);
  EXPECT_THAT(std::string(SphericalKMeans(Gaussian(5, 3, 1), 0, 1, rng).status().message()),
              HasSubstr("k must be >= 1"));
  EXPECT_THAT(std::string(SphericalKMeans(Gaussian(5, 3, 1), 6, 1, rng).status().message()),
              HasSubstr("at least k = 6 points"));
  EXPECT_THAT(std::string(SphericalKMeans(Gaussian(5, 3, 1), 2, -1, rng).status().message()),
              HasSubstr("kmeans_iterations must be >= 0"));
  auto zero_iterations = SphericalKMeans(Gaussian(5, 3, 1), 5, 0, rng);
  ASSERT_TRUE(zero_iterations.ok());
  EXPECT_EQ(zero_iterations->rows(), 5);
}

}  // namespace
}  // namespace invariant
