// Every encoder gives the same bits for a row whatever the batch size, the
// row's position in the batch, the thread count (1..8) and the kernel path
// (every path this CPU supports; the test prints which ran).
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/base/kernel_path.h"
#include "core/base/thread_pool.h"
#include "core/encoders/chain_encoder.h"
#include "core/encoders/packed_dot.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/second_layer_encoder.h"
#include "gtest/gtest.h"
#include "tests/unit/encoders/test_util.h"

namespace invariant {
namespace {

using testing::EncodeAll;
using testing::MakeGroup;
using testing::UnitRows;

constexpr int64_t kRows = 300;
constexpr int64_t kDim = 48;
const int64_t kBatchSizes[] = {1, 2, 3, 7, 15, 16, 17, 63, 64, 65, 255, 300};

struct Named {
  std::string name;
  std::shared_ptr<const Encoder> encoder;
};

// r = 20 and 23 are not multiples of the 16-column panel, so templates
// straddle panels and task boundaries; banks of 1000+ columns give several
// template blocks per row block.
std::vector<Named> AllEncoders() {
  auto shifts = MakeGroup(testing::CyclicShiftSpec(kDim, false));
  std::vector<Named> all;
  std::shared_ptr<const Encoder> cdf = testing::MakeCdf(*shifts, Pooling::kCdf, 60, 20, false, 1);
  all.push_back({"cdf", cdf});
  all.push_back(
      {"cdf_second_moment", testing::MakeCdf(*shifts, Pooling::kSecondMoment, 50, 23, false, 2)});
  std::shared_ptr<const Encoder> rf = testing::MakeRandomFourier(*shifts, 70, 23, false, 1.0, 3);
  all.push_back({"random_fourier", rf});
  all.push_back(
      {"nystrom", testing::MakeNystrom(*shifts, UnitRows(45, kDim, 4), 20, false, 1.0, 5)});
  Rng rng(6);
  auto w = SampleGaussianTemplates(40, rf->d_out(), 0.5, rng);
  EXPECT_TRUE(w.ok());
  all.push_back({"second_layer", std::move(*SecondLayerEncoder::Create({0.5, 6}, rf, *w))});
  std::shared_ptr<const Encoder> pre =
      std::move(*PreprocessEncoder::Create({false, false, true}, kDim, {}, {}));
  all.push_back({"preprocess", pre});
  all.push_back({"chain", std::move(*ChainEncoder::Create({pre, cdf}))});
  // Input placement: transformed inputs onto the packed templates.
  auto templates = SampleGaussianRejectionTemplates(30, kDim, 0.5, rng);
  EXPECT_TRUE(templates.ok());
  auto projector = Projector::OverInput(*templates, 19, shifts, /*seed=*/7);
  EXPECT_TRUE(projector.ok()) << projector.status();
  CdfOptions options;
  options.num_bins = 6;
  options.range = 1.5;
  all.push_back({"cdf_input_placement", std::move(*CdfEncoder::Create(options, *projector))});
  // Input placement over fixed elements (OverInputOrbit): image rotations
  // of 6 × 8 images (bilinear taps), every pooling kind.
  v1::GroupSpec rotations;
  rotations.mutable_image()->set_height(6);
  rotations.mutable_image()->set_width(8);
  rotations.mutable_image()->set_channels(1);
  rotations.mutable_image()->mutable_rotation()->mutable_uniform()->set_high(6.283185307179586);
  auto rot = MakeGroup(rotations);
  auto turns = DrawGroupElements(*rot, 21, false, rng);
  EXPECT_TRUE(turns.ok());
  auto orbit_templates = SampleGaussianTemplates(37, kDim, 1.0, rng);
  EXPECT_TRUE(orbit_templates.ok());
  auto orbit = Projector::OverInputOrbit(*orbit_templates, rot, *turns);
  EXPECT_TRUE(orbit.ok()) << orbit.status();
  all.push_back({"cdf_input_orbit", std::move(*CdfEncoder::Create(options, *orbit))});
  all.push_back({"rf_input_orbit", std::move(*RandomFourierEncoder::Create({1.0}, *orbit))});
  auto landmarks = UnitRows(33, kDim, 8);
  auto orbit_bf16 = Projector::OverInputOrbit(landmarks, rot, *turns, BankDtype::kBfloat16);
  EXPECT_TRUE(orbit_bf16.ok());
  auto projection = ComputeNystromProjection(landmarks, {1.0, 1e-6});
  EXPECT_TRUE(projection.ok());
  all.push_back({"nystrom_input_orbit_bf16",
                 std::move(*NystromEncoder::Create({1.0, 1e-6}, *orbit_bf16, *projection))});
  return all;
}

class ParallelDeterminismTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok());
    ResetDefaultThreadPoolForTesting(2);
  }
};

TEST_F(ParallelDeterminismTest, SameBitsForEveryBatchPositionThreadCountAndPath) {
  const FloatMatrix x = UnitRows(kRows, kDim, 11);
  const std::vector<Named> encoders = AllEncoders();
  std::cout << "kernel paths compared:";
  for (KernelPath p : SupportedKernelPaths()) std::cout << " " << KernelPathName(p);
  std::cout << std::endl;
  // Reference: the portable path, one thread, the whole batch at once.
  ASSERT_TRUE(SetKernelPath(KernelPath::kScalar).ok());
  ResetDefaultThreadPoolForTesting(1);
  std::vector<FloatMatrix> want;
  for (const Named& e : encoders) want.push_back(EncodeAll(*e.encoder, x));
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int threads = 1; threads <= 8; ++threads) {
      ResetDefaultThreadPoolForTesting(threads);
      for (size_t e = 0; e < encoders.size(); ++e) {
        const Encoder& encoder = *encoders[e].encoder;
        const int64_t width = encoder.d_out();
        for (int64_t batch : kBatchSizes) {
          // A batch starting at a row that depends on its size: rows land at
          // different positions of the batch and of the row blocks.
          const int64_t first = (batch * 37) % (kRows - batch + 1);
          std::vector<float> got(static_cast<size_t>(batch * width));
          encoder.Encode(batch, x.row(first), got.data());
          ASSERT_EQ(0, std::memcmp(got.data(), want[e].row(first), got.size() * sizeof(float)))
              << encoders[e].name << ": path " << KernelPathName(path) << ", " << threads
              << " threads, batch " << batch << " from row " << first;
        }
      }
    }
  }
}

TEST_F(ParallelDeterminismTest, ConcurrentCallersOnTheSharedPoolAgree) {
  ResetDefaultThreadPoolForTesting(4);
  const FloatMatrix x = UnitRows(130, kDim, 12);
  for (const Named& e : AllEncoders()) {
    const FloatMatrix want = EncodeAll(*e.encoder, x);
    std::vector<FloatMatrix> got(6);
    std::vector<std::thread> callers;
    for (size_t t = 0; t < got.size(); ++t) {
      callers.emplace_back([&, t] { got[t] = EncodeAll(*e.encoder, x); });
    }
    for (std::thread& t : callers) t.join();
    for (const FloatMatrix& g : got) {
      EXPECT_EQ(0, std::memcmp(g.data(), want.data(), want.bytes())) << e.name;
    }
  }
}

}  // namespace
}  // namespace invariant

namespace invariant {
namespace {

// A bf16 bank: same bits across paths and thread counts, features close to
// the float bank's (the bank values move by ≤ 2^-9 relative).
TEST(Bf16BankTest, RandomFourierIsDeterministicAndCloseToFloat) {
  auto shifts = MakeGroup(testing::CyclicShiftSpec(kDim, false));
  TemplateOptions t;
  t.kind = TemplateKind::kGaussian;
  t.num_templates = 70;
  t.sigma = 1.0;
  const TemplateBank bank = testing::MakeBank(*shifts, t, 23, false, 3);
  auto as_float = RandomFourierEncoder::Create({1.0}, Projector::OverBank(bank));
  auto as_bf16 =
      RandomFourierEncoder::Create({1.0}, Projector::OverBank(bank, BankDtype::kBfloat16));
  ASSERT_TRUE(as_float.ok() && as_bf16.ok());
  EXPECT_EQ((*as_bf16)->projector().bank_dtype(), BankDtype::kBfloat16);
  const FloatMatrix x = UnitRows(100, kDim, 21);
  ASSERT_TRUE(SetKernelPath(KernelPath::kScalar).ok());
  ResetDefaultThreadPoolForTesting(1);
  const FloatMatrix want = EncodeAll(**as_bf16, x);
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int threads : {1, 2, 5, 8}) {
      ResetDefaultThreadPoolForTesting(threads);
      for (int64_t batch : {1, 17, 100}) {
        std::vector<float> got(static_cast<size_t>(batch * want.cols()));
        (*as_bf16)->Encode(batch, x.data(), got.data());
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
            << KernelPathName(path) << " threads " << threads << " batch " << batch;
      }
    }
  }
  const double diff = testing::MaxAbsDiff(EncodeAll(**as_float, x), want);
  EXPECT_GT(diff, 0.0);   // the rounding is real
  EXPECT_LT(diff, 2e-3);  // and small: features are O(1/√s) ≈ 0.12
  ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok());
  ResetDefaultThreadPoolForTesting(2);
}

}  // namespace
}  // namespace invariant
