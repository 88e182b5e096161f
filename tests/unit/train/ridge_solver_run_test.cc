// The ridge solvers of learner.ridge_solver in real training runs: CG on the
// rows (unsharded), CG on the merged Gram (shards + reduce) and the band
// reduction give the eigendecomposition's model; AUTO's choice.
#include <cmath>
#include <string>

#include "absl/strings/str_replace.h"
#include "core/model/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/solve.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using testing::kXpermConfig;
using testing::ReadText;
using testing::RunOptions;
using testing::TempDir;

std::string WithSolver(const std::string& solver) {
  return absl::StrReplaceAll(
      kXpermConfig,
      {{"task: TASK_CLASSIFICATION", "task: TASK_CLASSIFICATION ridge_solver: " + solver +
                                         " cg { preconditioner_rank: 4 tolerance: 1e-12 }"}});
}

// max |a − b| / max |b| over the head weights of two versions.
double WeightGap(const std::string& a_dir, const std::string& b_dir) {
  auto a = Model::Load(a_dir + "/model.bundle");
  auto b = Model::Load(b_dir + "/model.bundle");
  EXPECT_TRUE(a.ok() && b.ok());
  const FloatMatrix& wa = (*a)->tensors().f32.at("head/weights");
  const FloatMatrix& wb = (*b)->tensors().f32.at("head/weights");
  EXPECT_EQ(wa.size(), wb.size());
  double gap = 0, scale = 0;
  for (int64_t i = 0; i < wb.size(); ++i) {
    gap = std::max(gap, std::fabs(static_cast<double>(wa.data()[i]) - wb.data()[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(wb.data()[i])));
  }
  EXPECT_EQ((*a)->manifest().head().lambda(), (*b)->manifest().head().lambda());
  return gap / scale;
}

TEST(RidgeSolverRunTest, ConjugateGradientRunsGiveTheEigendecompositionModel) {
  TempDir dir;
  auto eigen = RunTraining(RunOptions(dir, WithSolver("RIDGE_SOLVER_EIGEN"), "eigen"));
  auto cg = RunTraining(RunOptions(
      dir,
      absl::StrReplaceAll(WithSolver("RIDGE_SOLVER_CG"), {{"cg {", "cg { source: SOURCE_ROWS"}}),
      "cg"));
  auto gram = RunTraining(RunOptions(dir, WithSolver("RIDGE_SOLVER_CG"), "gram"));
  ASSERT_TRUE(eigen.ok() && cg.ok() && gram.ok()) << eigen.status() << cg.status();
  EXPECT_LT(WeightGap(*cg, *eigen), 1e-5);
  EXPECT_LT(WeightGap(*gram, *eigen), 1e-5);
  const std::string json = ReadText(*cg + "/report.json");
  EXPECT_THAT(json, HasSubstr("\"solver\": {\"kind\": \"cg_rows\", \"cg\": [{\"lambda\": "));
  // AUTO source: the Gram, since D < 2N here.
  EXPECT_THAT(ReadText(*gram + "/report.json"), HasSubstr("\"kind\": \"cg_gram\""));
  EXPECT_THAT(ReadText(*eigen + "/report.json"), HasSubstr("\"kind\": \"eigen\", \"cg\": []"));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("conjugate gradients stopped")));
  // Shards + reduce: CG on the merged Gram, the same model.
  TrainOptions o = RunOptions(dir, WithSolver("RIDGE_SOLVER_CG"), "sharded");
  o.num_shards = 2;
  for (int i = 0; i < 2; ++i) {
    o.shard = i;
    ASSERT_TRUE(RunShard(o).ok());
  }
  auto reduced = RunReduce(o);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_THAT(ReadText(*reduced + "/report.json"), HasSubstr("\"kind\": \"cg_gram\""));
  EXPECT_LT(WeightGap(*reduced, *eigen), 1e-5);
}

// An iteration cap too small is a warning in the report, not a silent model.
TEST(RidgeSolverRunTest, UnconvergedConjugateGradientsWarn) {
  TempDir dir;
  const std::string config =
      absl::StrReplaceAll(WithSolver("RIDGE_SOLVER_CG"),
                          {{"cg { preconditioner_rank: 4 tolerance: 1e-12 }",
                            "cg { preconditioner_rank: 1 tolerance: 1e-12 max_iterations: 1 }"}});
  auto run = RunTraining(RunOptions(dir, config, "capped"));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_THAT(ReadText(*run + "/report.json"), HasSubstr("conjugate gradients stopped"));
}

// The band reduction (one factorisation for the grid) gives the
// eigendecomposition's model and says so in the report.
TEST(RidgeSolverRunTest, BandRunGivesTheEigendecompositionModel) {
  TempDir dir;
  auto eigen = RunTraining(RunOptions(dir, WithSolver("RIDGE_SOLVER_EIGEN"), "eigen"));
  auto band = RunTraining(RunOptions(dir, WithSolver("RIDGE_SOLVER_BAND"), "band"));
  ASSERT_TRUE(eigen.ok() && band.ok()) << eigen.status() << band.status();
  EXPECT_LT(WeightGap(*band, *eigen), 1e-5);
  EXPECT_THAT(ReadText(*band + "/report.json"), HasSubstr("\"kind\": \"band\", \"cg\": []"));
}

// AUTO: the band reduction for a grid of kBandFromLambdas or more λ (the
// default nine) or an extensible grid, up to kConjugateGradientAboveFeatures;
// for a shorter grid the eigendecomposition, then Cholesky per λ; explicit
// choices are kept.
TEST(RidgeSolverRunTest, AutoChoosesTheBandReductionForAGrid) {
  v1::LearnerConfig l;
  EXPECT_EQ(ChooseHeadSolver(l, 2000, 0), HeadSolver::kBand);  // empty: the default nine
  for (int i = 0; i < 9; ++i) l.add_lambda_grid(std::pow(10.0, -8 + i));
  for (int64_t d : {100, 2000, 8000, 14000, 16000, 20000}) {
    EXPECT_EQ(ChooseHeadSolver(l, d, 0), HeadSolver::kBand) << d;
  }
  EXPECT_EQ(ChooseHeadSolver(l, 20001, 0), HeadSolver::kCgGram);
  EXPECT_STREQ(HeadSolverName(HeadSolver::kBand), "band");
  v1::LearnerConfig few;
  for (double lambda : {1e-4, 1e-2, 1.0, 10.0}) few.add_lambda_grid(lambda);
  ASSERT_LT(few.lambda_grid_size(), kBandFromLambdas);
  EXPECT_EQ(ChooseHeadSolver(few, 2000, 0), HeadSolver::kEigen);
  EXPECT_EQ(ChooseHeadSolver(few, 8000, 0), HeadSolver::kCholesky);
  few.set_extend_lambda_grid(true);
  EXPECT_EQ(ChooseHeadSolver(few, 8000, 0), HeadSolver::kBand);
  few.set_ridge_solver(v1::LearnerConfig::RIDGE_SOLVER_CHOLESKY);
  EXPECT_EQ(ChooseHeadSolver(few, 8000, 0), HeadSolver::kCholesky);
  l.set_ridge_solver(v1::LearnerConfig::RIDGE_SOLVER_EIGEN);
  EXPECT_EQ(ChooseHeadSolver(l, 8000, 0), HeadSolver::kEigen);
  l.set_ridge_solver(v1::LearnerConfig::RIDGE_SOLVER_BAND);
  EXPECT_EQ(ChooseHeadSolver(l, 30000, 0), HeadSolver::kBand);
}

// Fewer training rows than features (N < D): a config with few rows per
// class and more templates.
std::string FewRows(const std::string& config) {
  return absl::StrReplaceAll(
      config, {{"per_class_train: 60", "per_class_train: 6"},
               {"num_templates: 8", "num_templates: 16"},
               {"lambda_grid: [ 1e-4, 1e-2, 1 ]", "lambda_grid: [ 1e-6, 1e-4, 1e-2, 1, 100 ]"}});
}

// The dual band path (the N × N kernel of the kept rows, no Gram) gives the
// primal band path's model, and AUTO takes it when N ≤ 0.8 D.
TEST(RidgeSolverRunTest, DualBandRunGivesThePrimalBandModel) {
  TempDir dir;
  auto band = RunTraining(RunOptions(dir, FewRows(WithSolver("RIDGE_SOLVER_BAND")), "band"));
  auto dual = RunTraining(RunOptions(dir, FewRows(WithSolver("RIDGE_SOLVER_DUAL_BAND")), "dual"));
  auto autochosen = RunTraining(RunOptions(dir, FewRows(WithSolver("RIDGE_SOLVER_AUTO")), "auto"));
  ASSERT_TRUE(band.ok() && dual.ok() && autochosen.ok())
      << band.status() << dual.status() << autochosen.status();
  auto model = Model::Load(*dual + "/model.bundle");
  ASSERT_TRUE(model.ok());
  const std::string json = ReadText(*dual + "/report.json");
  EXPECT_THAT(json, HasSubstr("\"kind\": \"dual_band\", \"cg\": []"));
  EXPECT_THAT(ReadText(*band + "/report.json"), HasSubstr("\"kind\": \"band\""));
  EXPECT_THAT(ReadText(*autochosen + "/report.json"), HasSubstr("\"kind\": \"dual_band\""));
  EXPECT_LT(WeightGap(*dual, *band), 1e-6);
  EXPECT_LT(WeightGap(*autochosen, *band), 1e-6);
  // Shards + reduce have only the sums: DUAL_BAND is the primal band there.
  TrainOptions o = RunOptions(dir, FewRows(WithSolver("RIDGE_SOLVER_DUAL_BAND")), "sharded");
  o.num_shards = 2;
  for (int i = 0; i < 2; ++i) {
    o.shard = i;
    ASSERT_TRUE(RunShard(o).ok());
  }
  auto reduced = RunReduce(o);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_THAT(ReadText(*reduced + "/report.json"), HasSubstr("\"kind\": \"band\""));
  EXPECT_LT(WeightGap(*reduced, *band), 1e-6);
}

// AUTO: the dual band path when the run keeps its rows and N ≤ 0.8 D (up to
// kConjugateGradientAboveFeatures, whatever the grid's length); the primal
// choices otherwise and whenever only sums exist (rows = 0).
TEST(RidgeSolverRunTest, AutoChoosesTheDualBandWhenRowsAreFewerThanFeatures) {
  v1::LearnerConfig l;
  EXPECT_EQ(ChooseHeadSolver(l, 14000, 10000), HeadSolver::kDualBand);
  EXPECT_EQ(ChooseHeadSolver(l, 8000, 5000), HeadSolver::kDualBand);
  EXPECT_EQ(ChooseHeadSolver(l, 10000, 8000), HeadSolver::kDualBand);  // 0.8 D
  EXPECT_EQ(ChooseHeadSolver(l, 10000, 8001), HeadSolver::kBand);
  EXPECT_EQ(ChooseHeadSolver(l, 14000, 20000), HeadSolver::kBand);
  EXPECT_EQ(ChooseHeadSolver(l, 14000, 0), HeadSolver::kBand);  // sums only
  EXPECT_EQ(ChooseHeadSolver(l, 30000, 10000), HeadSolver::kCgRows);
  EXPECT_STREQ(HeadSolverName(HeadSolver::kDualBand), "dual_band");
  v1::LearnerConfig few;
  for (double lambda : {1e-4, 1e-2}) few.add_lambda_grid(lambda);
  EXPECT_EQ(ChooseHeadSolver(few, 8000, 5000), HeadSolver::kDualBand);
  EXPECT_EQ(ChooseHeadSolver(few, 8000, 7000), HeadSolver::kCholesky);
  // Explicit choices are kept; DUAL_BAND without rows, or with N ≥ D, is the
  // primal band.
  few.set_ridge_solver(v1::LearnerConfig::RIDGE_SOLVER_CHOLESKY);
  EXPECT_EQ(ChooseHeadSolver(few, 8000, 5000), HeadSolver::kCholesky);
  l.set_ridge_solver(v1::LearnerConfig::RIDGE_SOLVER_BAND);
  EXPECT_EQ(ChooseHeadSolver(l, 14000, 10000), HeadSolver::kBand);
  l.set_ridge_solver(v1::LearnerConfig::RIDGE_SOLVER_DUAL_BAND);
  EXPECT_EQ(ChooseHeadSolver(l, 14000, 10000), HeadSolver::kDualBand);
  EXPECT_EQ(ChooseHeadSolver(l, 8000, 20000), HeadSolver::kBand);  // N ≥ D: the Gram is smaller
  EXPECT_EQ(ChooseHeadSolver(l, 8000, 0), HeadSolver::kBand);
}

}  // namespace
}  // namespace invariant::train
