// The "patch" encoder kind (core/model/patch_kind.h): config checks name the
// field, a drawn model saves and loads back to the same features bit for
// bit, the draw is a function of the seed (what sharded runs rely on), the
// whitening is folded into the bank and the bias, and the average over an
// image group makes the features of an image and of its mirror the same.
#include "core/model/patch_kind.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/groups/dihedral.h"
#include "core/model/encoder_kinds.h"
#include "core/model/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/synthetic_images.h"

namespace invariant {
namespace {

using testing::BarImages;
using ::testing::HasSubstr;
using testing::kBarImageDim;

// k = 3 patches of 8 × 8 × 3 images, pooled over the left–right mirror.
v1::EncoderSpec PatchSpec() {
  v1::EncoderSpec spec;
  v1::PatchParams* p = spec.mutable_patch();
  p->set_patch_size(3);
  p->set_num_templates(6);
  p->set_normalize_patches(true);
  p->set_whiten(true);
  p->set_kmeans_iterations(2);
  p->set_statistics_patches(1500);
  v1::DihedralGroup* g = spec.mutable_group()->mutable_dihedral();
  g->set_height(3);
  g->set_width(3);
  g->set_channels(3);
  g->set_flips(true);
  spec.mutable_group()->set_enumerate(true);
  for (int64_t side : {8, 8, 3}) spec.add_input_shape(side);
  spec.set_seed(11);
  return spec;
}

absl::Status Validate(v1::EncoderSpec& spec) {
  absl::StatusOr<const EncoderKind*> kind = FindEncoderKind(spec, "encoder");
  if (!kind.ok()) return kind.status();
  return (*kind)->validate_config(spec);
}

std::string ErrorOf(v1::EncoderSpec spec) { return std::string(Validate(spec).message()); }

// Training data over BarImages(n): draw_rows picks rows by a seeded shuffle.
EncoderTrainingData BarData(const std::vector<float>& x, int64_t n, int* calls) {
  EncoderTrainingData data;
  data.input_dim = kBarImageDim;
  data.train_rows = n;
  data.draw_rows = [&x, n, calls](int64_t m, uint64_t seed) -> absl::StatusOr<FloatMatrix> {
    ++*calls;
    FloatMatrix rows = FloatMatrix::Zeros(m, kBarImageDim);
    Rng rng(seed);
    for (int64_t i = 0; i < m; ++i) {
      const int64_t pick = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)));
      std::memcpy(rows.mutable_row(i), x.data() + pick * kBarImageDim,
                  sizeof(float) * kBarImageDim);
    }
    return rows;
  };
  return data;
}

absl::StatusOr<std::shared_ptr<const Model>> DrawModel(v1::EncoderSpec spec,
                                                       const std::vector<float>& x, int64_t n,
                                                       int* calls) {
  absl::Status valid = Validate(spec);
  if (!valid.ok()) return valid;
  ModelTensors tensors;
  absl::Status drawn = DrawPatchEncoder(spec, BarData(x, n, calls), tensors);
  if (!drawn.ok()) return drawn;
  v1::Manifest manifest;
  manifest.set_format_version(1);
  manifest.set_model_name("patch");
  manifest.set_version(1);
  manifest.set_input_dim(kBarImageDim);
  *manifest.mutable_encoder() = spec;
  return Model::Assemble(manifest, tensors);
}

TEST(PatchKindTest, ValidationFillsTheDefaults) {
  v1::EncoderSpec spec = PatchSpec();
  ASSERT_TRUE(Validate(spec).ok()) << Validate(spec);
  const v1::PatchParams& p = spec.patch();
  EXPECT_EQ(p.stride(), 1);
  EXPECT_EQ(p.pool_grid(), 2);
  EXPECT_EQ(p.response(), v1::PatchParams::RESPONSE_THRESHOLD);
  EXPECT_EQ(p.threshold(), 0.25);
  EXPECT_EQ(p.template_kind(), v1::TEMPLATE_DATA);
  EXPECT_EQ(p.contrast_epsilon(), 1e-3);
  EXPECT_EQ(p.whitening_epsilon(), 0.1);
  EXPECT_EQ(p.statistics_patches(), 1500);
  v1::EncoderSpec fourier = PatchSpec();
  fourier.mutable_patch()->set_response(v1::PatchParams::RESPONSE_FOURIER);
  fourier.mutable_patch()->set_kmeans_iterations(0);
  fourier.mutable_patch()->set_sigma(2.0);
  ASSERT_TRUE(Validate(fourier).ok()) << Validate(fourier);
  EXPECT_EQ(fourier.patch().template_kind(), v1::TEMPLATE_GAUSSIAN);
  EXPECT_EQ(EncoderKindName(fourier), "patch");
}

TEST(PatchKindTest, ValidationErrorsNameTheField) {
  v1::EncoderSpec spec = PatchSpec();
  spec.mutable_patch()->set_patch_size(0);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.patch_size must be in [1, 8], got 0"));
  spec = PatchSpec();
  spec.mutable_patch()->set_patch_size(9);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.patch_size"));
  spec = PatchSpec();
  spec.clear_input_shape();
  spec.add_input_shape(kBarImageDim);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.input_shape must be [H, W, C]"));
  spec = PatchSpec();
  spec.mutable_patch()->set_pool_grid(7);  // 6 × 6 positions
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.pool_grid must be in [1, 6], got 7"));
  spec = PatchSpec();
  spec.mutable_patch()->set_num_templates(0);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.num_templates"));
  spec = PatchSpec();
  spec.mutable_patch()->set_response(v1::PatchParams::RESPONSE_FOURIER);
  spec.mutable_patch()->set_kmeans_iterations(0);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.sigma (RESPONSE_FOURIER) must be > 0"));
  spec = PatchSpec();
  spec.mutable_patch()->set_response(v1::PatchParams::RESPONSE_CDF);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.num_bins"));
  spec = PatchSpec();
  spec.mutable_patch()->set_threshold(-1);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.threshold"));
  spec = PatchSpec();
  spec.mutable_patch()->set_template_kind(v1::TEMPLATE_GAUSSIAN_REJECTION);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.template_kind"));
  spec = PatchSpec();
  spec.mutable_patch()->set_template_kind(v1::TEMPLATE_SPHERE);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.kmeans_iterations applies to TEMPLATE_DATA"));
  spec = PatchSpec();
  spec.mutable_patch()->set_statistics_patches(3);  // fewer than the 6 templates
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.statistics_patches"));
  spec = PatchSpec();  // 10⁷ patches of 31 × 31 × 3: 29 · 10⁹ floats
  spec.clear_input_shape();
  for (int64_t side : {32, 32, 3}) spec.add_input_shape(side);
  spec.mutable_patch()->set_patch_size(31);  // 2 × 2 positions
  spec.mutable_patch()->set_statistics_patches(10000000);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.statistics_patches × k·k·C must be at most"));
  spec = PatchSpec();
  spec.mutable_patch()->set_whitening_epsilon(-0.1);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.whitening_epsilon"));
  // The group acts on patches, not on the input rows.
  spec = PatchSpec();
  spec.mutable_group()->mutable_dihedral()->set_height(8);
  spec.mutable_group()->mutable_dihedral()->set_width(8);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.group must act on patches of k·k·C = 27 values"));
  spec = PatchSpec();
  spec.mutable_group()->set_placement(v1::GroupSpec::PLACEMENT_INPUT);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("PLACEMENT_INPUT"));
  EXPECT_EQ(Validate(spec).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PatchKindTest, DrawSaveLoadGivesTheSameFeaturesBitForBit) {
  const int64_t n = 200;
  const testing::BarImageSet images = BarImages(n, 1);
  int calls = 0;
  auto model = DrawModel(PatchSpec(), images.x, n, &calls);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(calls, 1);  // the statistics images, read once
  const v1::Manifest& m = (*model)->manifest();
  EXPECT_EQ(m.encoder().patch().num_group_elements(), 2);  // e and the mirror
  EXPECT_EQ((*model)->feature_dim(), 4 * 2 * 6);           // G² · f · m
  EXPECT_EQ((*model)->tensors().f32.at("encoder/bank").rows(), 6 * 2);
  EXPECT_EQ((*model)->tensors().f32.at("encoder/bank").cols(), 27);
  const FloatMatrix& bias = (*model)->tensors().f32.at("encoder/bias");
  ASSERT_EQ(bias.cols(), 6);
  double bias_norm = 0;
  for (int64_t j = 0; j < 6; ++j) bias_norm += std::abs(bias.data()[j]);
  EXPECT_GT(bias_norm, 0);  // −⟨w_j, μ⟩ with the whitening folded in

  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("patch_kind_test_", getpid(), ".bundle"))
                               .string();
  ASSERT_TRUE((*model)->Save(path).ok());
  auto loaded = Model::Load(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const int64_t rows = 13;
  std::vector<float> a(static_cast<size_t>(rows * (*model)->feature_dim()));
  std::vector<float> b(a.size());
  (*model)->Featurize(rows, images.x.data(), a.data());
  (*loaded)->Featurize(rows, images.x.data(), b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  double energy = 0;
  for (float v : a) energy += v;
  EXPECT_GT(energy, 0);

  // The same spec and data draw the same bank and bias: every shard of a
  // sharded run rebuilds this feature map.
  auto again = DrawModel(PatchSpec(), images.x, n, &calls);
  ASSERT_TRUE(again.ok()) << again.status();
  for (const char* name : {"encoder/bank", "encoder/bias"}) {
    const FloatMatrix& u = (*model)->tensors().f32.at(name);
    const FloatMatrix& v = (*again)->tensors().f32.at(name);
    ASSERT_EQ(u.size(), v.size()) << name;
    EXPECT_EQ(std::memcmp(u.data(), v.data(), u.bytes()), 0) << name;
  }
}

TEST(PatchKindTest, RandomTemplatesWithoutWhiteningReadNoTrainingImages) {
  v1::EncoderSpec spec = PatchSpec();
  spec.mutable_patch()->set_whiten(false);
  spec.mutable_patch()->set_kmeans_iterations(0);
  spec.mutable_patch()->set_response(v1::PatchParams::RESPONSE_FOURIER);
  spec.mutable_patch()->set_sigma(3.0);
  const testing::BarImageSet images = BarImages(20, 2);
  int calls = 0;
  auto model = DrawModel(spec, images.x, 20, &calls);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(calls, 0);
  const FloatMatrix& bias = (*model)->tensors().f32.at("encoder/bias");
  for (int64_t j = 0; j < bias.cols(); ++j) EXPECT_EQ(bias.data()[j], 0.f);
  // A bundle without its bias is refused naming the tensor.
  ModelTensors t = (*model)->tensors();
  t.f32.erase("encoder/bias");
  absl::Status missing = Model::Assemble((*model)->manifest(), t).status();
  EXPECT_THAT(std::string(missing.message()), HasSubstr("missing tensor 'encoder/bias'"));
  v1::Manifest wrong = (*model)->manifest();
  wrong.set_input_dim(kBarImageDim - 3);
  EXPECT_THAT(std::string(Model::Assemble(wrong, (*model)->tensors()).status().message()),
              HasSubstr("input_dim is 189"));
}

// The image's left–right mirror, 8 × 8 × 3 (BarImages' shape).
v1::GroupSpec ImageMirror() {
  v1::GroupSpec g;
  g.mutable_dihedral()->set_height(8);
  g.mutable_dihedral()->set_width(8);
  g.mutable_dihedral()->set_channels(3);
  g.mutable_dihedral()->set_flips(true);
  g.set_enumerate(true);
  return g;
}

// Averaged over the mirror of the whole image, an image and its mirror get
// the same features bit for bit (two terms summed in either order), through
// a save and a load; without the average they differ.
TEST(PatchKindTest, AnImageGroupAverageIsExactlyInvariant) {
  const int64_t n = 120;
  const testing::BarImageSet images = BarImages(n, 3);
  v1::EncoderSpec spec = PatchSpec();
  spec.clear_group();  // no group on patches: the mirror acts on the image only
  spec.mutable_group()->mutable_identity()->set_dim(27);
  spec.mutable_patch()->set_num_group_elements(1);
  v1::EncoderSpec plain_spec = spec;
  *spec.mutable_patch()->mutable_image_group() = ImageMirror();
  int calls = 0;
  auto model = DrawModel(spec, images.x, n, &calls);
  auto plain = DrawModel(plain_spec, images.x, n, &calls);
  ASSERT_TRUE(model.ok() && plain.ok()) << model.status() << plain.status();
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("patch_kind_image_group_", getpid(), ".bundle"))
                               .string();
  ASSERT_TRUE((*model)->Save(path).ok());
  auto loaded = Model::Load(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const int64_t rows = 9, d = (*model)->feature_dim();
  std::vector<float> mirrored(static_cast<size_t>(rows * kBarImageDim));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t y = 0; y < 8; ++y) {
      for (int64_t x = 0; x < 8; ++x) {
        for (int64_t c = 0; c < 3; ++c) {
          mirrored[static_cast<size_t>(((i * 8 + y) * 8 + x) * 3 + c)] =
              images.x[static_cast<size_t>(((i * 8 + y) * 8 + (7 - x)) * 3 + c)];
        }
      }
    }
  }
  std::vector<float> a(static_cast<size_t>(rows * d)), b(a.size()), c(a.size()), e(a.size());
  (*loaded)->Featurize(rows, images.x.data(), a.data());
  (*loaded)->Featurize(rows, mirrored.data(), b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  // The average is of the plain map (same seed, same bank) at x and at its mirror.
  (*plain)->Featurize(rows, images.x.data(), c.data());
  (*plain)->Featurize(rows, mirrored.data(), e.data());
  double moved = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    moved = std::max(moved, static_cast<double>(std::fabs(c[k] - e[k])));
    EXPECT_EQ(a[k], (c[k] + e[k]) * 0.5f) << k;
  }
  EXPECT_GT(moved, 1e-3);  // the plain map is not mirror-invariant
  // One image at a time gives the rows of the batch, bit for bit (the
  // inner encoder sees 2 rows, then 2·9).
  std::vector<float> one(static_cast<size_t>(d));
  for (int64_t i = 0; i < rows; ++i) {
    (*loaded)->Featurize(1, images.x.data() + i * kBarImageDim, one.data());
    EXPECT_EQ(std::memcmp(one.data(), a.data() + i * d, one.size() * sizeof(float)), 0) << i;
  }
}

// All eight turns and mirrors of the square image (turns: true): the
// features of every turned or mirrored image equal the image's up to float
// summation order (eight terms summed in another order).
TEST(PatchKindTest, AllOfD4OnTheImageIsInvariantToFloatOrder) {
  const int64_t n = 120;
  const testing::BarImageSet images = BarImages(n, 4);
  v1::EncoderSpec spec = PatchSpec();
  *spec.mutable_patch()->mutable_image_group() = ImageMirror();
  spec.mutable_patch()->mutable_image_group()->mutable_dihedral()->set_turns(true);
  int calls = 0;
  auto model = DrawModel(spec, images.x, n, &calls);
  ASSERT_TRUE(model.ok()) << model.status();
  const int64_t rows = 5, d = (*model)->feature_dim();
  const DihedralAction action(8, 8, 3);
  std::vector<float> a(static_cast<size_t>(rows * d)), b(a.size());
  std::vector<float> moved(static_cast<size_t>(rows * kBarImageDim));
  (*model)->Featurize(rows, images.x.data(), a.data());
  double scale = 0;
  for (float v : a) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  ASSERT_GT(scale, 0);
  for (int turns = 0; turns < 4; ++turns) {
    for (bool mirror : {false, true}) {
      action.Apply(DihedralAction::Element(turns, mirror), rows, images.x.data(), moved.data());
      (*model)->Featurize(rows, moved.data(), b.data());
      for (size_t k = 0; k < a.size(); ++k) {
        ASSERT_NEAR(a[k], b[k], 1e-5 * scale) << turns << " " << mirror << " " << k;
      }
    }
  }
}

TEST(PatchKindTest, AnImageGroupMustBeFiniteEnumeratedAndOfTheImage) {
  v1::EncoderSpec spec = PatchSpec();
  *spec.mutable_patch()->mutable_image_group() = ImageMirror();
  ASSERT_TRUE(Validate(spec).ok()) << Validate(spec);
  spec.mutable_patch()->mutable_image_group()->set_enumerate(false);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.image_group must be a dihedral group of "
                                       "the image with enumerate: true"));
  spec = PatchSpec();
  *spec.mutable_patch()->mutable_image_group() = ImageMirror();
  spec.mutable_patch()->mutable_image_group()->mutable_dihedral()->set_width(4);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.image_group must act on the whole image: "
                                       "dihedral height, width, channels must be the input_shape "
                                       "[8, 8, 3], got [8, 4, 3]"));
  // The same H·W·C in another shape would mirror the colours of each row.
  spec.mutable_patch()->mutable_image_group()->mutable_dihedral()->set_width(24);
  spec.mutable_patch()->mutable_image_group()->mutable_dihedral()->set_channels(1);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("got [8, 24, 1]"));
  spec = PatchSpec();
  *spec.mutable_patch()->mutable_image_group() = ImageMirror();
  spec.mutable_patch()->mutable_image_group()->set_placement(v1::GroupSpec::PLACEMENT_TEMPLATES);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("placement must be PLACEMENT_AUTO or PLACEMENT_INPUT"));
  spec = PatchSpec();  // cyclic shifts of the pixels: not offered
  spec.mutable_patch()->mutable_image_group()->mutable_cyclic_shift()->set_length(192);
  spec.mutable_patch()->mutable_image_group()->set_enumerate(true);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.image_group must be a dihedral group"));
  spec = PatchSpec();
  *spec.mutable_patch()->mutable_image_group() = ImageMirror();
  spec.mutable_patch()->mutable_image_group()->mutable_dihedral()->set_flips(false);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.image_group: group.dihedral must set turns, "
                                       "flips or both"));
  EXPECT_EQ(Validate(spec).code(), absl::StatusCode::kInvalidArgument);
}

// A loaded manifest is checked as a training config is, before anything is
// sized from it: a crafted input_shape whose product wraps around to
// input_dim, a CDF with 2³¹ − 1 bins, a stored mirror group element that is
// not one (a quarter turn of a flips-only group).
TEST(PatchKindTest, ACraftedManifestIsRefusedNamingTheField) {
  const int64_t n = 40;
  const testing::BarImageSet images = BarImages(n, 3);
  int calls = 0;
  auto model = DrawModel(PatchSpec(), images.x, n, &calls);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelTensors& t = (*model)->tensors();

  v1::Manifest wrapped = (*model)->manifest();
  wrapped.mutable_encoder()->clear_input_shape();
  for (int64_t side : {int64_t{16}, (int64_t{1} << 60) + 49, int64_t{1}}) {
    wrapped.mutable_encoder()->add_input_shape(side);
  }
  EXPECT_THAT(std::string(Model::Assemble(wrapped, t).status().message()),
              HasSubstr("encoder.input_shape[1] (W) must be in [1, 16384]"));

  v1::Manifest bins = (*model)->manifest();
  bins.mutable_encoder()->mutable_patch()->set_response(v1::PatchParams::RESPONSE_CDF);
  bins.mutable_encoder()->mutable_patch()->set_num_bins(2147483647);
  EXPECT_THAT(std::string(Model::Assemble(bins, t).status().message()),
              HasSubstr("encoder.patch.num_bins must be in [1, 1000]"));
}

TEST(PatchKindTest, StoredElementsOfAFiniteGroupMustBeItsElements) {
  // An input-placement CDF model over the mirror group of 4 × 6 images
  // (not square: a quarter turn has no meaning), with its two elements
  // stored; a quarter turn in their place is refused.
  v1::EncoderSpec spec;
  spec.mutable_cdf()->set_num_templates(3);
  spec.mutable_cdf()->set_num_bins(2);
  spec.mutable_cdf()->set_template_kind(v1::TEMPLATE_SPHERE);
  v1::DihedralGroup* g = spec.mutable_group()->mutable_dihedral();
  g->set_height(4);
  g->set_width(6);
  g->set_channels(1);
  g->set_flips(true);
  spec.mutable_group()->set_enumerate(true);
  spec.mutable_group()->set_placement(v1::GroupSpec::PLACEMENT_INPUT);
  spec.set_seed(5);
  ASSERT_TRUE(Validate(spec).ok()) << Validate(spec);
  EncoderTrainingData data;
  data.input_dim = 24;
  data.train_rows = 10;
  ModelTensors t;
  const absl::StatusOr<const EncoderKind*> kind = FindEncoderKind(spec, "encoder");
  ASSERT_TRUE(kind.ok());
  ASSERT_TRUE((*kind)->draw(spec, data, t).ok());
  ASSERT_EQ(t.f64.count("encoder/group_elements"), 1u);
  v1::Manifest manifest;
  manifest.set_format_version(1);
  manifest.set_model_name("mirror");
  manifest.set_version(1);
  manifest.set_input_dim(24);
  *manifest.mutable_encoder() = spec;
  ASSERT_TRUE(Model::Assemble(manifest, t).ok()) << Model::Assemble(manifest, t).status();
  DoubleMatrix& elements = t.f64.at("encoder/group_elements");
  ASSERT_EQ(elements.rows(), 2);
  elements.mutable_row(1)[0] = 1;  // a quarter turn
  EXPECT_THAT(std::string(Model::Assemble(manifest, t).status().message()),
              HasSubstr("tensor 'encoder/group_elements' row 1 is not an element of"));
}

// Tempo-warped copies: 4 × 3 patches (rows × columns) of the 8 × 8 × 3 bar
// images read as spectrograms, one row of bank and bias per copy.
v1::EncoderSpec TempoSpec() {
  v1::EncoderSpec spec = PatchSpec();
  v1::PatchParams* p = spec.mutable_patch();
  p->set_patch_size(0);
  p->set_patch_height(4);
  p->set_patch_width(3);
  p->set_padding(v1::PatchParams::PADDING_ZERO);
  p->set_pool_rows(2);
  p->set_pool_cols(1);
  for (double a : {1.0, 0.5, 2.0}) p->add_tempo_factors(a);
  spec.mutable_group()->Clear();
  spec.mutable_group()->mutable_identity()->set_dim(4 * 3 * 3);
  return spec;
}

TEST(PatchKindTest, TempoFactorsDrawOneWarpedCopyPerFactor) {
  const int64_t n = 200;
  const testing::BarImageSet images = BarImages(n, 1);
  int calls = 0;
  auto model = DrawModel(TempoSpec(), images.x, n, &calls);
  ASSERT_TRUE(model.ok()) << model.status();
  const v1::PatchParams& p = (*model)->manifest().encoder().patch();
  EXPECT_EQ(p.num_group_elements(), 3);
  EXPECT_EQ((*model)->feature_dim(), 2 * 2 * 6);  // G_y·G_x · f · m
  const FloatMatrix& bank = (*model)->tensors().f32.at("encoder/bank");
  const FloatMatrix& bias = (*model)->tensors().f32.at("encoder/bias");
  ASSERT_EQ(bank.rows(), 6 * 3);
  ASSERT_EQ(bank.cols(), 36);
  ASSERT_EQ(bias.cols(), 6 * 3);  // −⟨copy, μ⟩ per copy
  for (int64_t j = 0; j < 6; ++j) {
    double norm[3] = {0, 0, 0}, differ = 0;
    for (int64_t k = 0; k < 3; ++k) {
      for (int64_t c = 0; c < 36; ++c)
        norm[k] += double(bank.row(j * 3 + k)[c]) * bank.row(j * 3 + k)[c];
    }
    for (int64_t c = 0; c < 36; ++c)
      differ += std::abs(bank.row(j * 3 + 1)[c] - bank.row(j * 3)[c]);
    EXPECT_NEAR(norm[1], norm[0], 1e-4 * norm[0])
        << "template " << j;  // rescaled to the filter's length
    EXPECT_NEAR(norm[2], norm[0], 1e-4 * norm[0]) << "template " << j;
    EXPECT_GT(differ, 1e-3) << "template " << j;
    // Factor 2 reads column c + 2(x − c), c = 1: the centre column alone,
    // scaled by one positive factor; the outer columns are zero.
    double dot = 0, sq = 0;
    for (int64_t y = 0; y < 4; ++y) {
      for (int64_t ch = 0; ch < 3; ++ch) {
        const double f1 = bank.row(j * 3)[(y * 3 + 1) * 3 + ch];
        const double f2 = bank.row(j * 3 + 2)[(y * 3 + 1) * 3 + ch];
        dot += f1 * f2;
        sq += f1 * f1;
        EXPECT_EQ(bank.row(j * 3 + 2)[(y * 3 + 0) * 3 + ch], 0.f);
        EXPECT_EQ(bank.row(j * 3 + 2)[(y * 3 + 2) * 3 + ch], 0.f);
      }
    }
    const double scale = dot / sq;
    EXPECT_GT(scale, 1.0);
    for (int64_t y = 0; y < 4; ++y) {
      for (int64_t ch = 0; ch < 3; ++ch) {
        const double f1 = bank.row(j * 3)[(y * 3 + 1) * 3 + ch];
        EXPECT_NEAR(bank.row(j * 3 + 2)[(y * 3 + 1) * 3 + ch], scale * f1, 1e-4);
      }
    }
  }
  // Saved and loaded, the same features.
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("patch_kind_tempo_", getpid(), ".bundle"))
                               .string();
  ASSERT_TRUE((*model)->Save(path).ok());
  auto loaded = Model::Load(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::vector<float> a(static_cast<size_t>(5 * (*model)->feature_dim())), b(a.size());
  (*model)->Featurize(5, images.x.data(), a.data());
  (*loaded)->Featurize(5, images.x.data(), b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(PatchKindTest, SpectrogramFieldsAreCheckedNamingTheField) {
  v1::EncoderSpec spec = TempoSpec();
  spec.mutable_patch()->set_tempo_factors(1, 1.0);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.tempo_factors must be distinct"));
  spec = TempoSpec();
  spec.mutable_patch()->set_tempo_factors(2, 8.0);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.tempo_factors[2] must be in [0.25, 4]"));
  spec = TempoSpec();
  spec.mutable_group()->Clear();
  spec.mutable_group()->mutable_dihedral()->set_height(4);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.group must be the identity"));
  spec = TempoSpec();
  spec.mutable_patch()->set_patch_height(9);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.patch_height must be in [1, 8], got 9"));
  spec = TempoSpec();
  spec.mutable_patch()->set_pad_cols(3);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.pad_cols must be in [0, 2], got 3"));
  spec = TempoSpec();
  spec.mutable_patch()->set_response(v1::PatchParams::RESPONSE_CDF);
  spec.mutable_patch()->set_num_bins(4);
  spec.mutable_patch()->set_pooling(v1::PatchParams::POOLING_MAX);
  EXPECT_THAT(ErrorOf(spec),
              HasSubstr("encoder.patch.pooling POOLING_MAX applies to RESPONSE_THRESHOLD only"));
  spec = TempoSpec();
  spec.mutable_patch()->set_pool_rows(99);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("encoder.patch.pool_rows must be in [1, 11], got 99"));
}

}  // namespace
}  // namespace invariant
