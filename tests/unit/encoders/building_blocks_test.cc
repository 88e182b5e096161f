// Templates, banks, pooling and the fast math kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "core/base/kernel_path.h"
#include "core/encoders/fast_math.h"
#include "core/encoders/pooling.h"
#include "core/encoders/preprocess_encoder.h"
#include "gtest/gtest.h"
#include "tests/unit/encoders/test_util.h"

namespace invariant {
namespace {

using testing::MakeGroup;

TEST(FastMathTest, SinCosMatchesLibm) {
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(static_cast<float>(i) * 5e-4f);
  x.push_back(1234.567f);
  x.push_back(-98765.4f);
  std::vector<float> s(x.size()), c(x.size());
  FastSinCos(static_cast<int64_t>(x.size()), x.data(), s.data(), c.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double tol = 2e-7 + 1e-7 * std::abs(x[i]);
    ASSERT_NEAR(s[i], std::sin(static_cast<double>(x[i])), tol) << x[i];
    ASSERT_NEAR(c[i], std::cos(static_cast<double>(x[i])), tol) << x[i];
  }
}

// The portable one-lane path (the only one on aarch64, or built with
// INVARIANT_PORTABLE_KERNELS=ON) and the vector paths give the same bits,
// at every array length and position, for huge, tiny and non-finite values.
TEST(FastMathTest, EveryKernelPathGivesTheSameBits) {
  std::vector<float> x;
  for (int i = -30000; i <= 30000; ++i) x.push_back(static_cast<float>(i) * 3.7e-3f);
  for (float v : {1e5f, -4e6f, 3e7f, 88.5f, -87.5f, -1e30f, 0.0f, -0.0f, 1e-40f}) x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  const int64_t n = static_cast<int64_t>(x.size());
  auto run = [&](int64_t len, std::vector<float>& s, std::vector<float>& c, std::vector<float>& e) {
    s.assign(x.size(), 0.f);
    c.assign(x.size(), 0.f);
    e.assign(x.size(), 0.f);
    for (int64_t i = 0; i < n; i += len) {
      const int64_t m = std::min(len, n - i);
      FastSinCos(m, x.data() + i, s.data() + i, c.data() + i);
      FastExp(m, x.data() + i, e.data() + i);
    }
  };
  ASSERT_TRUE(SetKernelPath(KernelPath::kScalar).ok());
  std::vector<float> s0, c0, e0, s, c, e;
  run(n, s0, c0, e0);
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int64_t len : {int64_t{1}, int64_t{3}, int64_t{13}, n}) {
      run(len, s, c, e);
      const size_t bytes = x.size() * sizeof(float);
      EXPECT_EQ(0, std::memcmp(s.data(), s0.data(), bytes)) << KernelPathName(path) << " " << len;
      EXPECT_EQ(0, std::memcmp(c.data(), c0.data(), bytes)) << KernelPathName(path) << " " << len;
      EXPECT_EQ(0, std::memcmp(e.data(), e0.data(), bytes)) << KernelPathName(path) << " " << len;
    }
  }
  ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok());
}

TEST(FastMathTest, ExpMatchesLibm) {
  std::vector<float> x;
  for (int i = -8600; i <= 8700; ++i) x.push_back(static_cast<float>(i) * 0.01f);
  std::vector<float> e(x.size());
  FastExp(static_cast<int64_t>(x.size()), x.data(), e.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    ASSERT_NEAR(e[i] / want, 1.0, 1e-6) << x[i];
  }
  const float tiny[2] = {-200.0f, -1e30f};
  float out[2];
  FastExp(2, tiny, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
}

TEST(TemplatesTest, GaussianRejectionKeepsShortTemplates) {
  Rng rng(1);
  auto t = SampleGaussianRejectionTemplates(200, 50, 0.1, rng);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rows(), 200);
  EXPECT_EQ(t->cols(), 50);
  double mean_norm2 = 0.0;
  for (int64_t j = 0; j < t->rows(); ++j) {
    const double n2 = t->map().row(j).cast<double>().squaredNorm();
    EXPECT_LT(n2, 1.1 + 1e-6);
    mean_norm2 += n2 / 200.0;
  }
  EXPECT_GT(mean_norm2, 0.7);  // N(0, I/d) has E‖t‖² = 1; rejection trims the top
}

TEST(TemplatesTest, SphereAndGaussianScales) {
  Rng rng(2);
  auto sphere = SampleSphereTemplates(50, 30, rng);
  ASSERT_TRUE(sphere.ok());
  for (int64_t j = 0; j < 50; ++j) {
    EXPECT_NEAR(sphere->map().row(j).cast<double>().norm(), 1.0, 1e-6);
  }
  auto freq = SampleGaussianTemplates(400, 50, 0.5, rng);  // stddev 2
  ASSERT_TRUE(freq.ok());
  const double var = freq->map().cast<double>().squaredNorm() / freq->size();
  EXPECT_NEAR(var, 4.0, 0.2);
  auto normal = SampleStandardNormalTemplates(400, 50, rng);
  ASSERT_TRUE(normal.ok());
  EXPECT_NEAR(normal->map().cast<double>().squaredNorm() / normal->size(), 1.0, 0.05);
}

TEST(TemplatesTest, DataTemplatesAreDistinctRows) {
  FloatMatrix data = FloatMatrix::Zeros(20, 3);
  for (int64_t i = 0; i < 20; ++i) data.mutable_row(i)[0] = static_cast<float>(i);
  Rng rng(3);
  auto t = SampleDataTemplates(20, data, rng);
  ASSERT_TRUE(t.ok());
  std::set<float> seen;
  for (int64_t j = 0; j < 20; ++j) seen.insert(t->row(j)[0]);
  EXPECT_EQ(seen.size(), 20u);
  auto too_many = SampleDataTemplates(21, data, rng);
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.status().message().find("got 21"), std::string::npos);
}

TEST(TemplatesTest, SameSeedSameBitsAndBadArguments) {
  TemplateOptions options;
  options.num_templates = 30;
  for (TemplateKind kind : {TemplateKind::kGaussianRejection, TemplateKind::kSphere,
                            TemplateKind::kGaussian, TemplateKind::kStandardNormal}) {
    options.kind = kind;
    Rng a(9), b(9);
    auto ta = SampleTemplates(options, 17, nullptr, a);
    auto tb = SampleTemplates(options, 17, nullptr, b);
    ASSERT_TRUE(ta.ok() && tb.ok());
    EXPECT_EQ(0, std::memcmp(ta->data(), tb->data(), ta->bytes()));
  }
  Rng rng(1);
  EXPECT_FALSE(SampleGaussianRejectionTemplates(3, 4, 0.0, rng).ok());
  EXPECT_FALSE(SampleGaussianTemplates(3, 4, -1.0, rng).ok());
  EXPECT_FALSE(SampleSphereTemplates(0, 4, rng).ok());
  options.kind = TemplateKind::kData;
  EXPECT_FALSE(SampleTemplates(options, 4, nullptr, rng).ok());
}

TEST(TemplateBankTest, RowLayoutIsTemplateMajor) {
  auto q = MakeGroup(testing::CyclicShiftSpec(7, true));
  Rng rng(4);
  auto templates = SampleSphereTemplates(3, 7, rng);
  ASSERT_TRUE(templates.ok());
  const std::vector<GroupElement> elements = q->Enumerate();
  auto bank = TemplateBank::Build(*templates, q->action(), elements);
  ASSERT_TRUE(bank.ok());
  EXPECT_EQ(bank->num_templates(), 3);
  EXPECT_EQ(bank->num_group_elements(), 7);
  EXPECT_EQ(bank->rows().rows(), 21);
  std::vector<float> expected(7);
  for (int64_t j = 0; j < 3; ++j) {
    for (int64_t k = 0; k < 7; ++k) {
      q->action().Apply(q->action().Inverse(elements[k]), 1, templates->row(j), expected.data());
      EXPECT_EQ(0, std::memcmp(bank->rows().row(j * 7 + k), expected.data(), 7 * sizeof(float)));
      EXPECT_EQ(bank->row(j, k), bank->rows().row(j * 7 + k));
    }
  }
}

TEST(TemplateBankTest, SameSeedSameBankBitForBit) {
  auto q = MakeGroup(testing::CyclicShiftSpec(16, false));
  TemplateOptions options;
  options.kind = TemplateKind::kGaussian;
  options.num_templates = 20;
  const TemplateBank a = testing::MakeBank(*q, options, 9, false, 123);
  const TemplateBank b = testing::MakeBank(*q, options, 9, false, 123);
  const TemplateBank c = testing::MakeBank(*q, options, 9, false, 124);
  ASSERT_EQ(a.rows().bytes(), b.rows().bytes());
  EXPECT_EQ(0, std::memcmp(a.rows().data(), b.rows().data(), a.rows().bytes()));
  EXPECT_NE(0, std::memcmp(a.rows().data(), c.rows().data(), a.rows().bytes()));
}

TEST(TemplateBankTest, BorrowedRowsAreNotCopied) {
  auto storage = std::make_shared<std::vector<float>>(6 * 4, 0.5f);
  FloatMatrix view = FloatMatrix::View(storage->data(), 6, 4, storage);
  auto bank = TemplateBank::FromRows(view, 2, 3);
  ASSERT_TRUE(bank.ok());
  EXPECT_EQ(bank->rows().data(), storage->data());
  const Projector projector = Projector::OverBank(*bank);
  EXPECT_EQ(projector.rows().data(), storage->data());
  auto wrong = TemplateBank::FromRows(view, 4, 2);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("got 6"), std::string::npos) << wrong.status();
}

TEST(TemplateBankTest, EnumerateNeedsEnumerableGroup) {
  v1::GroupSpec spec;
  spec.mutable_permutation()->set_dim(12);  // 12! elements: not enumerable
  auto q = MakeGroup(spec);
  Rng rng(1);
  EXPECT_FALSE(DrawGroupElements(*q, 5, /*enumerate=*/true, rng).ok());
  EXPECT_FALSE(DrawGroupElements(*q, 0, /*enumerate=*/false, rng).ok());
  auto drawn = DrawGroupElements(*q, 5, false, rng);
  ASSERT_TRUE(drawn.ok());
  EXPECT_EQ(drawn->size(), 5u);
}

TEST(PoolingTest, CdfCountsProjectionsAtOrBelowEachThreshold) {
  const std::vector<float> thresholds = CdfThresholds(2, 1.0);  // -1, -.5, 0, .5, 1
  ASSERT_EQ(thresholds.size(), 5u);
  const float p[6] = {-2.0f, -0.5f, 0.0f, 0.25f, 0.5f, 3.0f};
  std::vector<int32_t> counts(6);
  float out[5];
  PoolCdf(p, 6, thresholds, counts.data(), out);
  const float want[5] = {1 / 6.f, 2 / 6.f, 3 / 6.f, 5 / 6.f, 5 / 6.f};
  for (int k = 0; k < 5; ++k) EXPECT_FLOAT_EQ(out[k], want[k]) << k;
  float moment;
  PoolMean(p, 6, &moment);
  EXPECT_FLOAT_EQ(moment, 1.25f / 6.f);
  PoolSecondMoment(p, 6, &moment);
  EXPECT_FLOAT_EQ(moment, (4 + 0.25f + 0.0625f + 0.25f + 9) / 6.f);
  PoolMax(p, 6, &moment);
  EXPECT_EQ(moment, 3.0f);
}

TEST(PoolingTest, CdfMatchesDefinitionOnRandomProjections) {
  const std::vector<float> thresholds = CdfThresholds(25, 1.3);
  Rng rng(5);
  std::vector<float> p(500);
  for (float& v : p) v = static_cast<float>(rng.Uniform(-1.6, 1.6));
  p[0] = thresholds[7];  // exactly on a threshold
  std::vector<int32_t> counts(52);
  std::vector<float> out(51);
  PoolCdf(p.data(), 500, thresholds, counts.data(), out.data());
  for (int k = 0; k < 51; ++k) {
    int count = 0;
    for (float v : p) count += v <= thresholds[k] ? 1 : 0;
    EXPECT_EQ(out[k], static_cast<float>(count) * (1.0f / 500.0f)) << k;
  }
}

}  // namespace
}  // namespace invariant

namespace invariant {
namespace {

// Streaming the rows in uneven blocks gives the statistics of one pass over
// all of them; a constant column (far from zero) gets scale exactly 1.
TEST(ColumnStatisticsTest, BlocksAgreeWithOneFitAndConstantColumnsScaleOne) {
  const int64_t n = 1000, d = 5;
  Rng rng(17);
  FloatMatrix x = FloatMatrix::Zeros(n, d);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < d - 1; ++c) {
      x.mutable_row(i)[c] = static_cast<float>(1e3 * c + rng.Normal(0, 1 + c));
    }
    x.mutable_row(i)[d - 1] = 12345.678f;
  }
  auto fit = PreprocessEncoder::Fit({true, true, false}, x);
  ASSERT_TRUE(fit.ok()) << fit.status();
  ColumnStatistics stats(d);
  for (int64_t start = 0, step = 1; start < n; start += step, step = step * 3 + 1) {
    stats.Add(std::min(step, n - start), x.row(start));
  }
  EXPECT_EQ(stats.count(), n);
  const FloatMatrix mean = stats.Mean(), scale = stats.Scale();
  for (int64_t c = 0; c < d; ++c) {
    EXPECT_NEAR(mean.data()[c], (*fit)->mean().data()[c], 1e-6 * (1 + std::fabs(mean.data()[c])));
    EXPECT_NEAR(scale.data()[c], (*fit)->scale().data()[c], 1e-5 * scale.data()[c]);
  }
  EXPECT_EQ(scale.data()[d - 1], 1.0f);
  EXPECT_EQ(mean.data()[d - 1], 12345.678f);
  EXPECT_NEAR(scale.data()[2], 3.0, 0.3);
}

}  // namespace
}  // namespace invariant
