#include "train/pipeline/training_memory.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "train/pipeline/shard_file.h"

namespace invariant::train {
namespace {

constexpr int64_t kFloat = 4;
constexpr int64_t kDouble = 8;
constexpr int64_t kAccumulatorBlockRows = 512;
constexpr int64_t kUnitemisedFloorBytes = int64_t{16} << 20;  // gram_accumulator.cc's staging block

// The D × D matrices a solver holds beyond the Gram it consumes.
int64_t SolverExtraGrams(HeadSolver solver) {
  switch (solver) {
    case HeadSolver::kEigen:
      return 2;
    case HeadSolver::kCholesky:
      return 1;
    default:
      return 0;
  }
}

std::string GiB(int64_t bytes) {
  return absl::StrFormat("%.2f GiB", static_cast<double>(bytes) / (int64_t{1} << 30));
}

}  // namespace

TrainingMemory EstimateTrainingMemory(const TrainingShape& s) {
  const int64_t d = s.feature_dim;
  const int64_t common = s.prepared_bytes;
  const int64_t gram = d * d * kDouble + d * s.target_dim * kDouble + 3 * d * kDouble;
  const int64_t featurize = s.block_rows * d * kFloat + kAccumulatorBlockRows * d * kDouble +
                            2 * s.block_rows * s.input_dim * kFloat;
  const int64_t solver = SolverExtraGrams(s.solver) * d * d * kDouble;
  const int64_t validation = s.validation_rows * d * kFloat;
  TrainingMemory m;
  // What is not itemised (OpenBLAS's buffers, LAPACK's and the allocator's
  // workspaces, the band, the evaluation's scoring blocks and certificate):
  // 16 MiB and 5 % of the D × D terms. Measured, the reduce held 7 MB above
  // the itemised sum at D = 1,275 and 1.7 % above it at D = 20,000.
  const int64_t floor = kUnitemisedFloorBytes;
  m.shard_bytes = common + gram + featurize + floor + gram / 20;
  m.reduce_bytes = common + gram + solver + validation + floor + (gram + solver) / 20;
  m.shard_file_bytes = ShardFileBytes(d, s.target_dim);
  return m;
}

absl::Status CheckTrainingMemory(const std::string& what, int64_t needed, uint64_t limit,
                                 const TrainingShape& shape) {
  if (limit == 0 || static_cast<uint64_t>(needed) <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(what, " needs about ", GiB(needed), " (", shape.feature_dim,
                   " features: ΦᵀΦ is ", GiB(shape.feature_dim * shape.feature_dim * kDouble),
                   "; solver ", HeadSolverName(shape.solver), "), the memory limit is ",
                   GiB(static_cast<int64_t>(limit)), " (", limit, " bytes): raise it to at least ",
                   needed, " bytes (invariant-train plan prints the figures)"));
}

}  // namespace invariant::train
