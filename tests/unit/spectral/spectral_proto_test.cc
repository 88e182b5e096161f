// Saving and restoring a spectral encoder through SpectralParams + tensors.
#include "core/spectral/spectral_proto.h"

#include <vector>

#include "core/base/random.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

std::unique_ptr<SpectralEncoder> Build() {
  SpectralEncoderOptions o;
  o.dim = 3;
  o.budget = 150;
  o.generators = {PermutationGenerator({1, 0, 2}), SignFlipGenerator({0, 1}),
                  ShiftGenerator({2}, 3)};
  auto enc = SpectralEncoder::Build(o);
  EXPECT_TRUE(enc.ok()) << enc.status();
  return *std::move(enc);
}

TEST(SpectralProtoTest, RoundTripGivesIdenticalFeatures) {
  auto enc = Build();
  const v1::SpectralParams p = SpectralParamsToProto(*enc);
  EXPECT_EQ(p.dim(), 3);
  EXPECT_EQ(p.num_invariant(), enc->d_out());
  EXPECT_EQ(p.generators_size(), 3);
  EXPECT_EQ(p.generators(2).kind(), v1::TorusGenerator::SHIFT);
  EXPECT_EQ(p.generators(2).p(), 3);
  // Through the wire format, with tensors passed as borrowed views.
  v1::SpectralParams parsed;
  ASSERT_TRUE(parsed.ParseFromString(p.SerializeAsString()));
  const SpectralTensors& t = enc->tensors();
  SpectralTensors views;
  views.basis = IntMatrix::View(t.basis.data(), t.basis.rows(), t.basis.cols(), nullptr);
  views.combination_index =
      IntMatrix::View(t.combination_index.data(), t.combination_index.rows(), 2, nullptr);
  views.combination_value =
      DoubleMatrix::View(t.combination_value.data(), t.combination_value.rows(), 1, nullptr);
  auto restored = SpectralEncoderFromProto(parsed, views);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ((*restored)->d_out(), enc->d_out());
  EXPECT_EQ((*restored)->info().num_basis_enumerated, enc->info().num_basis_enumerated);
  Rng rng(3);
  std::vector<float> x(10 * 3);
  for (float& v : x) v = static_cast<float>(rng.Uniform(-1, 1));
  std::vector<float> a(10 * enc->d_out()), b(a.size());
  enc->Encode(10, x.data(), a.data());
  (*restored)->Encode(10, x.data(), b.data());
  EXPECT_EQ(a, b);
  EXPECT_EQ((*restored)->kind(), "spectral");
  EXPECT_GT((*restored)->parameter_bytes(), 0u);
}

TEST(SpectralProtoTest, RejectsInconsistentInput) {
  auto enc = Build();
  v1::SpectralParams p = SpectralParamsToProto(*enc);
  {
    v1::SpectralParams bad = p;
    bad.set_num_invariant(p.num_invariant() + 1);
    auto r = SpectralEncoderFromProto(bad, enc->tensors());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("num_invariant"), absl::string_view::npos);
  }
  {
    v1::SpectralParams bad = p;
    bad.mutable_generators(0)->set_permutation(0, 2);  // {2, 0, 2}
    auto r = SpectralEncoderFromProto(bad, enc->tensors());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("generators[0].permutation"), absl::string_view::npos)
        << r.status();
  }
  {
    v1::SpectralParams bad = p;
    bad.mutable_generators(1)->set_kind(v1::TorusGenerator::KIND_UNSPECIFIED);
    EXPECT_FALSE(SpectralEncoderFromProto(bad, enc->tensors()).ok());
  }
  {
    SpectralTensors t = enc->tensors();
    t.basis = IntMatrix::Zeros(t.basis.rows(), 4);  // wrong width
    auto r = SpectralEncoderFromProto(p, t);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(kSpectralBasisTensor), absl::string_view::npos);
  }
  {
    SpectralTensors t = enc->tensors();
    IntMatrix idx = IntMatrix::Zeros(t.combination_index.rows(), 2);
    idx.mutable_map() = t.combination_index.map();
    idx.mutable_row(0)[0] = static_cast<int32_t>(t.basis.rows());  // out of range
    t.combination_index = idx;
    auto r = SpectralEncoderFromProto(p, t);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(kSpectralCombinationIndexTensor), absl::string_view::npos);
  }
  {
    v1::SpectralParams bad = p;
    bad.set_budget(0);
    EXPECT_FALSE(SpectralOptionsFromProto(bad).ok());
  }
}

}  // namespace
}  // namespace invariant
