// Batch independence (bit for bit), thread safety, and the preprocess /
// second-layer / chain encoders.
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "core/encoders/chain_encoder.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/second_layer_encoder.h"
#include "gtest/gtest.h"
#include "tests/unit/encoders/test_util.h"

namespace invariant {
namespace {

using testing::EncodeAll;
using testing::MakeGroup;
using testing::UnitRows;

// Encodes rows one at a time, in uneven chunks and all at once; every
// result must be the same bits.
void ExpectBatchIndependent(const Encoder& encoder, const FloatMatrix& x) {
  const FloatMatrix all = EncodeAll(encoder, x);
  FloatMatrix single = FloatMatrix::Zeros(x.rows(), encoder.d_out());
  for (int64_t i = 0; i < x.rows(); ++i) {
    encoder.Encode(1, x.row(i), single.mutable_row(i));
  }
  FloatMatrix chunked = FloatMatrix::Zeros(x.rows(), encoder.d_out());
  for (int64_t i = 0, step = 1; i < x.rows(); i += step, step = step * 3 % 97 + 1) {
    const int64_t n = std::min(step, x.rows() - i);
    encoder.Encode(n, x.row(i), chunked.mutable_row(i));
  }
  EXPECT_EQ(0, std::memcmp(all.data(), single.data(), all.bytes()))
      << encoder.kind() << ": max diff " << testing::MaxAbsDiff(all, single);
  EXPECT_EQ(0, std::memcmp(all.data(), chunked.data(), all.bytes()))
      << encoder.kind() << ": max diff " << testing::MaxAbsDiff(all, chunked);
}

std::shared_ptr<const GroupDistribution> Shifts() {
  return MakeGroup(testing::CyclicShiftSpec(48, false));
}

TEST(BatchingTest, CdfIsBatchIndependent) {
  auto q = Shifts();
  const FloatMatrix x = UnitRows(300, 48, 1);
  for (Pooling pooling : {Pooling::kCdf, Pooling::kMax}) {
    ExpectBatchIndependent(*testing::MakeCdf(*q, pooling, 300, 50, false, 2), x);
  }
}

TEST(BatchingTest, RandomFourierIsBatchIndependent) {
  // 20000 bank rows: several column blocks per row block.
  ExpectBatchIndependent(*testing::MakeRandomFourier(*Shifts(), 400, 50, false, 1.0, 3),
                         UnitRows(300, 48, 4));
}

TEST(BatchingTest, NystromIsBatchIndependent) {
  const FloatMatrix landmarks = UnitRows(60, 48, 5);
  ExpectBatchIndependent(*testing::MakeNystrom(*Shifts(), landmarks, 30, false, 1.0, 6),
                         UnitRows(300, 48, 7));
}

TEST(BatchingTest, ConcurrentCallsAgree) {
  auto encoder = testing::MakeRandomFourier(*Shifts(), 200, 20, false, 1.0, 8);
  const FloatMatrix x = UnitRows(70, 48, 9);
  const FloatMatrix want = EncodeAll(*encoder, x);
  std::vector<FloatMatrix> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { got[t] = EncodeAll(*encoder, x); });
  }
  for (std::thread& t : threads) t.join();
  for (const FloatMatrix& g : got) EXPECT_EQ(0, std::memcmp(g.data(), want.data(), want.bytes()));
}

TEST(PreprocessTest, FitCentersScalesAndNormalises) {
  Rng rng(10);
  FloatMatrix data = FloatMatrix::Zeros(500, 4);
  for (int64_t i = 0; i < 500; ++i) {
    for (int64_t c = 0; c < 4; ++c) {
      data.mutable_row(i)[c] = static_cast<float>(3.0 * c + (c + 1) * rng.Normal());
    }
  }
  PreprocessOptions options{true, true, false};
  auto pre = PreprocessEncoder::Fit(options, data);
  ASSERT_TRUE(pre.ok()) << pre.status();
  const Eigen::MatrixXd y = EncodeAll(**pre, data).map().cast<double>();
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(y.col(c).mean(), 0.0, 1e-5);
    EXPECT_NEAR(y.col(c).squaredNorm() / 500.0, 1.0, 1e-4);
  }
  options.l2_normalize = true;
  auto unit = PreprocessEncoder::Fit(options, data);
  ASSERT_TRUE(unit.ok());
  const Eigen::MatrixXd u = EncodeAll(**unit, data).map().cast<double>();
  for (int64_t i = 0; i < 500; ++i) EXPECT_NEAR(u.row(i).norm(), 1.0, 1e-6);
  // Zero rows stay zero under L2 normalisation.
  auto plain = PreprocessEncoder::Create({false, false, true}, 3, {}, {});
  ASSERT_TRUE(plain.ok());
  const float zero[3] = {0, 0, 0};
  float out[3] = {1, 1, 1};
  (*plain)->Encode(1, zero, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[2], 0.0f);
}

TEST(PreprocessTest, RejectsBadTensors) {
  auto bad = PreprocessEncoder::Create({true, false, false}, 3, FloatMatrix::Zeros(1, 2), {});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("1 × 3"), std::string::npos) << bad.status();
  auto zero_scale =
      PreprocessEncoder::Create({false, true, false}, 2, {}, FloatMatrix::Zeros(1, 2));
  EXPECT_EQ(zero_scale.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ChainTest, ComposesStagesAndMatchesManualComposition) {
  auto q = Shifts();
  const FloatMatrix x = UnitRows(90, 48, 11);
  auto pre = PreprocessEncoder::Create({false, false, true}, 48, {}, {});
  ASSERT_TRUE(pre.ok());
  std::shared_ptr<const Encoder> rf = testing::MakeRandomFourier(*q, 64, 8, false, 1.0, 12);
  Rng rng(13);
  auto w = SampleGaussianTemplates(32, rf->d_out(), 0.5, rng);
  ASSERT_TRUE(w.ok());
  auto second = SecondLayerEncoder::Create({0.5, 13}, rf, *w);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->d_out(), 64);
  std::shared_ptr<const Encoder> second_shared = std::move(*second);
  auto chain = ChainEncoder::Create({std::move(*pre), second_shared});
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ((*chain)->d_in(), 48);
  EXPECT_EQ((*chain)->d_out(), 64);
  EXPECT_EQ((*chain)->kind(), "second_layer");
  // x is already unit-norm: L2 normalisation changes it by rounding only.
  const FloatMatrix manual = EncodeAll(*second_shared, x);
  const FloatMatrix chained = EncodeAll(**chain, x);
  EXPECT_LT(testing::MaxAbsDiff(manual, chained), 1e-5);
  ExpectBatchIndependent(**chain, x);
  // Second-layer features: ‖ψ2(x)‖² = (1/s2) Σ (cos² + sin²) = 1.
  for (int64_t i = 0; i < chained.rows(); ++i) {
    EXPECT_NEAR(chained.map().row(i).cast<double>().squaredNorm(), 1.0, 1e-5);
  }
  // The second layer approximates exp(−‖ψ(x) − ψ(z)‖²/(2σ2²)) on the features.
  const FloatMatrix f = EncodeAll(*rf, x);
  double err = 0.0;
  for (int64_t a = 0; a < 5; ++a) {
    const double d2 = (f.map().row(a) - f.map().row(a + 1)).cast<double>().squaredNorm();
    const double approx =
        chained.map().row(a).cast<double>().dot(chained.map().row(a + 1).cast<double>());
    err = std::max(err, std::abs(approx - std::exp(-d2 / (2 * 0.25))));
  }
  EXPECT_LT(err, 0.6);  // s2 = 32: a loose but falsifiable bound
}

TEST(ChainTest, RejectsMismatchedStages) {
  auto a = PreprocessEncoder::Create({false, false, true}, 5, {}, {});
  auto b = PreprocessEncoder::Create({false, false, true}, 6, {}, {});
  ASSERT_TRUE(a.ok() && b.ok());
  auto chain = ChainEncoder::Create({std::move(*a), std::move(*b)});
  EXPECT_EQ(chain.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(chain.status().message().find("expects d_in 6"), std::string::npos) << chain.status();
  EXPECT_FALSE(ChainEncoder::Create({}).ok());
}

TEST(EncoderErrorsTest, InvalidOptionsNameTheField) {
  auto q = Shifts();
  TemplateOptions t;
  t.num_templates = 4;
  const TemplateBank bank = testing::MakeBank(*q, t, 3, false, 1);
  CdfOptions cdf;
  cdf.num_bins = 0;
  auto e = CdfEncoder::Create(cdf, Projector::OverBank(bank));
  EXPECT_NE(e.status().message().find("num_bins"), std::string::npos) << e.status();
  auto rf = RandomFourierEncoder::Create({-1.0}, Projector::OverBank(bank));
  EXPECT_NE(rf.status().message().find("sigma"), std::string::npos) << rf.status();
  auto nys = NystromEncoder::Create({}, Projector::OverBank(bank), FloatMatrix::Zeros(2, 5));
  EXPECT_NE(nys.status().message().find("s = 4"), std::string::npos) << nys.status();
}

}  // namespace
}  // namespace invariant
