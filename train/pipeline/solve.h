// solve.h: the solve stage of invariant-train: which solver a ridge head
// gets (learner.ridge_solver), and the head solved over the λ grid and
// chosen on the validation rows (or Spec-Avg's literal average).
//
// Solver choice (ChooseHeadSolver): AUTO, up to
// kConjugateGradientAboveFeatures, takes the band reduction
// (core/rls/ridge_band.h: one reduction for the whole grid, about
// kBandFromLambdas Cholesky factorisations' cost, measured in
// docs/benchmarks/performance.md) when the grid has kBandFromLambdas or more λ
// or may be extended (learner.extend_lambda_grid); for a shorter grid the
// eigendecomposition up to kCholeskyAboveFeatures features
// (core/rls/ridge.h) and Cholesky per λ above; conjugate gradients above
// kConjugateGradientAboveFeatures. CG applies
// ΦcᵀΦc/N from the rows (2·N·D doubles read per iteration, no Gram formed)
// or from the Gram (D² per iteration, after an N·D² accumulation):
// learner.cg.source, or by AUTO the rows when D > 2N.
// The dual band path (kDualBand, core/rls/ridge_band.h) reduces the N × N
// kernel of the kept training rows instead: no D × D Gram is accumulated
// (N·D² flops saved) and the reduction is (4/3)N³ rather than (4/3)D³. AUTO
// takes it up to kConjugateGradientAboveFeatures whenever the run can keep
// its rows and N ≤ kDualBandMaxRowsPerFeature · D: its flops (N²D + (4/3)N³)
// are below the primal band's (N·D² + (4/3)D³) for every N < D, and below
// 0.8 D its memory (N·D floats while featurizing, then N·D + N² doubles)
// stays under the primal's two D × D doubles.
//
// SolveHead: every λ of learner.lambda_grid is solved (largest first, so CG
// warm-starts from a better-conditioned λ) and scored on the validation
// rows; with learner.extend_lambda_grid the grid grows by a decade beyond
// whichever end was chosen, up to kMaxLambdaGridExtensions decades. It fills
// the report's solver, validation metric and curve, λ, CG solves, and
// warnings (also printed to stderr as "warning: ..."): a λ at an end of its
// grid, a CG solve that did not converge.
//
// Errors: the solver's (e.g. a singular system) and ChooseLambda's, and the
// validation rows' (from `validation`). Thread-safety: none needed; the
// functions run on the calling thread and split work over the default
// thread pool.
#ifndef INVARIANT_TRAIN_PIPELINE_SOLVE_H_
#define INVARIANT_TRAIN_PIPELINE_SOLVE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/lambda_selection.h"
#include "core/rls/linear_model.h"
#include "invariant/v1/train_config.pb.h"
#include "train/pipeline/cross_validation.h"
#include "train/pipeline/report.h"

namespace invariant::train {

// How a ridge head is solved. kCgGram/kCgRows: conjugate gradients from the
// Gram or from the rows.
enum class HeadSolver { kEigen, kCholesky, kCgGram, kCgRows, kBand, kDualBand };
constexpr int64_t kConjugateGradientAboveFeatures = 20000;
// The band reduction costs 2.8–4.7 Cholesky factorisations at 2,000–16,000
// features (4.3 on a quiet machine at 8,000; docs/benchmarks/performance.md,
// "The λ path"), and a λ then costs 1–5 % of one: from five λ on it wins.
constexpr int64_t kBandFromLambdas = 5;
// AUTO's dual: N ≤ 0.8 D (see above; measured in docs/benchmarks/performance.md).
constexpr double kDualBandMaxRowsPerFeature = 0.8;

// The solver for `features` features. `rows` is the number of training rows
// when the run can keep them (unsharded), 0 when it only has sums (then
// never kCgRows or kDualBand: RIDGE_SOLVER_DUAL_BAND then means kBand).
// The trainer keeps the rows for kCgRows and kDualBand.
HeadSolver ChooseHeadSolver(const v1::LearnerConfig& l, int64_t features, int64_t rows);

// "eigen", "cholesky", "cg_gram", "cg_rows", "band" or "dual_band" (the
// report's solver).
const char* HeadSolverName(HeadSolver s);

// A solver from sums for `kind` (not kCgRows or kDualBand), with
// learner.cg's options.
SolverFactory GramSolverFactory(HeadSolver kind, const v1::LearnerConfig& l);

// What the featurize stage hands the solve stage: the sums (every learner
// but CG on the rows), or the featurized rows and targets in blocks.
struct TrainingSet {
  std::optional<GramAccumulator> sums;
  std::vector<FloatMatrix> phi, y;
};

// The featurized validation rows and their targets.
struct ValidationRows {
  FloatMatrix phi;
  FloatMatrix y;
};

// Solves the head of a RIDGE or SPEC_AVG learner over `features` features.
// SPEC_AVG_ALGORITHM1 is the literal average ΦᵀY/N of the sums (no λ, no
// validation); otherwise the ridge solve above (SPEC_AVG_LEAST_SQUARES is
// the ridge solve on the invariant features). A `set` without sums holds
// the rows: solved by kDualBand when ChooseHeadSolver picks it for them,
// else by CG on the rows. Frees the training rows of `set` once the solver
// has copied them, and the band path consumes its sums (their Gram is
// centred and reduced in place; `set.sums` is empty afterwards);
// `validation` is called once, after that, for the validation rows.
absl::StatusOr<LinearModel> SolveHead(
    const v1::LearnerConfig& l, int64_t features, RlsTask task, TrainingSet& set,
    const std::function<absl::StatusOr<ValidationRows>()>& validation, TrainReport& report);

// A chosen λ at an end of its grid may be a bound, not an optimum: says so
// in report.warnings and on stderr (nothing when λ = report.lambda is inside
// the grid or the grid has fewer than two values).
void WarnAtGridEnd(TrainReport& report, const std::vector<double>& grid);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_SOLVE_H_
