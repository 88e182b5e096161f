// ⟨φ(x), φ(z)⟩ converges to the kernel the features approximate, with the
// error falling as the number of templates grows.
#include <cmath>
#include <vector>

#include "core/encoders/haar_kernel.h"
#include "gtest/gtest.h"
#include "tests/unit/encoders/test_util.h"

namespace invariant {
namespace {

using testing::EncodeAll;
using testing::MakeGroup;
using testing::UnitRows;

// Max over pairs |⟨φ(x_a), φ(x_b)⟩ − K(x_a, x_b)|.
double GramError(const FloatMatrix& features, const DoubleMatrix& kernel, double feature_scale) {
  const Eigen::MatrixXd f = features.map().cast<double>();
  const Eigen::MatrixXd gram = f * f.transpose() * feature_scale;
  return (gram - kernel.map()).cwiseAbs().maxCoeff();
}

TEST(KernelConvergenceTest, RandomFourierApproachesHaarGaussianKernel) {
  auto q = MakeGroup(testing::BlockPermutationSpec(4, 3, true));  // 24 elements
  const FloatMatrix x = UnitRows(10, 12, 41);
  const double sigma = 0.8;
  auto exact = HaarKernelMatrix(x, x, q->action(), q->Enumerate(),
                                BaseKernel{BaseKernelKind::kGaussian, sigma});
  ASSERT_TRUE(exact.ok()) << exact.status();
  std::vector<double> errors;
  for (int64_t s : {32, 512, 8192}) {
    auto encoder = testing::MakeRandomFourier(*q, s, 0, true, sigma, 100 + s);
    errors.push_back(GramError(EncodeAll(*encoder, x), *exact, 1.0));
  }
  EXPECT_LT(errors[1], errors[0]);
  EXPECT_LT(errors[2], errors[1]);
  EXPECT_LT(errors[2], 0.05);  // ~ 3/√8192 with margin
}

TEST(KernelConvergenceTest, PlainRandomFourierApproachesGaussianKernel) {
  auto identity = MakeGroup(testing::BlockPermutationSpec(1, 16, true));
  const FloatMatrix x = UnitRows(10, 16, 42);
  const double sigma = 1.0;
  auto exact = BaseKernelMatrix(x, x, BaseKernel{BaseKernelKind::kGaussian, sigma});
  ASSERT_TRUE(exact.ok());
  std::vector<double> errors;
  for (int64_t s : {32, 512, 8192}) {
    auto encoder = testing::MakeRandomFourier(*identity, s, 0, true, sigma, 200 + s);
    errors.push_back(GramError(EncodeAll(*encoder, x), *exact, 1.0));
  }
  EXPECT_LT(errors[1], errors[0]);
  EXPECT_LT(errors[2], errors[1]);
  EXPECT_LT(errors[2], 0.05);
}

// CDF features: (1/m)⟨φ(x), φ(z)⟩ converges (in m) to its expectation over
// templates; measured against a reference with many templates.
TEST(KernelConvergenceTest, CdfKernelErrorFallsWithTemplates) {
  auto q = MakeGroup(testing::BlockPermutationSpec(4, 3, true));
  const FloatMatrix x = UnitRows(8, 12, 43);
  auto reference_encoder = testing::MakeCdf(*q, Pooling::kCdf, 16384, 0, true, 999);
  const Eigen::MatrixXd ref = EncodeAll(*reference_encoder, x).map().cast<double>();
  const DoubleMatrix reference =
      DoubleMatrix::FromEigen(ref * ref.transpose() / static_cast<double>(16384));
  std::vector<double> errors;
  for (int64_t m : {16, 256, 4096}) {
    // Average over 3 seeds so the check measures the trend, not one draw.
    double mean_error = 0.0;
    for (uint64_t seed : {1, 2, 3}) {
      auto encoder = testing::MakeCdf(*q, Pooling::kCdf, m, 0, true, seed * 1000 + m);
      mean_error += GramError(EncodeAll(*encoder, x), reference, 1.0 / m) / 3.0;
    }
    errors.push_back(mean_error);
  }
  EXPECT_LT(errors[1], errors[0]);
  EXPECT_LT(errors[2], errors[1]);
  EXPECT_LT(errors[2] * 4.0, errors[0]);  // 256× templates: ~16× smaller
}

TEST(KernelConvergenceTest, NystromWithPointsAsLandmarksReproducesKernel) {
  auto identity = MakeGroup(testing::BlockPermutationSpec(1, 10, true));
  const FloatMatrix x = UnitRows(12, 10, 44);
  const double sigma = 0.9;
  auto encoder = testing::MakeNystrom(*identity, x, 0, true, sigma, 1);
  auto exact = BaseKernelMatrix(x, x, BaseKernel{BaseKernelKind::kGaussian, sigma});
  ASSERT_TRUE(exact.ok());
  EXPECT_LT(GramError(EncodeAll(*encoder, x), *exact, 1.0), 1e-4);
  EXPECT_EQ(encoder->rank(), 12);
}

// Landmarks = the full orbits of the points: the span holds every k0(·, g·x),
// so ⟨ψ(x), ψ(z)⟩ is exactly the Haar-integrated Gaussian kernel.
TEST(KernelConvergenceTest, NystromWithOrbitLandmarksReproducesHaarKernel) {
  auto q = MakeGroup(testing::SignFlipSpec(3, true));  // 8 elements
  const FloatMatrix x = UnitRows(4, 3, 45);
  const std::vector<GroupElement> elements = q->Enumerate();
  FloatMatrix orbits = FloatMatrix::Zeros(x.rows() * 8, 3);
  for (size_t k = 0; k < elements.size(); ++k) {
    q->action().Apply(elements[k], x.rows(), x.data(), orbits.mutable_row(k * x.rows()));
  }
  const double sigma = 1.5;
  auto encoder = testing::MakeNystrom(*q, orbits, 0, true, sigma, 1);
  auto exact =
      HaarKernelMatrix(x, x, q->action(), elements, BaseKernel{BaseKernelKind::kGaussian, sigma});
  ASSERT_TRUE(exact.ok());
  EXPECT_LT(GramError(EncodeAll(*encoder, x), *exact, 1.0), 2e-3);
}

TEST(HaarKernelTest, LinearMatchesBruteForceAndIsInvariant) {
  auto q = MakeGroup(testing::CyclicShiftSpec(6, true));
  const FloatMatrix a = UnitRows(3, 6, 46);
  const FloatMatrix b = UnitRows(4, 6, 47);
  const std::vector<GroupElement> elements = q->Enumerate();
  for (BaseKernelKind kind : {BaseKernelKind::kLinear, BaseKernelKind::kGaussian}) {
    const BaseKernel kernel{kind, 0.7};
    auto k = HaarKernelMatrix(a, b, q->action(), elements, kernel);
    ASSERT_TRUE(k.ok());
    // Brute force over all pairs of elements.
    for (int64_t i = 0; i < a.rows(); ++i) {
      for (int64_t j = 0; j < b.rows(); ++j) {
        double sum = 0.0;
        for (const GroupElement& g : elements) {
          for (const GroupElement& h : elements) {
            FloatMatrix gx = FloatMatrix::Zeros(1, 6), hz = FloatMatrix::Zeros(1, 6);
            q->action().Apply(g, 1, a.row(i), gx.mutable_data());
            q->action().Apply(h, 1, b.row(j), hz.mutable_data());
            auto base = BaseKernelMatrix(gx, hz, kernel);
            sum += base->row(0)[0];
          }
        }
        EXPECT_NEAR(k->row(i)[j], sum / 36.0, 1e-9);
      }
    }
    // Invariant in the first argument.
    const FloatMatrix moved = testing::Transform(q->action(), elements[2], a);
    auto k_moved = HaarKernelMatrix(moved, b, q->action(), elements, kernel);
    ASSERT_TRUE(k_moved.ok());
    EXPECT_LT((k_moved->map() - k->map()).cwiseAbs().maxCoeff(), 1e-9);
  }
}

TEST(HaarKernelTest, RejectsMismatchedDimensions) {
  auto q = MakeGroup(testing::CyclicShiftSpec(6, true));
  const FloatMatrix a = UnitRows(2, 5, 1);
  auto k = HaarKernelMatrix(a, a, q->action(), q->Enumerate(), BaseKernel{});
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("expects 6"), std::string::npos) << k.status();
}

}  // namespace
}  // namespace invariant
