// bf16 banks end to end (encoder.bank_dtype = BANK_DTYPE_BF16): the bank is
// stored in the bundle as a DTYPE_BFLOAT16 tensor (half the bytes), loads
// back to the same features bit for bit, equals a float32 model over the
// widened bank bit for bit (the kernel widens, the summation order is that
// of float banks), and gives the same bits on every kernel path.
//
// ctest also runs these tests with INVARIANT_KERNEL=scalar in the
// environment (tests/unit/model/CMakeLists.txt): the process then starts on
// the portable path, as on a CPU without AVX, and its features must equal
// those of every vector path.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/base/bf16.h"
#include "core/base/kernel_path.h"
#include "core/bundle/bundle.h"
#include "core/model/model.h"
#include "gtest/gtest.h"
#include "tests/test_models/test_models.h"

namespace invariant {
namespace {

namespace fs = std::filesystem;

constexpr char kBank[] = "encoder/bank";

struct Pair {
  std::shared_ptr<const Model> float_model;  // the drawn float32 bank
  std::shared_ptr<const Model> bf16_model;   // the same bank rounded to bf16
  std::shared_ptr<const Model> widened;      // float32 model over the widened bf16 bank
};

Pair MakePair() {
  testing_models::TestModelSpec spec;
  spec.input_dim = 40;
  spec.num_features = 37;  // 37 · 5 = 185 bank rows: not a multiple of the panel
  spec.num_group_elements = 5;
  auto base = testing_models::MakeTestModel(spec);
  EXPECT_TRUE(base.ok()) << base.status();
  Pair p;
  p.float_model = *base;
  const FloatMatrix& bank = (*base)->tensors().f32.at(kBank);
  Bf16Matrix bank16 = Bf16Matrix::Zeros(bank.rows(), bank.cols());
  FloatMatrix widened = FloatMatrix::Zeros(bank.rows(), bank.cols());
  for (int64_t i = 0; i < bank.size(); ++i) {
    bank16.mutable_data()[i] = FloatToBf16(bank.data()[i]);
    widened.mutable_data()[i] = Bf16Value(bank16.data()[i]);
  }
  ModelTensors t16 = (*base)->tensors();
  t16.f32.erase(kBank);
  t16.bf16[kBank] = bank16;
  v1::Manifest m16 = (*base)->manifest();
  m16.mutable_encoder()->set_bank_dtype(v1::BANK_DTYPE_BF16);
  auto bf16 = Model::Assemble(m16, t16);
  EXPECT_TRUE(bf16.ok()) << bf16.status();
  p.bf16_model = *bf16;
  ModelTensors tw = (*base)->tensors();
  tw.f32[kBank] = widened;
  auto w = Model::Assemble((*base)->manifest(), tw);
  EXPECT_TRUE(w.ok()) << w.status();
  p.widened = *w;
  return p;
}

std::vector<float> Rows(int64_t n, int64_t d) {
  std::vector<float> x(static_cast<size_t>(n * d));
  for (size_t k = 0; k < x.size(); ++k) {
    x[k] = static_cast<float>(std::sin(0.41 * static_cast<double>(k) + 0.3));
  }
  return x;
}

std::vector<float> Features(const Model& m, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size()) / m.input_dim();
  std::vector<float> f(static_cast<size_t>(n * m.feature_dim()));
  m.Featurize(n, x.data(), f.data());
  return f;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class Bf16BankModelTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(SetKernelPath(initial_path_).ok()); }
  const KernelPath initial_path_ = ActiveKernelPath();
};

TEST_F(Bf16BankModelTest, RoundTripsThroughABundleWithHalfTheBankBytes) {
  const Pair p = MakePair();
  ASSERT_NE(p.bf16_model, nullptr);
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("bf16_bank_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path16 = (dir / "bf16.bundle").string();
  const std::string path32 = (dir / "f32.bundle").string();
  ASSERT_TRUE(p.bf16_model->Save(path16).ok());
  ASSERT_TRUE(p.float_model->Save(path32).ok());

  auto bundle = Bundle::Open(path16);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  auto entry = (*bundle)->Entry(kBank);
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ((*entry)->dtype(), v1::DTYPE_BFLOAT16);
  EXPECT_EQ((*entry)->size_bytes(), 185u * 40u * 2u);
  EXPECT_EQ((*bundle)->manifest().encoder().bank_dtype(), v1::BANK_DTYPE_BF16);
  auto bundle32 = Bundle::Open(path32);
  ASSERT_TRUE(bundle32.ok());
  EXPECT_EQ((*(*bundle32)->Entry(kBank))->size_bytes(), 2 * (*entry)->size_bytes());

  auto loaded = Model::Load(path16);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->manifest().encoder().bank_dtype(), v1::BANK_DTYPE_BF16);
  EXPECT_EQ((*loaded)->featurizer().parameter_bytes(), 185u * 40u * 2u);
  const std::vector<float> x = Rows(33, 40);
  const std::vector<float> want = Features(*p.bf16_model, x);
  EXPECT_TRUE(SameBits(Features(**loaded, x), want));
  // Widened in the kernel, summed in the float order: a float32 model over
  // the widened bank gives the same bits.
  EXPECT_TRUE(SameBits(Features(*p.widened, x), want));
  // The rounding is real but small (bank values move by ≤ 2^-9 relative).
  const std::vector<float> exact = Features(*p.float_model, x);
  double max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(want[i] - exact[i])));
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(exact[i])));
  }
  EXPECT_GT(max_diff, 0.0);
  EXPECT_LT(max_diff, 0.02 * max_abs);
  // A bf16 model refuses a float32 bank tensor (and the reverse), naming it.
  ModelTensors wrong = p.float_model->tensors();
  v1::Manifest m16 = p.float_model->manifest();
  m16.mutable_encoder()->set_bank_dtype(v1::BANK_DTYPE_BF16);
  const absl::Status s = Model::Assemble(m16, wrong).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("encoder/bank"), std::string::npos) << s;
  fs::remove_all(dir);
}

TEST_F(Bf16BankModelTest, EveryKernelPathGivesTheBitsOfTheStartingPath) {
  std::cout << "starting kernel path: " << KernelPathName(initial_path_) << "\n";
  const char* forced = std::getenv("INVARIANT_KERNEL");
  if (forced != nullptr && std::string(forced) == "scalar") {
    EXPECT_EQ(initial_path_, KernelPath::kScalar);
  }
  const Pair p = MakePair();
  ASSERT_NE(p.bf16_model, nullptr);
  const std::vector<float> x = Rows(41, 40);
  const std::vector<float> want = Features(*p.bf16_model, x);
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    EXPECT_TRUE(SameBits(Features(*p.bf16_model, x), want)) << KernelPathName(path);
    std::vector<float> one(static_cast<size_t>(p.bf16_model->feature_dim()));
    p.bf16_model->Featurize(1, x.data() + 17 * 40, one.data());
    EXPECT_EQ(0, std::memcmp(one.data(), want.data() + 17 * one.size(), one.size() * 4))
        << KernelPathName(path);
  }
}

}  // namespace
}  // namespace invariant
