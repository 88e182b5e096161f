// The invariance certificate: the law it draws from, its scale-free relative
// figure, and `invariant-train certify` on k-fold and rotated-image models.
#include "train/pipeline/certificate.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/base/random.h"
#include "core/groups/group_factory.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using testing::RunOptions;
using testing::TempDir;

constexpr int64_t kAtoms = 5;
constexpr int64_t kDim = kAtoms * kAtoms;

v1::GroupSpec Group(const std::string& text) {
  v1::GroupSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

// n random symmetric 5 × 5 matrices; `sorted`: each already in the order of
// the deterministic sort (rows by descending norm).
FloatMatrix Matrices(int64_t n, bool sorted) {
  FloatMatrix x = FloatMatrix::Zeros(n, kDim);
  Rng rng(17);
  for (int64_t i = 0; i < n; ++i) {
    float* m = x.mutable_row(i);
    for (int64_t a = 0; a < kAtoms; ++a) {
      for (int64_t b = a; b < kAtoms; ++b) {
        m[a * kAtoms + b] = m[b * kAtoms + a] = static_cast<float>(rng.Normal()) + (a == b ? 3 : 0);
      }
    }
  }
  if (!sorted) return x;
  auto sort = MakeGroupDistribution(Group("matrix_permutation { n: 5 sort_rows: true }"));
  EXPECT_TRUE(sort.ok()) << sort.status();
  FloatMatrix out = FloatMatrix::Zeros(n, kDim);
  for (int64_t i = 0; i < n; ++i) {
    Rng unused(0);
    const GroupElement g = (*sort)->SampleFor(x.row(i), 1, unused).at(0);
    (*sort)->action().Apply(g, 1, x.row(i), out.mutable_row(i));
  }
  return out;
}

// A linear predictor that weighs every entry differently: not invariant to
// any permutation.
BatchFunction Linear(double scale = 1, double shift = 0) {
  return [scale, shift](int64_t n, const float* x, float* out) {
    for (int64_t i = 0; i < n; ++i) {
      double s = shift;
      for (int64_t j = 0; j < kDim; ++j) s += scale * std::sin(1.0 + j) * x[i * kDim + j];
      out[i] = static_cast<float>(s);
    }
  };
}

v1::InvarianceCertificate Certify(const BatchFunction& f, const std::string& group,
                                  const FloatMatrix& x) {
  v1::EncoderSpec spec;
  *spec.mutable_group() = Group(group);
  v1::CertificateConfig config;
  config.set_num_points(x.rows());
  config.set_num_group_elements(16);
  auto c = CertifyPredictor(f, 1, spec, x, config, 5);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : v1::InvarianceCertificate();
}

// NoisySort::Sample ignores the input (uniform permutations); the certificate
// draws from the law of each point (SampleFor), so on matrices already in
// sorted order the sort moves nothing, while uniform permutations do.
TEST(CertificateLawTest, NoisySortIsDrawnPerPointNotFromUniformPermutations) {
  const FloatMatrix sorted = Matrices(20, true);
  const auto uniform = Certify(Linear(), "matrix_permutation { n: 5 }", sorted);
  const auto sort = Certify(Linear(), "matrix_permutation { n: 5 sort_rows: true }", sorted);
  const auto noisy =
      Certify(Linear(), "matrix_permutation { n: 5 noisy_sort_sigma: 1e-3 }", sorted);
  const auto wide = Certify(Linear(), "matrix_permutation { n: 5 noisy_sort_sigma: 3 }", sorted);
  EXPECT_GT(uniform.mean_discrepancy(), 0.1);
  EXPECT_THAT(uniform.method(), HasSubstr("all 120 elements of uniform(matrix_permutation(5x5))"));
  EXPECT_EQ(sort.max_discrepancy(), 0.0);
  EXPECT_EQ(sort.num_group_elements(), 1);
  EXPECT_THAT(sort.method(), HasSubstr("1 draw per point from noisy_sort(matrix_permutation(5x5), "
                                       "sigma=0) (the deterministic sort of each point)"));
  EXPECT_LT(noisy.mean_discrepancy(), 0.05 * uniform.mean_discrepancy());
  EXPECT_EQ(noisy.num_group_elements(), 16);
  EXPECT_FALSE(noisy.exhaustive());
  EXPECT_THAT(noisy.method(),
              HasSubstr("16 draws per point from noisy_sort(matrix_permutation(5x5), "
                        "sigma=0.001) (input-dependent"));
  // A wide noise moves rows, but less than uniform permutations do.
  EXPECT_GT(wide.mean_discrepancy(), noisy.mean_discrepancy());
  EXPECT_NE(wide.mean_discrepancy(), uniform.mean_discrepancy());
  // On unsorted points the sort moves them: the certificate checks it.
  EXPECT_GT(Certify(Linear(), "matrix_permutation { n: 5 sort_rows: true }", Matrices(20, false))
                .mean_discrepancy(),
            0.1);
  // The draws are seeded by each point (as the encoder seeds them): the
  // same points in another order give the same certificate.
  FloatMatrix reversed = FloatMatrix::Zeros(sorted.rows(), kDim);
  for (int64_t i = 0; i < sorted.rows(); ++i) {
    std::copy(sorted.row(i), sorted.row(i) + kDim, reversed.mutable_row(sorted.rows() - 1 - i));
  }
  const auto again = Certify(Linear(), "matrix_permutation { n: 5 noisy_sort_sigma: 3 }", reversed);
  EXPECT_NEAR(again.mean_discrepancy(), wide.mean_discrepancy(), 1e-9 * wide.mean_discrepancy());
}

// mean |f(x) − f(g·x)| / mean |f(x) − f(x')|: unchanged when f is scaled and
// shifted (the absolute figures scale), 0 for an invariant f.
TEST(CertificateRelativeTest, IsScaleFreeAndZeroForAnInvariantPredictor) {
  const FloatMatrix x = Matrices(30, false);
  const std::string group = "matrix_permutation { n: 5 }";
  const auto one = Certify(Linear(), group, x);
  const auto scaled = Certify(Linear(40, 7), group, x);
  EXPECT_GT(one.relative_mean_discrepancy(), 0.1);
  EXPECT_NEAR(scaled.mean_discrepancy(), 40 * one.mean_discrepancy(),
              1e-4 * scaled.mean_discrepancy());
  EXPECT_NEAR(scaled.mean_pairwise_difference(), 40 * one.mean_pairwise_difference(),
              1e-4 * scaled.mean_pairwise_difference());
  EXPECT_NEAR(scaled.relative_mean_discrepancy(), one.relative_mean_discrepancy(), 1e-4);
  EXPECT_NEAR(one.relative_mean_discrepancy(),
              one.mean_discrepancy() / one.mean_pairwise_difference(), 1e-12);
  // The trace is invariant to simultaneous row/column permutations.
  BatchFunction trace = [](int64_t n, const float* x, float* out) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = 0;
      for (int64_t a = 0; a < kAtoms; ++a) out[i] += x[i * kDim + a * kAtoms + a];
    }
  };
  const auto invariant = Certify(trace, group, x);
  EXPECT_GT(invariant.mean_pairwise_difference(), 0.1);
  EXPECT_LT(invariant.relative_mean_discrepancy(), 1e-6);
  // One point: no pairs, no scale, no relative figure.
  const auto single = Certify(Linear(), group, Matrices(1, false));
  EXPECT_EQ(single.mean_pairwise_difference(), 0.0);
  EXPECT_EQ(single.relative_mean_discrepancy(), 0.0);
}

constexpr char kCoulombFolds[] = R"pb(
  description: "k-fold certificate"
  data { coulomb { num_molecules: 200 max_atoms: 6 min_atoms: 3 noise_stddev: 0.1 seed: 2 } }
  split { k_fold: 4 seed: 4 }
  encoder {
    random_fourier { num_features: 40 num_group_elements: 4 sigma: 100000 }
    group {
      matrix_permutation { n: 6 noisy_sort_sigma: 1 }
      placement: PLACEMENT_INPUT
    }
    seed: 11
  }
  learner {
    kind: RIDGE
    task: TASK_REGRESSION
    lambda_grid: [ 1e-12, 1e-10, 1e-8 ]
  }
  certificate { num_points: 20 num_group_elements: 4 }
  block_rows: 37
)pb";

// A k-fold config has no test rows: certify checks fold 1's rows, the ones
// the k-fold run certified its model on, and gives the same certificate.
TEST(CertifyTest, CertifiesAKFoldModelOnFoldOneRows) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kCoulombFolds, "folds");
  auto version = RunTraining(o);
  ASSERT_TRUE(version.ok()) << version.status();
  auto model = Model::Load(*version + "/" + kBundleFileName);
  ASSERT_TRUE(model.ok()) << model.status();
  const v1::InvarianceCertificate& trained = (*model)->manifest().certificate();

  auto c = CertifySavedModel(o.config_path, *version);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_points(), 20);
  EXPECT_EQ(c->num_group_elements(), 4);
  EXPECT_THAT(c->method(), HasSubstr("4 draws per point from noisy_sort(matrix_permutation(6x6), "
                                     "sigma=1) (input-dependent"));
  EXPECT_GT(c->mean_pairwise_difference(), 0);
  EXPECT_NEAR(c->mean_discrepancy(), trained.mean_discrepancy(),
              1e-6 * c->mean_pairwise_difference());
  EXPECT_NEAR(c->relative_mean_discrepancy(), trained.relative_mean_discrepancy(), 1e-6);

  // The rows: the first 20 of fold 1 in training order.
  auto config = ParseTrainConfig(kCoulombFolds, "test");
  ASSERT_TRUE(config.ok()) << config.status();
  auto plan = PlanData(*config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto rows = CertificationRows(*plan, 1000);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->rows(), 50);
  EXPECT_EQ(rows->cols(), 36);
}

TEST(CertifyTest, CertificationRowsAreTheTestRowsOfAPlainSplit) {
  auto config = ParseTrainConfig(
      absl::StrReplaceAll(kCoulombFolds, {{"k_fold: 4", "train: 100 validation: 20 test: 30"}}),
      "test");
  ASSERT_TRUE(config.ok()) << config.status();
  auto plan = PlanData(*config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto rows = CertificationRows(*plan, 25);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->rows(), 25);
  for (int64_t i = 0; i < 25 * 36; ++i) ASSERT_EQ(rows->data()[i], plan->test.x.data()[i]) << i;
}

// Rotated Fashion-MNIST (the dataset-fashion-mnist build dependency): a raw
// random Fourier model and an LGIKA-RF model averaged over 16 rotations,
// both certified against uniform rotations. Their absolute discrepancies are
// in the units of their own scores; the relative one compares them.
constexpr char kUniformRotation[] =
    "image { height: 28 width: 28 channels: 1 "
    "rotation { uniform { low: 0 high: 6.283185307179586 } }";

// The config of a rotated Fashion-MNIST run with this random Fourier map and
// group; every run is certified against uniform rotations.
std::string RotatedConfig(const std::string& random_fourier, const std::string& group) {
  return absl::StrCat(
      "data { fashion_mnist {} rotated { enabled: true seed: 3 } }\n"
      "split { train: 600 validation: 200 test: 200 seed: 1 }\n"
      "preprocess { l2_normalize: true }\n"
      "encoder { random_fourier { ",
      random_fourier, " } group { ", group,
      " } seed: 5 }\n"
      "learner { kind: RIDGE task: TASK_CLASSIFICATION }\n"
      "certificate { num_points: 60 num_group_elements: 8 group { ",
      kUniformRotation, " } } }\n");
}

TEST(CertifyTest, RelativeCertificateOfAPlainModelIsLargerOnRotatedImages) {
  TempDir dir;
  const std::string invariant_config = RotatedConfig(
      "num_features: 200 num_group_elements: 16 sigma: 0.4",
      absl::StrCat(kUniformRotation, " stratified_rotation: true } placement: PLACEMENT_INPUT"));
  const std::string raw =
      RotatedConfig("num_features: 200 num_group_elements: 1 sigma: 0.4", "identity { dim: 784 }");
  auto invariant = RunTraining(RunOptions(dir, invariant_config, "invariant"));
  auto plain = RunTraining(RunOptions(dir, raw, "plain"));
  ASSERT_TRUE(invariant.ok() && plain.ok()) << invariant.status() << plain.status();
  const TrainOptions o = RunOptions(dir, invariant_config, "unused");
  auto inv = CertifySavedModel(o.config_path, *invariant);
  auto raw_cert = CertifySavedModel(o.config_path, *plain);
  ASSERT_TRUE(inv.ok() && raw_cert.ok()) << inv.status() << raw_cert.status();
  EXPECT_THAT(inv->method(), HasSubstr("8 elements drawn from"));
  EXPECT_EQ(inv->method(), raw_cert->method());
  std::printf("relative mean discrepancy: raw %g (%g / %g), invariant %g (%g / %g)\n",
              raw_cert->relative_mean_discrepancy(), raw_cert->mean_discrepancy(),
              raw_cert->mean_pairwise_difference(), inv->relative_mean_discrepancy(),
              inv->mean_discrepancy(), inv->mean_pairwise_difference());
  EXPECT_GT(raw_cert->relative_mean_discrepancy(), 0.5);
  // Measured: raw 0.68 (0.26 / 0.38), invariant 0.33 (0.18 / 0.53).
  EXPECT_GT(raw_cert->relative_mean_discrepancy(), 1.5 * inv->relative_mean_discrepancy())
      << "raw mean " << raw_cert->mean_discrepancy() << " / "
      << raw_cert->mean_pairwise_difference() << ", invariant mean " << inv->mean_discrepancy()
      << " / " << inv->mean_pairwise_difference();
  // The report shows the relative figure beside the absolute ones.
  EXPECT_THAT(testing::ReadText(*invariant + "/report.json"),
              HasSubstr("\"relative_mean_discrepancy\": "));
  EXPECT_THAT(testing::ReadText(*invariant + "/report.md"),
              HasSubstr("| invariance relative mean discrepancy | "));
}

}  // namespace
}  // namespace invariant::train
