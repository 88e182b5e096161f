// test_util.h: shared helpers for the encoder tests (groups from specs,
// seeded random inputs, encoders built the way the coordinator will).
#ifndef INVARIANT_TESTS_UNIT_ENCODERS_TEST_UTIL_H_
#define INVARIANT_TESTS_UNIT_ENCODERS_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/random.h"
#include "core/base/tensor.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/random_fourier_encoder.h"
#include "core/encoders/template_bank.h"
#include "core/encoders/templates.h"
#include "core/groups/group_factory.h"
#include "gtest/gtest.h"

namespace invariant::testing {

inline v1::GroupSpec BlockPermutationSpec(int blocks, int block_size, bool enumerate) {
  v1::GroupSpec spec;
  spec.mutable_block_permutation()->set_num_blocks(blocks);
  spec.mutable_block_permutation()->set_block_size(block_size);
  spec.set_enumerate(enumerate);
  return spec;
}

inline v1::GroupSpec SignFlipSpec(int dim, bool enumerate) {
  v1::GroupSpec spec;
  spec.mutable_sign_flip()->set_dim(dim);
  spec.set_enumerate(enumerate);
  return spec;
}

inline v1::GroupSpec CyclicShiftSpec(int length, bool enumerate) {
  v1::GroupSpec spec;
  spec.mutable_cyclic_shift()->set_length(length);
  spec.mutable_cyclic_shift()->set_max_shift(0);
  spec.set_enumerate(enumerate);
  return spec;
}

inline std::shared_ptr<const GroupDistribution> MakeGroup(const v1::GroupSpec& spec) {
  auto q = MakeGroupDistribution(spec);
  EXPECT_TRUE(q.ok()) << q.status();
  return std::shared_ptr<const GroupDistribution>(std::move(*q));
}

// n × d rows, each standard normal scaled to unit norm.
inline FloatMatrix UnitRows(int64_t n, int64_t d, uint64_t seed) {
  Rng rng(seed);
  FloatMatrix x = FloatMatrix::Zeros(n, d);
  for (int64_t i = 0; i < n; ++i) {
    double norm2 = 0.0;
    std::vector<double> v(static_cast<size_t>(d));
    for (double& e : v) {
      e = rng.Normal();
      norm2 += e * e;
    }
    for (int64_t c = 0; c < d; ++c) {
      x.mutable_row(i)[c] = static_cast<float>(v[static_cast<size_t>(c)] / std::sqrt(norm2));
    }
  }
  return x;
}

inline FloatMatrix Transform(const GroupAction& action, const GroupElement& g,
                             const FloatMatrix& x) {
  FloatMatrix out = FloatMatrix::Zeros(x.rows(), x.cols());
  action.Apply(g, x.rows(), x.data(), out.mutable_data());
  return out;
}

inline FloatMatrix EncodeAll(const Encoder& encoder, const FloatMatrix& x) {
  FloatMatrix out = FloatMatrix::Zeros(x.rows(), encoder.d_out());
  encoder.Encode(x.rows(), x.data(), out.mutable_data());
  return out;
}

inline double MaxAbsDiff(const FloatMatrix& a, const FloatMatrix& b) {
  double m = 0.0;
  for (int64_t i = 0; i < a.size(); ++i) {
    m = std::max(m, std::abs(static_cast<double>(a.data()[i]) - b.data()[i]));
  }
  return m;
}

// Bank of `m` templates of `kind` transformed by q's elements (r draws or
// the enumeration), all from one seed.
inline TemplateBank MakeBank(const GroupDistribution& q, const TemplateOptions& options, int64_t r,
                             bool enumerate, uint64_t seed) {
  Rng rng(seed);
  auto templates = SampleTemplates(options, q.action().dim(), nullptr, rng);
  EXPECT_TRUE(templates.ok()) << templates.status();
  auto bank = TemplateBank::Sample(*templates, q, r, enumerate, rng);
  EXPECT_TRUE(bank.ok()) << bank.status();
  return *bank;
}

inline std::unique_ptr<CdfEncoder> MakeCdf(const GroupDistribution& q, Pooling pooling, int64_t m,
                                           int64_t r, bool enumerate, uint64_t seed) {
  TemplateOptions t;
  t.kind = TemplateKind::kGaussianRejection;
  t.num_templates = m;
  t.epsilon = 0.5;
  CdfOptions options;
  options.pooling = pooling;
  options.num_bins = 10;
  options.range = 1.5;
  auto e = CdfEncoder::Create(options, Projector::OverBank(MakeBank(q, t, r, enumerate, seed)));
  EXPECT_TRUE(e.ok()) << e.status();
  return std::move(*e);
}

inline std::unique_ptr<RandomFourierEncoder> MakeRandomFourier(const GroupDistribution& q,
                                                               int64_t s, int64_t r, bool enumerate,
                                                               double sigma, uint64_t seed) {
  TemplateOptions t;
  t.kind = TemplateKind::kGaussian;
  t.num_templates = s;
  t.sigma = sigma;
  RandomFourierOptions options;
  options.sigma = sigma;
  auto e = RandomFourierEncoder::Create(options,
                                        Projector::OverBank(MakeBank(q, t, r, enumerate, seed)));
  EXPECT_TRUE(e.ok()) << e.status();
  return std::move(*e);
}

// Nyström over the given landmarks transformed by q's elements.
inline std::unique_ptr<NystromEncoder> MakeNystrom(const GroupDistribution& q,
                                                   const FloatMatrix& landmarks, int64_t r,
                                                   bool enumerate, double sigma, uint64_t seed) {
  NystromOptions options;
  options.sigma = sigma;
  auto projection = ComputeNystromProjection(landmarks, options);
  EXPECT_TRUE(projection.ok()) << projection.status();
  Rng rng(seed);
  auto bank = TemplateBank::Sample(landmarks, q, r, enumerate, rng);
  EXPECT_TRUE(bank.ok()) << bank.status();
  auto e = NystromEncoder::Create(options, Projector::OverBank(*bank), *projection);
  EXPECT_TRUE(e.ok()) << e.status();
  return std::move(*e);
}

}  // namespace invariant::testing

#endif  // INVARIANT_TESTS_UNIT_ENCODERS_TEST_UTIL_H_
