// End-to-end runs of the training job's stages on small generated data.
#include "train/pipeline/trainer.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/base/bf16.h"
#include "core/base/random.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/data/xperm.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using testing::ExpectSameHead;
using ::testing::HasSubstr;
using testing::kTorusConfig;
using testing::kXpermConfig;
using testing::LoadVersion;
using testing::ReadText;
using testing::RunOptions;
using testing::TempDir;

TEST(TrainerTest, XpermRunWritesAnExactlyInvariantModelAndReports) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kXpermConfig, "xperm");
  absl::StatusOr<std::string> out = RunTraining(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, o.models_dir + "/xperm/1");
  auto model = LoadVersion(*out);
  ASSERT_NE(model, nullptr);
  const v1::Manifest& m = model->manifest();
  EXPECT_EQ(m.model_name(), "xperm");
  EXPECT_EQ(m.version(), 1);
  EXPECT_EQ(m.input_dim(), 40);
  EXPECT_EQ(m.encoder().cdf().num_group_elements(), 120);
  EXPECT_EQ(m.feature_dim(), 8 * 17);
  EXPECT_EQ(m.head().class_names_size(), 2);
  EXPECT_GT(m.metrics().at("test_accuracy"), 0.7);
  // All 120 permutations checked; CDF pooling over the whole group is exact.
  EXPECT_TRUE(m.certificate().exhaustive());
  EXPECT_EQ(m.certificate().num_group_elements(), 120);
  EXPECT_EQ(m.certificate().num_points(), 30);
  EXPECT_EQ(m.certificate().max_discrepancy(), 0.0);
  const std::string json = ReadText(*out + "/report.json");
  for (const char* key : {"\"model\": \"xperm\"", "\"feature_dim\": 136", "\"lambda\"",
                          "\"validation_curve\"", "\"accuracy\"", "\"max_discrepancy\"",
                          "\"featurize\"", "\"solve\"", "\"evaluate\"", "\"bank\""}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
  EXPECT_THAT(ReadText(*out + "/report.md"), HasSubstr("test accuracy"));
  // The loaded bundle predicts on its own: every Xperm sequence of this
  // run's test part is classified well above chance (positives are rare).
  const Dataset data = MakeXperm(XpermOptions{});
  const Dataset* all = &data;
  const int64_t n = all->rows();
  FloatMatrix scores = FloatMatrix::Zeros(n, 2);
  model->Predict(n, all->x.data(), scores.mutable_data());
  int64_t correct = 0, positives = 0, found = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t predicted = scores.row(i)[1] > scores.row(i)[0] ? 1 : 0;
    correct += predicted == all->labels[i];
    positives += all->labels[i] == 1;
    found += predicted == 1 && all->labels[i] == 1;
  }
  EXPECT_GT(static_cast<double>(correct) / n, 0.8);
  EXPECT_GT(static_cast<double>(found) / positives, 0.5);
}

// The console names every count (per_class_train: the per-class counts
// beside the totals) and the featurize line gives the feature map's time and
// rate alone, the ΦᵀΦ accumulation apart; report.json the same.
TEST(TrainerTest, ConsoleAndReportSayWhatEveryCountAndTimeIs) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kXpermConfig, "counts");
  ::testing::internal::CaptureStderr();
  absl::StatusOr<std::string> out = RunTraining(o);
  const std::string console = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(console, HasSubstr("data: 120 train (60 per class), 100 validation (50 per class), "
                                 "600 test rows of 40 values"));
  EXPECT_THAT(console, HasSubstr("featurize 120 training rows: features "));
  EXPECT_THAT(console, HasSubstr("accumulate Phi'Phi and Phi'Y "));
  const std::string json = ReadText(*out + "/report.json");
  // Training, validation and test rows through the feature map; only the
  // training rows accumulated.
  EXPECT_THAT(json, HasSubstr("\"featurized_rows\": 820"));
  EXPECT_THAT(json, HasSubstr("\"featurize_seconds\": "));
  EXPECT_THAT(json, HasSubstr("\"accumulate\": {\"rows\": 120, \"seconds\": "));
  EXPECT_THAT(ReadText(*out + "/report.md"), HasSubstr("accumulate ΦᵀΦ, ΦᵀY: rows, s | 120, "));
}

TEST(TrainerTest, Bf16BankConfigStoresTheRoundedBankAndServesIt) {
  TempDir dir;
  std::string text = kXpermConfig;
  text.replace(text.find("seed: 7"), 7, "seed: 7 bank_dtype: BANK_DTYPE_BF16");
  auto f32 = RunTraining(RunOptions(dir, kXpermConfig, "f32"));
  auto bf16 = RunTraining(RunOptions(dir, text, "bf16"));
  ASSERT_TRUE(f32.ok() && bf16.ok()) << f32.status() << bf16.status();
  auto m32 = LoadVersion(*f32), m16 = LoadVersion(*bf16);
  ASSERT_TRUE(m32 != nullptr && m16 != nullptr);
  EXPECT_EQ(m16->manifest().encoder().bank_dtype(), v1::BANK_DTYPE_BF16);
  EXPECT_EQ(m16->tensors().f32.count("encoder/bank"), 0u);
  // The same draw, every value rounded to nearest-even bfloat16.
  const FloatMatrix& bank = m32->tensors().f32.at("encoder/bank");
  const Bf16Matrix& bank16 = m16->tensors().bf16.at("encoder/bank");
  ASSERT_EQ(bank.rows(), bank16.rows());
  ASSERT_EQ(bank.cols(), bank16.cols());
  int64_t moved = 0;
  for (int64_t i = 0; i < bank.size(); ++i) {
    ASSERT_EQ(bank16.data()[i], FloatToBf16(bank.data()[i])) << i;
    moved += Bf16Value(bank16.data()[i]) != bank.data()[i];
  }
  EXPECT_GT(moved, 0);
  EXPECT_EQ(m16->bytes() + bank16.bytes(), m32->bytes());
  // Still a good, exactly invariant Xperm model (CDF pooling over the group).
  EXPECT_GT(m16->manifest().metrics().at("test_accuracy"), 0.7);
  EXPECT_EQ(m16->manifest().certificate().max_discrepancy(), 0.0);
}

// The plain (identity-group) baseline certified by the tool against the
// invariant model's group: clearly not invariant, while the invariant model
// is exact; and the certificate says which group it checked.
TEST(TrainerTest, CertifyChecksAnyModelAgainstAnyGroupThatFitsTheInput) {
  TempDir dir;
  std::string raw = kXpermConfig;
  const std::string group = "block_permutation { num_blocks: 5 block_size: 8 }";
  raw.replace(raw.find(group), group.size(), "identity { dim: 40 }");
  auto invariant = RunTraining(RunOptions(dir, kXpermConfig, "invariant"));
  auto plain = RunTraining(RunOptions(dir, raw, "plain"));
  ASSERT_TRUE(invariant.ok() && plain.ok()) << invariant.status() << plain.status();
  // Trained against its own (identity) group, the plain model reports 0.
  auto plain_model = LoadVersion(*plain);
  ASSERT_NE(plain_model, nullptr);
  EXPECT_EQ(plain_model->manifest().certificate().max_discrepancy(), 0.0);
  EXPECT_TRUE(plain_model->manifest().certificate().group().has_identity());

  std::string against = raw;
  against.replace(against.find("certificate { num_points: 30 }"), 30,
                  "certificate { num_points: 30 group { " + group + " enumerate: true } }");
  TrainOptions o = RunOptions(dir, against, "unused");
  auto raw_cert = CertifySavedModel(o.config_path, *plain);
  auto inv_cert = CertifySavedModel(o.config_path, *invariant);
  ASSERT_TRUE(raw_cert.ok() && inv_cert.ok()) << raw_cert.status() << inv_cert.status();
  EXPECT_GT(raw_cert->max_discrepancy(), 1e-3);
  EXPECT_LT(inv_cert->max_discrepancy(), raw_cert->max_discrepancy() * 1e-3);
  EXPECT_TRUE(raw_cert->exhaustive());
  EXPECT_EQ(raw_cert->num_group_elements(), 120);
  EXPECT_TRUE(raw_cert->group().has_block_permutation());
  // A group that does not fit the input is refused, naming the field.
  std::string misfit = against;
  const std::string five = "num_blocks: 5 block_size: 8 } enumerate";
  misfit.replace(misfit.find(five), five.size(), "num_blocks: 4 block_size: 8 } enumerate");
  auto refused = CertifySavedModel(RunOptions(dir, misfit, "unused").config_path, *plain);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("certificate.group acts on vectors of length 32"));
}

// Ridge regression on the torus with a grid of λ far too large: the smallest
// is chosen, which is a bound, not an optimum. Validation is reported in the
// test metric (RMSE), the edge is a warning, and extend_lambda_grid walks the
// grid down by decades until the choice is inside it.
TEST(TrainerTest, LambdaAtTheGridEndWarnsAndExtendLambdaGridMovesInside) {
  TempDir dir;
  std::string text = kTorusConfig;
  const std::string learner = "learner { kind: SPEC_AVG task: TASK_REGRESSION }";
  text.replace(text.find(learner), learner.size(),
               "learner { kind: RIDGE task: TASK_REGRESSION lambda_grid: [ 100, 1000 ] }");
  // Few noisy training rows for 42 features: the best λ is neither 0 nor large.
  text.replace(text.find("noise_stddev: 0.05"), 18, "noise_stddev: 1.0");
  text.replace(text.find("split { train: 500"), 18, "split { train: 60");
  auto edge = RunTraining(RunOptions(dir, text, "edge"));
  ASSERT_TRUE(edge.ok()) << edge.status();
  const std::string json = ReadText(*edge + "/report.json");
  EXPECT_THAT(json, HasSubstr("\"validation_metric\": \"rmse\""));
  EXPECT_THAT(json, HasSubstr("\"warnings\": [\"lambda 100 is the smallest value of "
                              "learner.lambda_grid"));
  EXPECT_THAT(ReadText(*edge + "/report.md"), HasSubstr("**Warning:** lambda 100 is the smallest"));

  text.replace(text.find("lambda_grid: [ 100, 1000 ]"), 26,
               "lambda_grid: [ 100, 1000 ] extend_lambda_grid: true");
  auto extended = RunTraining(RunOptions(dir, text, "extended"));
  ASSERT_TRUE(extended.ok()) << extended.status();
  auto model = LoadVersion(*extended);
  ASSERT_NE(model, nullptr);
  EXPECT_LT(model->manifest().head().lambda(), 100);
  EXPECT_THAT(ReadText(*extended + "/report.json"), HasSubstr("\"warnings\": []"));
}

TEST(TrainerTest, VersionsIncreaseAndAnExistingOneIsNeverOverwritten) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kXpermConfig, "xperm");
  ASSERT_TRUE(RunTraining(o).ok());
  absl::StatusOr<std::string> second = RunTraining(o);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, o.models_dir + "/xperm/2");
  const auto before = fs::last_write_time(o.models_dir + "/xperm/1/model.bundle");
  o.version = 1;
  absl::StatusOr<std::string> again = RunTraining(o);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(fs::last_write_time(o.models_dir + "/xperm/1/model.bundle"), before);
  // No staging directory is left behind by the refused run.
  for (const auto& e : fs::directory_iterator(o.models_dir + "/xperm")) {
    EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u) << e.path();
  }
}

TEST(TrainerTest, SameConfigGivesTheSameModelBitForBit) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kXpermConfig, "xperm");
  auto a = RunTraining(o);
  auto b = RunTraining(o);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ma = LoadVersion(*a), mb = LoadVersion(*b);
  const FloatMatrix& wa = ma->tensors().f32.at("head/weights");
  const FloatMatrix& wb = mb->tensors().f32.at("head/weights");
  ASSERT_EQ(wa.size(), wb.size());
  EXPECT_EQ(std::memcmp(wa.data(), wb.data(), wa.bytes()), 0);
  const FloatMatrix& ba = ma->tensors().f32.at("encoder/bank");
  const FloatMatrix& bb = mb->tensors().f32.at("encoder/bank");
  EXPECT_EQ(std::memcmp(ba.data(), bb.data(), ba.bytes()), 0);
}

TEST(TrainerTest, ShardsThenReduceGiveTheModelOfOneRun) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kXpermConfig, "xperm");
  auto single = RunTraining(o);
  ASSERT_TRUE(single.ok()) << single.status();
  o.num_shards = 3;
  for (int i = 0; i < 3; ++i) {
    o.shard = i;
    auto shard = RunShard(o);
    ASSERT_TRUE(shard.ok()) << shard.status();
    EXPECT_TRUE(fs::exists(*shard));
  }
  auto reduced = RunReduce(o);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  auto ms = LoadVersion(*single), mr = LoadVersion(*reduced);
  EXPECT_EQ(ms->manifest().head().lambda(), mr->manifest().head().lambda());
  ExpectSameHead(*ms, *mr);
}

TEST(TrainerTest, ReduceRefusesMissingAndForeignShards) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kXpermConfig, "xperm");
  o.num_shards = 2;
  o.shard = 0;
  ASSERT_TRUE(RunShard(o).ok());
  absl::StatusOr<std::string> missing = RunReduce(o);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("shard-1-of-2.gram"));
  // Shard 1 from another config (another seed) must not merge.
  std::string other = kXpermConfig;
  other.replace(other.find("seed: 7"), 7, "seed: 8");
  TrainOptions p = RunOptions(dir, other, "xperm");
  p.num_shards = 2;
  p.shard = 1;
  ASSERT_TRUE(RunShard(p).ok());
  absl::StatusOr<std::string> foreign = RunReduce(o);
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(foreign.status().message(), HasSubstr("different training config"));
  EXPECT_FALSE(fs::exists(o.models_dir + "/xperm/1"));
}

TEST(TrainerTest, SpecAvgModelIsExactlyInvariantAndCertified) {
  TempDir dir;
  TrainOptions o = RunOptions(dir, kTorusConfig, "torus");
  auto out = RunTraining(o);
  ASSERT_TRUE(out.ok()) << out.status();
  auto model = LoadVersion(*out);
  ASSERT_NE(model, nullptr);
  const v1::InvarianceCertificate& c = model->manifest().certificate();
  EXPECT_TRUE(c.exhaustive());
  EXPECT_EQ(c.num_group_elements(), 64);  // {±1}^6, listed by closure
  EXPECT_LE(c.relative_max_discrepancy(), 1e-6);
  EXPECT_LE(c.generator_residual(), 1e-9);
  EXPECT_GT(model->manifest().metrics().at("test_rmse"), 0.0);
  EXPECT_EQ(model->manifest().head().task(), v1::TASK_REGRESSION);
}

// Algorithm 1's error is dominated by the variance of its sample means, which
// falls with n. (Least squares, the default, is already at the truncation
// floor of these 7 features with 100 rows.)
TEST(TrainerTest, SpecAvgImprovesWithMoreTrainingRows) {
  TempDir dir;
  auto rmse = [&](int64_t train) {
    std::string text = kTorusConfig;
    text.replace(text.find("kind: SPEC_AVG"), 14,
                 "kind: SPEC_AVG spec_avg_estimator: SPEC_AVG_ALGORITHM1");
    text.replace(text.find("num_points: 700"), 15, "num_points: " + std::to_string(train + 200));
    text.replace(text.find("train: 500"), 10, "train: " + std::to_string(train));
    text.replace(text.find("budget: 400"), 11, "budget: 13");
    TrainOptions o = RunOptions(dir, text, "t" + std::to_string(train));
    auto out = RunTraining(o);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? LoadVersion(*out)->manifest().metrics().at("test_rmse") : 1e9;
  };
  const double small = rmse(100), large = rmse(6000);
  EXPECT_LT(large, small);
}

TEST(TrainerTest, CenteredSpecAvgIsStillExactAndMoreAccurate) {
  TempDir dir;
  auto run = [&](bool center) {
    std::string text = kTorusConfig;
    text.replace(text.find("noise_stddev: 0.05"), 18, "noise_stddev: 0.0");
    text.replace(text.find("kind: SPEC_AVG"), 14,
                 center ? "kind: SPEC_AVG spec_avg_estimator: SPEC_AVG_ALGORITHM1 "
                          "center_targets: true"
                        : "kind: SPEC_AVG spec_avg_estimator: SPEC_AVG_ALGORITHM1");
    auto out = RunTraining(RunOptions(dir, text, center ? "centered" : "literal"));
    EXPECT_TRUE(out.ok()) << out.status();
    return LoadVersion(*out);
  };
  auto literal = run(false), centered = run(true);
  ASSERT_NE(literal, nullptr);
  ASSERT_NE(centered, nullptr);
  EXPECT_LT(centered->manifest().metrics().at("test_rmse"),
            literal->manifest().metrics().at("test_rmse"));
  EXPECT_LE(centered->manifest().certificate().relative_max_discrepancy(), 1e-6);
  // The constant feature's coefficient is the mean training target.
  const FloatMatrix& w = centered->tensors().f32.at("head/weights");
  EXPECT_NE(w.row(0)[0], literal->tensors().f32.at("head/weights").row(0)[0] - 1.f);
  EXPECT_GT(w.row(0)[0], 0.5f);  // mean of (1/6) Σ i x_i² is 7/12
}

// The default for spectral features (learner.kind unset → SPEC_AVG with
// SPEC_AVG_LEAST_SQUARES) on noiseless torus data: exactly invariant over the
// whole group {±1}^6 and far more accurate than Algorithm 1 on the same rows.
TEST(TrainerTest, DefaultSpectralLearnerIsExactAndBeatsAlgorithm1) {
  TempDir dir;
  auto run = [&](const std::string& learner, const std::string& name) {
    std::string text = kTorusConfig;
    text.replace(text.find("noise_stddev: 0.05"), 18, "noise_stddev: 0.0");
    text.replace(text.find("kind: SPEC_AVG "), 15, learner);
    auto out = RunTraining(RunOptions(dir, text, name));
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? LoadVersion(*out) : nullptr;
  };
  auto by_default = run("", "default");
  auto literal = run("kind: SPEC_AVG spec_avg_estimator: SPEC_AVG_ALGORITHM1 ", "literal");
  ASSERT_NE(by_default, nullptr);
  ASSERT_NE(literal, nullptr);
  const v1::InvarianceCertificate& c = by_default->manifest().certificate();
  EXPECT_TRUE(c.exhaustive());
  EXPECT_EQ(c.num_group_elements(), 64);
  EXPECT_LE(c.relative_max_discrepancy(), 1e-6);
  EXPECT_LE(c.generator_residual(), 1e-9);
  // λ was chosen on validation (Algorithm 1 has none).
  EXPECT_GT(by_default->manifest().head().lambda(), 0.0);
  EXPECT_EQ(literal->manifest().head().lambda(), 0.0);
  const double rmse = by_default->manifest().metrics().at("test_rmse");
  const double literal_rmse = literal->manifest().metrics().at("test_rmse");
  EXPECT_LT(rmse, 0.5 * literal_rmse) << rmse << " vs Algorithm 1 " << literal_rmse;
}

// SPEC_AVG_ALGORITHM1 still gives Algorithm 1 exactly: the head is
// (1/N) Σ y_i ψ(x_i) over the training rows of the split, no bias.
TEST(TrainerTest, Algorithm1StaysSelectableAndIsTheMeanOfYTimesFeatures) {
  TempDir dir;
  std::string text = kTorusConfig;
  text.replace(text.find("kind: SPEC_AVG"), 14,
               "kind: SPEC_AVG spec_avg_estimator: SPEC_AVG_ALGORITHM1");
  auto out = RunTraining(RunOptions(dir, text, "literal"));
  ASSERT_TRUE(out.ok()) << out.status();
  auto model = LoadVersion(*out);
  ASSERT_NE(model, nullptr);

  auto config = ParseTrainConfig(text, "cfg");
  ASSERT_TRUE(config.ok()) << config.status();
  auto plan = PlanData(*config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const int64_t f = model->feature_dim();
  std::vector<double> expected(static_cast<size_t>(f), 0.0);
  int64_t rows = 0;
  std::vector<float> phi;
  ASSERT_TRUE(ForEachTrainBlock(*plan, 64, 0, 1, [&](const TrainBlock& b) {
                phi.resize(static_cast<size_t>(b.n * f));
                model->Featurize(b.n, b.x, phi.data());
                for (int64_t r = 0; r < b.n; ++r) {
                  for (int64_t j = 0; j < f; ++j) {
                    expected[j] += static_cast<double>(b.y[r]) * phi[r * f + j];
                  }
                }
                rows += b.n;
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(rows, 500);
  const FloatMatrix& w = model->tensors().f32.at("head/weights");
  ASSERT_EQ(w.rows(), f);
  for (int64_t j = 0; j < f; ++j) {
    EXPECT_NEAR(w.row(j)[0], expected[j] / rows, 1e-5) << "feature " << j;
  }
  EXPECT_EQ(model->tensors().f32.at("head/bias").row(0)[0], 0.f);
}

// The von Mises kernel ridge baseline is a paper comparison with no feature
// map to serve: the torus reproduction runs it, the trainer points there.
TEST(TrainerTest, KernelRidgeBaselineIsRefusedPointingToTheReproduction) {
  TempDir dir;
  std::string text = kTorusConfig;
  text.replace(text.find("kind: SPEC_AVG"), 14,
               "kind: KERNEL_RIDGE_VON_MISES von_mises_eta: 0.1 lambda_grid: [0.1, 1]");
  auto out = RunTraining(RunOptions(dir, text, "krr"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("learner.kind KERNEL_RIDGE_VON_MISES is not trained by invariant-train"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("invariant-repro-torus"));
  EXPECT_FALSE(fs::exists(dir.path() + "/krr"));
}

TEST(TrainerTest, DataErrorsNameTheProblem) {
  TempDir dir;
  std::string text = kXpermConfig;
  text.replace(text.find("per_class_train: 60"), 19, "per_class_train: 90000");
  auto out = RunTraining(RunOptions(dir, text, "bad"));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("class"));
  TrainOptions missing = RunOptions(dir, kXpermConfig, "x");
  missing.config_path = dir.path() + "/nope.textproto";
  EXPECT_EQ(RunTraining(missing).status().code(), absl::StatusCode::kNotFound);
}

// A CSV config over `csv_path`: random Fourier features under cyclic shifts
// of the 4 input columns, ridge regression on the column "y".
std::string CsvRegressionConfig(const std::string& csv_path) {
  constexpr char kConfig[] = R"pb(
    data { csv { path: "CSV_PATH" target_column: "y" } }
    split { train: 40 validation: 10 test: 10 seed: 1 }
    encoder {
      random_fourier { num_features: 8 num_group_elements: 4 sigma: 2 }
      group { cyclic_shift { length: 4 } }
      seed: 3
    }
    learner {
      kind: RIDGE
      task: TASK_REGRESSION
      lambda_grid: [ 1e-2 ]
    }
    certificate { num_points: 5 }
  )pb";
  return absl::StrReplaceAll(kConfig, {{"CSV_PATH", csv_path}});
}

TEST(TrainerTest, CsvModelStoresItsInputColumnsTargetNameAndScalingAndSummarisesTheTest) {
  TempDir dir;
  std::string csv = "b,y,a,d,c\n";  // the target sits between inputs
  Rng rng(5);
  for (int i = 0; i < 60; ++i) {
    std::vector<double> x(4);
    for (double& v : x) v = rng.Normal();
    csv +=
        absl::StrCat(x[0], ",", x[0] + x[1] + x[2] + x[3], ",", x[1], ",", x[2], ",", x[3], "\n");
  }
  TrainOptions o = RunOptions(dir, CsvRegressionConfig(dir.Write("data.csv", csv)), "csv");
  TrainSummary summary;
  absl::StatusOr<std::string> out = RunTraining(o, &summary);
  ASSERT_TRUE(out.ok()) << out.status();
  std::shared_ptr<const Model> model = LoadVersion(*out);
  ASSERT_NE(model, nullptr);
  const v1::Manifest& m = model->manifest();
  EXPECT_THAT(m.input_columns(), ::testing::ElementsAre("b", "a", "d", "c"));
  EXPECT_EQ(m.input_scaling(), v1::INPUT_SCALING_NONE);
  EXPECT_THAT(m.head().target_names(), ::testing::ElementsAre("y"));
  EXPECT_EQ(summary.test_rows, 10);
  ASSERT_EQ(summary.test_metrics.count("rmse"), 1u);
  EXPECT_EQ(summary.test_metrics.at("rmse"), m.metrics().at("test_rmse"));
}

TEST(TrainerTest, AnExistingExplicitVersionIsRefusedBeforeAnyDataIsRead) {
  TempDir dir;
  // The data file does not exist: reading it would fail with NOT_FOUND.
  TrainOptions o = RunOptions(dir, CsvRegressionConfig(dir.path() + "/missing.csv"), "m");
  o.version = 2;
  EXPECT_EQ(RunTraining(o).status().code(), absl::StatusCode::kNotFound);
  fs::create_directories(o.models_dir + "/m/2");
  const absl::Status refused = RunTraining(o).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(refused.message(), HasSubstr("version 2 exists and is never overwritten"));
  o.num_shards = 2;  // reduce checks too
  EXPECT_EQ(RunReduce(o).status().code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace invariant::train

namespace invariant::train {
namespace {

// An image group acts on channels-last images of its own size: data whose
// rows are not such images is refused before anything is trained, naming
// the group's field (Xperm's rows have 40 values).
TEST(TrainerTest, ImageGroupMustMatchTheDataRows) {
  const std::string config_text = R"pb(
    data { xperm { seed: 1 } }
    encoder {
      random_fourier { num_features: 10 num_group_elements: 2 sigma: 1 }
      group { image { height: HEIGHT width: 8 channels: 1 } }
    }
    learner {
      kind: RIDGE
      task: TASK_CLASSIFICATION
      lambda_grid: [ 1e-3 ]
    }
  )pb";
  auto matching = ParseTrainConfig(absl::StrReplaceAll(config_text, {{"HEIGHT", "5"}}), "test");
  ASSERT_TRUE(matching.ok()) << matching.status();
  EXPECT_TRUE(PlanData(*matching).ok());
  auto other = ParseTrainConfig(absl::StrReplaceAll(config_text, {{"HEIGHT", "4"}}), "test");
  ASSERT_TRUE(other.ok()) << other.status();
  const absl::StatusOr<DataPlan> plan = PlanData(*other);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("encoder.group.image"));
}

}  // namespace
}  // namespace invariant::train
