#include "core/groups/image_transform.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/groups/group_test_util.h"

namespace invariant {
namespace {

using testing_util::Act;
using testing_util::Dot;

constexpr double kPi = 3.14159265358979323846;
constexpr int64_t kSide = 32;

// A smooth image that is ~0 near the border: a Gaussian blob of width
// `sigma` px centred at (cx, cy) + the image centre, channel k scaled by k + 1.
std::vector<float> Blob(int64_t channels, double sigma, double dx = 0.0, double dy = 0.0) {
  std::vector<float> img(static_cast<size_t>(kSide * kSide * channels));
  const double c = 0.5 * (kSide - 1);
  for (int64_t row = 0; row < kSide; ++row) {
    for (int64_t col = 0; col < kSide; ++col) {
      const double x = col - c - dx, y = row - c - dy;
      const double v = std::exp(-(x * x + y * y) / (2 * sigma * sigma));
      for (int64_t ch = 0; ch < channels; ++ch) {
        img[(row * kSide + col) * channels + ch] = static_cast<float>(v * (ch + 1));
      }
    }
  }
  return img;
}

double Norm(const std::vector<float>& v) {
  return std::sqrt(Dot(v.data(), v.data(), static_cast<int64_t>(v.size())));
}

// ‖a − b‖ / ‖b‖.
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s) / Norm(b);
}

// The point map of an element as documented in image_transform.h.
void MapPoint(const GroupElement& g, double ux, double uy, double& vx, double& vy) {
  const double c = 0.5 * (kSide - 1);
  const double th = g.params[0], a = g.params[3];
  vx = a * (std::cos(th) * (ux - c) - std::sin(th) * (uy - c)) + c + g.params[1];
  vy = a * (std::sin(th) * (ux - c) + std::cos(th) * (uy - c)) + c + g.params[2];
}

TEST(ImageTransformTest, IdentityIsExactAndActionIsNotExactlyUnitary) {
  ImageTransform action(kSide, kSide, 3);
  EXPECT_EQ(action.dim(), kSide * kSide * 3);
  EXPECT_FALSE(action.exactly_unitary());
  const std::vector<float> x = testing_util::RandomVectors(2, action.dim(), 1);
  EXPECT_EQ(Act(action, action.Identity(), x), x);
}

TEST(ImageTransformTest, QuarterTurnOnSquareImageIsExact) {
  ImageTransform action(kSide, kSide, 2);
  const std::vector<float> x = testing_util::RandomVectors(1, action.dim(), 2);
  const std::vector<float> out = Act(action, ImageTransform::Similarity(kPi / 2, 0, 0, 1), x);
  // g⁻¹(col, row) = (row, N − 1 − col) for θ = +90°.
  for (int64_t row = 0; row < kSide; ++row) {
    for (int64_t col = 0; col < kSide; ++col) {
      for (int64_t ch = 0; ch < 2; ++ch) {
        ASSERT_EQ(out[(row * kSide + col) * 2 + ch], x[((kSide - 1 - col) * kSide + row) * 2 + ch])
            << row << "," << col;
      }
    }
  }
  // Four quarter turns give back the input exactly.
  std::vector<float> y = x;
  for (int k = 0; k < 4; ++k) y = Act(action, ImageTransform::Similarity(kPi / 2, 0, 0, 1), y);
  EXPECT_EQ(y, x);
}

TEST(ImageTransformTest, IntegerTranslationShiftsPixelsAndZeroFills) {
  ImageTransform action(kSide, kSide, 1);
  const std::vector<float> x = testing_util::RandomVectors(1, action.dim(), 3);
  const std::vector<float> out = Act(action, ImageTransform::Similarity(0, 3, -2, 1), x);
  for (int64_t row = 0; row < kSide; ++row) {
    for (int64_t col = 0; col < kSide; ++col) {
      const int64_t sr = row + 2, sc = col - 3;
      const float want = (sr < kSide && sc >= 0) ? x[sr * kSide + sc] : 0.0f;
      ASSERT_EQ(out[row * kSide + col], want) << row << "," << col;
    }
  }
}

TEST(ImageTransformTest, ComposeAndInverseAreExactSimilarityAlgebra) {
  ImageTransform action(kSide, kSide, 1);
  const GroupElement a = ImageTransform::Similarity(0.7, 1.5, -2.0, 1.3);
  const GroupElement b = ImageTransform::Similarity(-2.1, -0.4, 3.2, 0.6);
  const GroupElement ab = action.Compose(a, b);
  const GroupElement a_inv = action.Inverse(a);
  for (double ux : {0.0, 5.5, 31.0}) {
    for (double uy : {0.0, 17.25, 31.0}) {
      double bx, by, abx, aby, ax, ay, back_x, back_y, cx, cy;
      MapPoint(b, ux, uy, bx, by);
      MapPoint(a, bx, by, abx, aby);
      MapPoint(ab, ux, uy, cx, cy);
      EXPECT_NEAR(cx, abx, 1e-12);
      EXPECT_NEAR(cy, aby, 1e-12);
      MapPoint(a, ux, uy, ax, ay);
      MapPoint(a_inv, ax, ay, back_x, back_y);
      EXPECT_NEAR(back_x, ux, 1e-12);
      EXPECT_NEAR(back_y, uy, 1e-12);
    }
  }
  const GroupElement e = action.Compose(a, a_inv);
  const GroupElement id = action.Identity();
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(e.params[k], id.params[k], 1e-12) << k;
  // Angles are wrapped to [−π, π].
  EXPECT_NEAR(action
                  .Compose(ImageTransform::Similarity(3.0, 0, 0, 1),
                           ImageTransform::Similarity(3.0, 0, 0, 1))
                  .params[0],
              6.0 - 2 * kPi, 1e-12);
}

// Bounds below were measured on this 32 × 32 blob (σ = 3 px) and are stated
// with about 2× headroom; they bound interpolation blur, not border clipping
// (the blob is < 1e-6 at the border). Measured worst cases: norm 1.03e-2,
// inner product 1.87e-2, scaling 1.04e-2, composed vs sequential 1.77e-2,
// g⁻¹·(g·x) vs x 2.44e-2.
TEST(ImageTransformTest, RotationsAndTranslationsNearlyPreserveNormsAndInnerProducts) {
  ImageTransform action(kSide, kSide, 1);
  const std::vector<float> x = Blob(1, 3.0);
  const std::vector<float> z = Blob(1, 3.0, 2.0, -1.0);
  const double nx = Norm(x), xz = Dot(x.data(), z.data(), action.dim());
  for (double theta : {0.1, 0.35, -1.0, 2.5}) {
    for (double t : {0.0, 0.5, -2.3}) {
      const GroupElement g = ImageTransform::Similarity(theta, t, 0.5 * t, 1.0);
      const std::vector<float> gx = Act(action, g, x), gz = Act(action, g, z);
      EXPECT_NEAR(Norm(gx) / nx, 1.0, 0.02) << theta << " " << t;
      EXPECT_NEAR(Dot(gx.data(), gz.data(), action.dim()) / xz, 1.0, 0.04) << theta << " " << t;
    }
  }
}

TEST(ImageTransformTest, ScalingWithTheInverseScaleFactorKeepsTheNorm) {
  ImageTransform action(kSide, kSide, 1);
  const std::vector<float> x = Blob(1, 3.0);
  const double nx = Norm(x);
  for (double a : {0.7, 0.85, 1.2, 1.5}) {
    const std::vector<float> gx = Act(action, ImageTransform::Similarity(0.0, 0, 0, a), x);
    // Without the 1/a factor the norm would change by a factor a.
    EXPECT_NEAR(Norm(gx) / nx, 1.0, 0.02) << "a=" << a;
    EXPECT_GT(std::abs(a - 1.0), 0.1);
  }
}

TEST(ImageTransformTest, ComposedElementMatchesSequentialApplication) {
  ImageTransform action(kSide, kSide, 1);
  const std::vector<float> x = Blob(1, 3.0, 1.0, 0.5);
  const GroupElement a = ImageTransform::Similarity(0.3, 1.2, -0.7, 1.1);
  const GroupElement b = ImageTransform::Similarity(-0.5, -0.4, 0.9, 0.9);
  const std::vector<float> sequential = Act(action, a, Act(action, b, x));
  const std::vector<float> composed = Act(action, action.Compose(a, b), x);
  EXPECT_LT(RelativeError(sequential, composed), 0.035);
  // Inverse undoes the transform up to the same interpolation error.
  const std::vector<float> back = Act(action, action.Inverse(a), Act(action, a, x));
  EXPECT_LT(RelativeError(back, x), 0.05);
  // A non-trivial element does change the image: the bounds above are not vacuous.
  EXPECT_GT(RelativeError(Act(action, a, x), x), 0.2);  // measured 0.27
}

TEST(ImageTransformTest, ChannelsAreTransformedIndependently) {
  ImageTransform rgb(kSide, kSide, 3), gray(kSide, kSide, 1);
  const std::vector<float> x = Blob(3, 2.5, -1.0, 2.0);
  const GroupElement g = ImageTransform::Similarity(0.4, 0.3, -1.1, 1.2);
  const std::vector<float> out = Act(rgb, g, x);
  for (int64_t ch = 0; ch < 3; ++ch) {
    std::vector<float> plane(kSide * kSide);
    for (int64_t p = 0; p < kSide * kSide; ++p) plane[p] = x[p * 3 + ch];
    const std::vector<float> plane_out = Act(gray, g, plane);
    for (int64_t p = 0; p < kSide * kSide; ++p) ASSERT_EQ(out[p * 3 + ch], plane_out[p]);
  }
}

}  // namespace
}  // namespace invariant
