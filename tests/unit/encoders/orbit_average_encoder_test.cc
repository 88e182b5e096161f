// OrbitAverageEncoder (orbit_average_encoder.h): the average of an encoder
// over the orbit of its input under a finite group equals the average
// computed by hand, is exactly invariant to the group (bit for bit for the
// two-element mirror group, to float summation order for all of D4), does
// not depend on the batch (blocks of kImageBlock included), and refuses a
// group of another dimension.
#include "core/encoders/orbit_average_encoder.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/base/random.h"
#include "core/groups/dihedral.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

// A feature map that is far from invariant: products of neighbouring
// coordinates and a weighted sum.
class ProductEncoder final : public Encoder {
 public:
  explicit ProductEncoder(int64_t d) : Encoder(d, d) {}
  void Encode(int64_t n, const float* x, float* out) const override {
    for (int64_t i = 0; i < n; ++i) {
      const float* row = x + i * d_in();
      float* o = out + i * d_out();
      for (int64_t c = 0; c + 1 < d_in(); ++c) o[c] = row[c] * row[c + 1] + 0.1f * c * row[c];
      o[d_in() - 1] = row[0] - 2 * row[d_in() - 1];
    }
  }
  std::string kind() const override { return "product"; }
};

constexpr int64_t kH = 5, kW = 5, kC = 2, kD = kH * kW * kC;

std::vector<float> RandomRows(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n * kD));
  for (float& v : x) v = static_cast<float>(rng.Normal(0, 1));
  return x;
}

std::unique_ptr<OrbitAverageEncoder> Averaged(const DihedralAction& action,
                                              const std::vector<GroupElement>& elements) {
  auto encoder = OrbitAverageEncoder::Create(std::make_shared<ProductEncoder>(kD),
                                             std::make_shared<DihedralAction>(action), elements);
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  return *std::move(encoder);
}

std::vector<GroupElement> D4() {
  std::vector<GroupElement> all;
  for (int t = 0; t < 4; ++t) {
    for (bool m : {false, true}) all.push_back(DihedralAction::Element(t, m));
  }
  return all;
}

TEST(OrbitAverageEncoderTest, EqualsTheAverageByHand) {
  const DihedralAction action(kH, kW, kC);
  const std::vector<GroupElement> elements = D4();
  auto encoder = Averaged(action, elements);
  EXPECT_EQ(encoder->d_out(), kD);
  EXPECT_EQ(encoder->num_elements(), 8);
  EXPECT_EQ(encoder->kind(), "product");
  const std::vector<float> x = RandomRows(3, 1);
  std::vector<float> out(x.size());
  encoder->Encode(3, x.data(), out.data());
  ProductEncoder plain(kD);
  std::vector<float> gx(kD), fx(kD);
  for (int64_t i = 0; i < 3; ++i) {
    std::vector<double> want(kD, 0.0);
    for (const GroupElement& g : elements) {
      action.Apply(g, 1, x.data() + i * kD, gx.data());
      plain.Encode(1, gx.data(), fx.data());
      for (int64_t c = 0; c < kD; ++c) want[c] += fx[c] / 8.0;
    }
    for (int64_t c = 0; c < kD; ++c) EXPECT_NEAR(out[i * kD + c], want[c], 1e-5) << i << " " << c;
  }
}

TEST(OrbitAverageEncoderTest, IsExactlyInvariantToItsGroup) {
  const DihedralAction action(kH, kW, kC);
  const GroupElement mirror = DihedralAction::Element(0, true);
  auto flips = Averaged(action, {DihedralAction::Element(0, false), mirror});
  auto d4 = Averaged(action, D4());
  const int64_t n = 4;
  const std::vector<float> x = RandomRows(n, 2);
  std::vector<float> a(x.size()), b(x.size()), gx(x.size());
  action.Apply(mirror, n, x.data(), gx.data());
  flips->Encode(n, x.data(), a.data());
  flips->Encode(n, gx.data(), b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  // The plain map moves under the mirror: the average did the work.
  ProductEncoder plain(kD);
  plain.Encode(n, x.data(), a.data());
  plain.Encode(n, gx.data(), b.data());
  EXPECT_NE(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  // All of D4: each of its elements, to float summation order.
  d4->Encode(n, x.data(), a.data());
  for (const GroupElement& g : D4()) {
    action.Apply(g, n, x.data(), gx.data());
    d4->Encode(n, gx.data(), b.data());
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-5 * (1 + std::fabs(a[k])));
  }
}

TEST(OrbitAverageEncoderTest, RowsDoNotDependOnTheBatch) {
  const DihedralAction action(kH, kW, kC);
  auto encoder = Averaged(action, D4());
  const int64_t n = 2 * OrbitAverageEncoder::kImageBlock + 5;  // three blocks
  const std::vector<float> x = RandomRows(n, 3);
  std::vector<float> batch(x.size()), one(kD);
  encoder->Encode(n, x.data(), batch.data());
  for (int64_t i = 0; i < n; ++i) {
    encoder->Encode(1, x.data() + i * kD, one.data());
    EXPECT_EQ(std::memcmp(one.data(), batch.data() + i * kD, kD * sizeof(float)), 0) << i;
  }
}

TEST(OrbitAverageEncoderTest, RefusesAGroupOfAnotherDimension) {
  auto inner = std::make_shared<ProductEncoder>(kD);
  auto small = std::make_shared<DihedralAction>(kH, kW, 1);
  EXPECT_EQ(OrbitAverageEncoder::Create(inner, small, D4()).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto action = std::make_shared<DihedralAction>(kH, kW, kC);
  EXPECT_EQ(OrbitAverageEncoder::Create(nullptr, action, D4()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OrbitAverageEncoder::Create(inner, nullptr, D4()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OrbitAverageEncoder::Create(inner, action, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace invariant
