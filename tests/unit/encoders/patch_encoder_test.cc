#include "core/encoders/patch_encoder.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/bf16.h"
#include "core/base/kernel_path.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "core/encoders/template_bank.h"
#include "core/groups/group_factory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const GroupDistribution> Dihedral(int64_t k, int64_t c, bool turns, bool flips) {
  v1::GroupSpec spec;
  spec.mutable_dihedral()->set_height(static_cast<int>(k));
  spec.mutable_dihedral()->set_width(static_cast<int>(k));
  spec.mutable_dihedral()->set_channels(static_cast<int>(c));
  spec.mutable_dihedral()->set_turns(turns);
  spec.mutable_dihedral()->set_flips(flips);
  auto q = MakeGroupDistribution(spec);
  EXPECT_TRUE(q.ok()) << q.status();
  return std::shared_ptr<const GroupDistribution>(std::move(*q));
}

FloatMatrix Gaussian(int64_t rows, int64_t cols, double scale, uint64_t seed) {
  Rng rng(seed);
  FloatMatrix x = FloatMatrix::Zeros(rows, cols);
  for (int64_t i = 0; i < x.size(); ++i)
    x.mutable_data()[i] = static_cast<float>(scale * rng.Normal());
  return x;
}

std::vector<float> Bias(int64_t m, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> b(static_cast<size_t>(m));
  for (float& v : b) v = static_cast<float>(0.3 * rng.Normal());
  return b;
}

// A bank of m Gaussian templates over the dihedral group of k × k × c
// patches: r draws, or all elements when `enumerate`.
TemplateBank DihedralBank(int64_t k, int64_t c, int64_t m, int64_t r, bool enumerate,
                          uint64_t seed) {
  auto q = Dihedral(k, c, true, true);
  const FloatMatrix templates = Gaussian(m, k * k * c, 1.0 / std::sqrt(double(k * k * c)), seed);
  Rng rng(seed + 1);
  auto bank = TemplateBank::Sample(templates, *q, r, enumerate, rng);
  EXPECT_TRUE(bank.ok()) << bank.status();
  return *bank;
}

PatchOptions Options(int64_t side, int64_t c, int64_t k, int64_t stride, int64_t grid,
                     PatchResponse response) {
  PatchOptions o;
  o.geometry = PatchGeometry::Square(side, side, c, k, stride, grid);
  o.response = response;
  o.num_bins = 4;
  o.range = 1.0;
  o.threshold = 0.2;
  return o;
}

std::unique_ptr<PatchEncoder> Make(const PatchOptions& o, Projector projector, uint64_t seed) {
  std::vector<float> bias = Bias(projector.num_templates(), seed);
  auto e = PatchEncoder::Create(o, std::move(projector), std::move(bias));
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? std::move(*e) : nullptr;
}

FloatMatrix EncodeAll(const PatchEncoder& e, const FloatMatrix& x) {
  FloatMatrix out = FloatMatrix::Zeros(x.rows(), e.d_out());
  e.Encode(x.rows(), x.data(), out.mutable_data());
  return out;
}

FloatMatrix EncodePatchesAll(const PatchEncoder& e, const FloatMatrix& p) {
  FloatMatrix out = FloatMatrix::Zeros(p.rows(), e.patch_features());
  e.EncodePatches(p.rows(), p.data(), out.mutable_data());
  return out;
}

// The bank as stored (bf16 rows widened), (m·r) × d, in double.
std::vector<double> BankValues(const Projector& p) {
  std::vector<double> v;
  if (p.bank_dtype() == BankDtype::kBfloat16) {
    for (int64_t i = 0; i < p.rows_bf16().size(); ++i)
      v.push_back(Bf16Value(p.rows_bf16().data()[i]));
  } else {
    for (int64_t i = 0; i < p.rows().size(); ++i) v.push_back(p.rows().data()[i]);
  }
  return v;
}

// The naive encoding of one image, straight from the definition in
// patch_encoder.h, in double; `ambiguous` counts, per output, the CDF
// comparisons whose u lies within 1e-4 of its threshold (float and double
// may disagree there).
std::vector<double> NaiveEncode(const PatchEncoder& e, const float* image,
                                std::vector<int>* ambiguous) {
  const PatchOptions& o = e.options();
  const PatchGeometry& g = o.geometry;
  const int64_t m = e.projector().num_templates(), r = e.projector().num_group_elements();
  const int64_t d = g.patch_dim(), f = e.responses_per_template();
  const std::vector<double> bank = BankValues(e.projector());
  std::vector<double> out(static_cast<size_t>(e.d_out()), 0.0);
  if (ambiguous != nullptr) ambiguous->assign(out.size(), 0);
  std::vector<int64_t> count(static_cast<size_t>(g.num_regions()), 0);
  std::vector<double> p(static_cast<size_t>(d));
  for (int64_t a = 0; a < g.positions_y(); ++a) {
    for (int64_t b = 0; b < g.positions_x(); ++b) {
      for (int64_t dy = 0; dy < g.patch_height; ++dy) {
        for (int64_t dx = 0; dx < g.patch_width; ++dx) {
          for (int64_t c = 0; c < g.channels; ++c) {
            const int64_t y = a * g.stride + dy - g.pad_rows, x = b * g.stride + dx - g.pad_cols;
            const bool inside = y >= 0 && y < g.height && x >= 0 && x < g.width;
            p[static_cast<size_t>((dy * g.patch_width + dx) * g.channels + c)] =
                inside ? image[(y * g.width + x) * g.channels + c] : 0.0;
          }
        }
      }
      if (o.normalize_patches) {
        double mean = 0.0, var = 0.0;
        for (double v : p) mean += v;
        mean /= double(d);
        for (double v : p) var += (v - mean) * (v - mean);
        var /= double(d);
        for (double& v : p) v = (v - mean) / std::sqrt(var + o.contrast_epsilon);
      }
      const int64_t rho =
          (a * g.pool_rows / g.positions_y()) * g.pool_cols + b * g.pool_cols / g.positions_x();
      ++count[static_cast<size_t>(rho)];
      for (int64_t j = 0; j < m; ++j) {
        for (int64_t k = 0; k < r; ++k) {
          const bool per_row = static_cast<int64_t>(e.bias().size()) != m;
          double u = e.bias()[static_cast<size_t>(per_row ? j * r + k : j)];
          for (int64_t t = 0; t < d; ++t)
            u += bank[static_cast<size_t>((j * r + k) * d + t)] * p[static_cast<size_t>(t)];
          for (int64_t c = 0; c < f; ++c) {
            double h = 0.0;
            switch (o.response) {
              case PatchResponse::kFourier:
                h = (c == 0 ? std::cos(u) : std::sin(u)) / std::sqrt(double(m));
                break;
              case PatchResponse::kThreshold:
                h = c == 0 ? std::max(0.0, u - o.threshold) : std::max(0.0, -u - o.threshold);
                break;
              case PatchResponse::kCdf: {
                const double t = o.range * double(c - o.num_bins) / o.num_bins;
                h = u <= t ? 1.0 : 0.0;
                if (ambiguous != nullptr && std::abs(u - t) < 1e-4) {
                  ++(*ambiguous)[static_cast<size_t>((rho * f + c) * m + j)];
                }
                break;
              }
            }
            out[static_cast<size_t>((rho * f + c) * m + j)] += h / double(r);
          }
        }
      }
    }
  }
  for (int64_t rho = 0; rho < g.num_regions(); ++rho) {
    for (int64_t i = 0; i < f * m; ++i)
      out[static_cast<size_t>(rho * f * m + i)] /= double(count[static_cast<size_t>(rho)]);
  }
  return out;
}

void ExpectMatchesNaive(const PatchEncoder& e, const FloatMatrix& images, const std::string& what) {
  const FloatMatrix got = EncodeAll(e, images);
  const int64_t r = e.projector().num_group_elements();
  for (int64_t i = 0; i < images.rows(); ++i) {
    std::vector<int> ambiguous;
    const std::vector<double> want = NaiveEncode(e, images.row(i), &ambiguous);
    const int64_t per_region = e.options().geometry.num_positions();  // an upper bound
    for (int64_t c = 0; c < e.d_out(); ++c) {
      const double slack = ambiguous[static_cast<size_t>(c)] / double(r);  // ≤ a few steps
      ASSERT_NEAR(got.row(i)[c], want[static_cast<size_t>(c)], 1e-5 + slack)
          << what << " image " << i << " feature " << c << " (" << per_region << " positions)";
    }
  }
}

TEST(PatchEncoderTest, MatchesTheNaiveDefinitionForEveryResponse) {
  const FloatMatrix images = Gaussian(3, 9 * 9 * 3, 1.0, 5);
  for (PatchResponse response :
       {PatchResponse::kThreshold, PatchResponse::kFourier, PatchResponse::kCdf}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t grid : {1, 2}) {
        for (bool normalize : {false, true}) {
          PatchOptions o = Options(9, 3, 3, stride, grid, response);
          o.normalize_patches = normalize;
          auto e = Make(o, Projector::OverBank(DihedralBank(3, 3, 13, 3, false, 7)), 9);
          ASSERT_NE(e, nullptr);
          EXPECT_EQ(e->d_out(), grid * grid * e->responses_per_template() * 13);
          ExpectMatchesNaive(*e, images,
                             "response " + std::to_string(int(response)) + " stride " +
                                 std::to_string(stride) + " grid " + std::to_string(grid) +
                                 (normalize ? " normalised" : ""));
        }
      }
    }
  }
}

TEST(PatchEncoderTest, EncodePatchesIsEncodeOfAOnePatchImage) {
  for (PatchResponse response :
       {PatchResponse::kThreshold, PatchResponse::kFourier, PatchResponse::kCdf}) {
    PatchOptions whole = Options(4, 2, 4, 1, 1, response);
    whole.normalize_patches = true;
    const TemplateBank bank = DihedralBank(4, 2, 70, 8, true, 3);
    auto e = Make(whole, Projector::OverBank(bank), 4);
    ASSERT_NE(e, nullptr);
    const FloatMatrix x = Gaussian(60, 32, 1.0, 6);
    const FloatMatrix a = EncodeAll(*e, x), b = EncodePatchesAll(*e, x);
    ASSERT_EQ(a.cols(), b.cols());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.bytes())) << int(response);
  }
}

TEST(PatchEncoderTest, EnumeratedDihedralGroupMakesPatchFeaturesExactlyInvariant) {
  const int64_t k = 4, c = 3, d = k * k * c;
  auto q = Dihedral(k, c, true, true);
  const FloatMatrix patches = Gaussian(20, d, 1.0, 8);
  for (PatchResponse response :
       {PatchResponse::kThreshold, PatchResponse::kFourier, PatchResponse::kCdf}) {
    PatchOptions o = Options(k, c, k, 1, 1, response);
    o.normalize_patches = response == PatchResponse::kThreshold;
    auto e = Make(o, Projector::OverBank(DihedralBank(k, c, 30, 8, true, 11)), 12);
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(e->projector().num_group_elements(), 8);
    const FloatMatrix want = EncodePatchesAll(*e, patches);
    double largest = 0.0;
    for (int64_t i = 0; i < want.size(); ++i)
      largest = std::max(largest, double(std::abs(want.data()[i])));
    EXPECT_GT(largest, 0.01);  // the features are not trivially zero
    for (const GroupElement& g : q->Enumerate()) {
      FloatMatrix moved = FloatMatrix::Zeros(patches.rows(), d);
      q->action().Apply(g, patches.rows(), patches.data(), moved.mutable_data());
      const FloatMatrix got = EncodePatchesAll(*e, moved);
      for (int64_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got.data()[i], want.data()[i],
                    1e-5 * std::max(1.0, std::abs(double(want.data()[i]))))
            << "response " << int(response) << " element " << g.params[0] << "," << g.params[1];
      }
    }
  }
}

TEST(PatchEncoderTest, TurningTheWholeImageLeavesTheFeaturesUnchanged) {
  const int64_t side = 9, c = 2;
  auto image_group = Dihedral(side, c, true, true);
  const FloatMatrix images = Gaussian(2, side * side * c, 1.0, 14);
  for (PatchResponse response : {PatchResponse::kThreshold, PatchResponse::kFourier}) {
    auto e = Make(Options(side, c, 3, 1, 1, response),
                  Projector::OverBank(DihedralBank(3, c, 25, 8, true, 15)), 16);
    ASSERT_NE(e, nullptr);
    const FloatMatrix want = EncodeAll(*e, images);
    for (const GroupElement& g : image_group->Enumerate()) {
      FloatMatrix moved = FloatMatrix::Zeros(images.rows(), images.cols());
      image_group->action().Apply(g, images.rows(), images.data(), moved.mutable_data());
      const FloatMatrix got = EncodeAll(*e, moved);
      for (int64_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got.data()[i], want.data()[i],
                    1e-5 * std::max(1.0, std::abs(double(want.data()[i]))))
            << "response " << int(response) << " element " << g.params[0] << "," << g.params[1];
      }
    }
  }
}

class PatchDeterminismTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ASSERT_TRUE(SetKernelPath(SupportedKernelPaths().front()).ok());
    ResetDefaultThreadPoolForTesting(2);
  }
};

TEST_F(PatchDeterminismTest, SameBitsForEveryBatchThreadCountAndKernelPath) {
  const FloatMatrix images = Gaussian(7, 10 * 10 * 3, 1.0, 17);
  const FloatMatrix patches = Gaussian(101, 4 * 4 * 3, 1.0, 18);
  std::vector<std::unique_ptr<PatchEncoder>> encoders;
  for (PatchResponse response :
       {PatchResponse::kThreshold, PatchResponse::kFourier, PatchResponse::kCdf}) {
    PatchOptions o = Options(10, 3, 4, 2, 2, response);
    o.normalize_patches = response != PatchResponse::kFourier;
    encoders.push_back(Make(o, Projector::OverBank(DihedralBank(4, 3, 37, 2, false, 19)), 20));
    encoders.push_back(Make(
        o, Projector::OverBank(DihedralBank(4, 3, 37, 8, true, 21), BankDtype::kBfloat16), 22));
  }
  ASSERT_TRUE(SetKernelPath(KernelPath::kScalar).ok());
  ResetDefaultThreadPoolForTesting(1);
  std::vector<FloatMatrix> want, want_patches;
  for (const auto& e : encoders) {
    ASSERT_NE(e, nullptr);
    want.push_back(EncodeAll(*e, images));
    want_patches.push_back(EncodePatchesAll(*e, patches));
  }
  for (KernelPath path : SupportedKernelPaths()) {
    ASSERT_TRUE(SetKernelPath(path).ok());
    for (int threads : {1, 2, 3}) {
      ResetDefaultThreadPoolForTesting(threads);
      for (size_t k = 0; k < encoders.size(); ++k) {
        const PatchEncoder& e = *encoders[k];
        // One image at a time, and the whole batch.
        for (int64_t i = 0; i < images.rows(); ++i) {
          std::vector<float> one(static_cast<size_t>(e.d_out()));
          e.Encode(1, images.row(i), one.data());
          ASSERT_EQ(0, std::memcmp(one.data(), want[k].row(i), one.size() * sizeof(float)))
              << "encoder " << k << " path " << KernelPathName(path) << " threads " << threads
              << " image " << i;
        }
        const FloatMatrix all = EncodeAll(e, images);
        ASSERT_EQ(0, std::memcmp(all.data(), want[k].data(), all.bytes())) << k;
        for (int64_t first : {0, 50, 100}) {
          std::vector<float> got(
              static_cast<size_t>((patches.rows() - first) * e.patch_features()));
          e.EncodePatches(patches.rows() - first, patches.row(first), got.data());
          ASSERT_EQ(0,
                    std::memcmp(got.data(), want_patches[k].row(first), got.size() * sizeof(float)))
              << "encoder " << k << " path " << KernelPathName(path) << " threads " << threads
              << " patches from " << first;
        }
      }
    }
  }
}

TEST(PatchEncoderTest, Bf16BankMatchesTheNaiveDefinitionOfTheRoundedBank) {
  const FloatMatrix images = Gaussian(2, 8 * 8 * 1, 1.0, 23);
  const TemplateBank bank = DihedralBank(3, 1, 20, 4, false, 24);
  PatchOptions o = Options(8, 1, 3, 1, 2, PatchResponse::kThreshold);
  auto as_bf16 = Make(o, Projector::OverBank(bank, BankDtype::kBfloat16), 25);
  auto as_float = Make(o, Projector::OverBank(bank), 25);
  ASSERT_NE(as_bf16, nullptr);
  ASSERT_NE(as_float, nullptr);
  EXPECT_EQ(as_bf16->projector().bank_dtype(), BankDtype::kBfloat16);
  ExpectMatchesNaive(*as_bf16, images, "bf16");
  const FloatMatrix a = EncodeAll(*as_bf16, images), b = EncodeAll(*as_float, images);
  double diff = 0.0;
  for (int64_t i = 0; i < a.size(); ++i)
    diff = std::max(diff, double(std::abs(a.data()[i] - b.data()[i])));
  EXPECT_GT(diff, 0.0);
  EXPECT_LT(diff, 2e-2);
}

// NormalizePatch's sums are in a fixed order of partial sums, so every
// kernel path gives the same bits, with and without a tail past the last
// whole group of lanes, and they match the definition in double.
TEST_F(PatchDeterminismTest, NormalizePatchGivesTheSameBitsOnEveryKernelPath) {
  for (int64_t d : {1, 7, 8, 13, 256}) {
    const FloatMatrix x = Gaussian(1, d, 3.0, static_cast<uint64_t>(40 + d));
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < d; ++i) mean += x.row(0)[i];
    mean /= static_cast<double>(d);
    for (int64_t i = 0; i < d; ++i) var += (x.row(0)[i] - mean) * (x.row(0)[i] - mean);
    var /= static_cast<double>(d);
    ASSERT_TRUE(SetKernelPath(KernelPath::kScalar).ok());
    std::vector<float> want(x.row(0), x.row(0) + d);
    NormalizePatch(d, 1e-3, want.data());
    for (int64_t i = 0; i < d; ++i) {
      EXPECT_NEAR(want[static_cast<size_t>(i)], (x.row(0)[i] - mean) / std::sqrt(var + 1e-3), 1e-5)
          << "d " << d << " value " << i;
    }
    for (KernelPath path : SupportedKernelPaths()) {
      ASSERT_TRUE(SetKernelPath(path).ok());
      std::vector<float> got(x.row(0), x.row(0) + d);
      NormalizePatch(d, 1e-3, got.data());
      ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
          << "d " << d << " path " << KernelPathName(path);
    }
  }
}

TEST(PatchEncoderTest, ExtractPatchesAndNormalizePatch) {
  PatchGeometry g = PatchGeometry::Square(3, 4, 2, 2, 2, 1);  // positions 1 × 2
  std::vector<float> image(24);
  for (int i = 0; i < 24; ++i) image[static_cast<size_t>(i)] = float(i);
  std::vector<float> patches(static_cast<size_t>(g.num_positions() * g.patch_dim()));
  ExtractPatches(g, image.data(), patches.data());
  EXPECT_EQ(patches, (std::vector<float>{0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15}));
  std::vector<float> p = {1, 2, 3, 4};
  NormalizePatch(4, 0.0, p.data());
  const float s = 1.f / std::sqrt(1.25f);
  EXPECT_NEAR(p[0], -1.5f * s, 1e-6);
  EXPECT_NEAR(p[3], 1.5f * s, 1e-6);
}

TEST(PatchEncoderTest, CreateRejectsBadOptionsNamingTheField) {
  const TemplateBank bank = DihedralBank(3, 2, 5, 2, false, 30);
  struct Case {
    PatchOptions options;
    std::string message;
  };
  std::vector<Case> cases;
  auto base = [] { return Options(8, 2, 3, 1, 2, PatchResponse::kThreshold); };
  {
    Case c{base(), "patch.patch_size must be at most"};
    c.options.geometry.patch_height = c.options.geometry.patch_width = 9;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.stride must be >= 1, got 0"};
    c.options.geometry.stride = 0;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.pool_grid must be at most"};
    c.options.geometry.pool_rows = c.options.geometry.pool_cols = 7;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.channels must be >= 1, got 0"};
    c.options.geometry.channels = 0;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch: the bank has dimension 18"};
    c.options.geometry.patch_height = c.options.geometry.patch_width = 4;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.num_bins must be >= 1, got 0"};
    c.options.response = PatchResponse::kCdf;
    c.options.num_bins = 0;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.range must be finite and > 0"};
    c.options.response = PatchResponse::kCdf;
    c.options.range = 0.0;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.threshold must be finite and >= 0, got -0.1"};
    c.options.threshold = -0.1;
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.threshold must be finite and >= 0, got nan"};
    c.options.threshold = std::nan("");
    cases.push_back(c);
  }
  {
    Case c{base(), "patch.contrast_epsilon must be finite and > 0"};
    c.options.normalize_patches = true;
    c.options.contrast_epsilon = 0.0;
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    auto e = PatchEncoder::Create(c.options, Projector::OverBank(bank), Bias(5, 1));
    ASSERT_FALSE(e.ok()) << c.message;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(e.status().message()), HasSubstr(c.message));
  }
  auto short_bias = PatchEncoder::Create(base(), Projector::OverBank(bank), Bias(4, 1));
  ASSERT_FALSE(short_bias.ok());
  EXPECT_THAT(std::string(short_bias.status().message()), HasSubstr("bias has 4 values"));
  auto q = Dihedral(3, 2, true, false);
  auto input = Projector::OverInput(Gaussian(5, 18, 1.0, 2), 2, q, 3);
  ASSERT_TRUE(input.ok());
  auto wrong_placement = PatchEncoder::Create(base(), *std::move(input), Bias(5, 1));
  ASSERT_FALSE(wrong_placement.ok());
  EXPECT_THAT(std::string(wrong_placement.status().message()), HasSubstr("placement"));
  auto ok = PatchEncoder::Create(base(), Projector::OverBank(bank), Bias(5, 1));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->kind(), "patch");
  EXPECT_EQ((*ok)->d_in(), 8 * 8 * 2);
  EXPECT_EQ((*ok)->d_out(), 4 * 2 * 5);
  EXPECT_EQ((*ok)->patch_features(), 10);
}

// ---- Spectrogram geometry (docs/math.md §11): rectangular patches, zero
// padding, frequency bands, one bias per bank row.

// A Gaussian bank of m templates × r copies (rows j·r + k) of length d.
Projector GaussianBank(int64_t m, int64_t r, int64_t d, uint64_t seed) {
  FloatMatrix rows = Gaussian(m * r, d, 1.0 / std::sqrt(double(d)), seed);
  auto bank = TemplateBank::FromRows(std::move(rows), m, r);
  EXPECT_TRUE(bank.ok()) << bank.status();
  return Projector::OverBank(*std::move(bank));
}

PatchOptions SpectrogramOptions(PatchResponse response) {
  PatchOptions o;
  o.geometry.height = 12;  // frequency bins
  o.geometry.width = 10;   // frames
  o.geometry.channels = 1;
  o.geometry.patch_height = 4;
  o.geometry.patch_width = 3;
  o.geometry.pad_rows = 3;  // PADDING_ZERO: k_h − 1
  o.geometry.pad_cols = 2;
  o.geometry.pool_rows = 3;  // frequency bands
  o.geometry.pool_cols = 1;
  o.response = response;
  o.num_bins = 5;
  o.range = 1.0;
  o.threshold = 0.1;
  o.normalize_patches = true;
  return o;
}

TEST(PatchEncoderSpectrogramTest, PaddedRectangularBandsMatchTheNaiveDefinition) {
  const FloatMatrix images = Gaussian(3, 12 * 10, 1.0, 21);
  for (PatchResponse response : {PatchResponse::kThreshold, PatchResponse::kCdf}) {
    for (bool per_row_bias : {false, true}) {
      const PatchOptions o = SpectrogramOptions(response);
      ASSERT_EQ(o.geometry.positions_y(), 15);
      ASSERT_EQ(o.geometry.positions_x(), 12);
      const int64_t m = 7, r = 3;
      std::vector<float> bias = Bias(per_row_bias ? m * r : m, 23);
      auto e = PatchEncoder::Create(o, GaussianBank(m, r, 12, 22), std::move(bias));
      ASSERT_TRUE(e.ok()) << e.status();
      EXPECT_EQ((*e)->d_out(), 3 * (*e)->responses_per_template() * m);
      ExpectMatchesNaive(**e, images,
                         "response " + std::to_string(int(response)) +
                             (per_row_bias ? " per-row bias" : " per-template bias"));
    }
  }
}

// An F × T spectrogram that is zero except a random block at (y0, x0).
FloatMatrix BlockSpectrogram(int64_t f, int64_t t, int64_t y0, int64_t x0, uint64_t seed) {
  const FloatMatrix block = Gaussian(1, 6 * 5, 1.0, seed);
  FloatMatrix x = FloatMatrix::Zeros(1, f * t);
  for (int64_t dy = 0; dy < 6; ++dy) {
    for (int64_t dx = 0; dx < 5; ++dx)
      x.mutable_data()[(y0 + dy) * t + x0 + dx] = block.row(0)[dy * 5 + dx];
  }
  return x;
}

TEST(PatchEncoderSpectrogramTest, WholePlanePoolingIsExactlyInvariantToShiftsAwayFromTheEdges) {
  // One region over every position of a zero-padded plane: a translation of
  // content that stays inside the input permutes the patches that see it,
  // and every other patch is zero, so the pooled CDF (counts) is the same
  // bits and the mean responses the same up to float summation order.
  for (PatchResponse response : {PatchResponse::kCdf, PatchResponse::kThreshold}) {
    PatchOptions o = SpectrogramOptions(response);
    o.geometry.height = 20;
    o.geometry.width = 16;
    o.geometry.pool_rows = 1;
    auto e = PatchEncoder::Create(o, GaussianBank(9, 2, 12, 31), Bias(9, 32));
    ASSERT_TRUE(e.ok()) << e.status();
    const FloatMatrix base = EncodeAll(**e, BlockSpectrogram(20, 16, 7, 5, 33));
    for (const auto& [dy, dx] :
         std::vector<std::pair<int, int>>{{1, 0}, {-7, 0}, {7, 3}, {0, -5}, {-4, 6}}) {
      const FloatMatrix moved = EncodeAll(**e, BlockSpectrogram(20, 16, 7 + dy, 5 + dx, 33));
      for (int64_t c = 0; c < (*e)->d_out(); ++c) {
        if (response == PatchResponse::kCdf) {
          ASSERT_EQ(moved.row(0)[c], base.row(0)[c])
              << "shift " << dy << ", " << dx << " feature " << c;
        } else {
          ASSERT_NEAR(moved.row(0)[c], base.row(0)[c], 1e-6) << "shift " << dy << ", " << dx;
        }
      }
    }
    // Frequency bands are not invariant: the same shift moves the pooled
    // responses between bands (the test would pass vacuously otherwise).
    PatchOptions banded = o;
    banded.geometry.pool_rows = 3;
    auto b = PatchEncoder::Create(banded, GaussianBank(9, 2, 12, 31), Bias(9, 32));
    ASSERT_TRUE(b.ok()) << b.status();
    const FloatMatrix b0 = EncodeAll(**b, BlockSpectrogram(20, 16, 7, 5, 33));
    const FloatMatrix b1 = EncodeAll(**b, BlockSpectrogram(20, 16, 0, 5, 33));
    double moved = 0;
    for (int64_t c = 0; c < (*b)->d_out(); ++c) moved += std::abs(b1.row(0)[c] - b0.row(0)[c]);
    EXPECT_GT(moved, 0.1);
  }
}

TEST(PatchEncoderSpectrogramTest, ValidPaddingIsInvariantWhileTheContentStaysAPatchFromTheEdges) {
  PatchOptions o = SpectrogramOptions(PatchResponse::kCdf);
  o.geometry.height = 20;
  o.geometry.width = 16;
  o.geometry.pad_rows = o.geometry.pad_cols = 0;
  o.geometry.pool_rows = 1;
  auto e = PatchEncoder::Create(o, GaussianBank(9, 1, 12, 41), Bias(9, 42));
  ASSERT_TRUE(e.ok()) << e.status();
  // Rows 3..16 and columns 2..13 keep a k − 1 margin around the 6 × 5 block.
  const FloatMatrix base = EncodeAll(**e, BlockSpectrogram(20, 16, 3, 2, 43));
  const FloatMatrix moved = EncodeAll(**e, BlockSpectrogram(20, 16, 11, 9, 43));
  for (int64_t c = 0; c < (*e)->d_out(); ++c) ASSERT_EQ(moved.row(0)[c], base.row(0)[c]) << c;
  // At the edge the patches that overlap the block only in part are lost.
  const FloatMatrix edge = EncodeAll(**e, BlockSpectrogram(20, 16, 0, 2, 43));
  double moved_at_edge = 0;
  for (int64_t c = 0; c < (*e)->d_out(); ++c)
    moved_at_edge += std::abs(edge.row(0)[c] - base.row(0)[c]);
  EXPECT_GT(moved_at_edge, 0.0);
}

TEST(PatchEncoderSpectrogramTest, MaxPoolingKeepsEachRegionsLargestResponse) {
  // r = 1: each feature is the largest per-patch response (EncodePatches)
  // over the region's positions.
  PatchOptions o = SpectrogramOptions(PatchResponse::kThreshold);
  o.max_pooling = true;
  const int64_t m = 5;
  auto e = PatchEncoder::Create(o, GaussianBank(m, 1, 12, 61), Bias(m, 62));
  ASSERT_TRUE(e.ok()) << e.status();
  const PatchGeometry& g = o.geometry;
  const FloatMatrix images = Gaussian(2, g.image_dim(), 1.0, 63);
  const FloatMatrix got = EncodeAll(**e, images);
  const int64_t f = (*e)->responses_per_template();
  for (int64_t i = 0; i < images.rows(); ++i) {
    FloatMatrix patches = FloatMatrix::Zeros(g.num_positions(), g.patch_dim());
    ExtractPatches(g, images.row(i), patches.mutable_data());
    const FloatMatrix phi = EncodePatchesAll(**e, patches);
    std::vector<float> want(static_cast<size_t>((*e)->d_out()), 0.f);
    for (int64_t a = 0; a < g.positions_y(); ++a) {
      for (int64_t b = 0; b < g.positions_x(); ++b) {
        const int64_t rho = g.RegionOf(a, b);
        for (int64_t c = 0; c < f * m; ++c) {
          float& w = want[static_cast<size_t>(rho * f * m + c)];
          w = std::max(w, phi.row(a * g.positions_x() + b)[c]);
        }
      }
    }
    for (int64_t c = 0; c < (*e)->d_out(); ++c) {
      ASSERT_EQ(got.row(i)[c], want[static_cast<size_t>(c)]) << "image " << i << " feature " << c;
    }
  }
  PatchOptions cdf = SpectrogramOptions(PatchResponse::kCdf);
  cdf.max_pooling = true;
  auto refused = PatchEncoder::Create(cdf, GaussianBank(m, 1, 12, 61), Bias(m, 62));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("patch.pooling"));
}

TEST(PatchEncoderSpectrogramTest, RejectsPaddingOfAWholePatch) {
  PatchOptions o = SpectrogramOptions(PatchResponse::kCdf);
  o.geometry.pad_rows = 4;  // k_h = 4
  auto e = PatchEncoder::Create(o, GaussianBank(2, 1, 12, 51), Bias(2, 52));
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("patch.padding"));
  o.geometry.pad_rows = 3;
  auto wrong_bias = PatchEncoder::Create(o, GaussianBank(2, 3, 12, 51), Bias(5, 52));
  ASSERT_FALSE(wrong_bias.ok());
  EXPECT_THAT(std::string(wrong_bias.status().message()), HasSubstr("bias has 5 values"));
}

}  // namespace
}  // namespace invariant
