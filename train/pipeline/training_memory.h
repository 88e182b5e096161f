// training_memory.h: the peak memory of a sharded training run's processes,
// known from the config before any training row is read, so a pod's limit
// can be sized to its features (`invariant-train plan`) and a process whose
// limit is too small refuses at once with the figures instead of being
// OOM-killed an hour in.
//
// The estimate is what the process holds once its data and bank stages
// are done (measured: its resident set then, which holds the binary, the
// data source, the validation and test rows and the feature map) plus what
// grows with D:
//   Gram         ΦᵀΦ as D × D doubles (the accumulator stores all of it,
//                uses the lower triangle) and ΦᵀY, D × T
//   featurize    a block of features (block_rows × D floats), the
//                accumulator's 512 × D staging block of doubles, two blocks
//                of inputs (block_rows × input_dim floats)
//   solver       beyond the Gram it consumes (solve.cc moves the sums in):
//                CG from the Gram and the band reduction 0, Cholesky one
//                more D × D, the eigendecomposition two (dsyevd's workspace)
//   validation   the featurized validation rows (rows × D floats)
//   unitemised   16 MiB and 5 % of the D × D terms (OpenBLAS's buffers,
//                LAPACK's and the allocator's workspaces, the band, the
//                evaluation's scoring blocks and certificate)
// A shard holds prepared + Gram + featurize; the reduce prepared + Gram +
// solver + validation (its merge reads one column at a time). The Gram is
// counted whole though a shard writes only its lower triangle: whether the
// untouched pages stay unmapped depends on the allocator (a calloc'd block
// does; measured, a shard's peak is then about half a Gram lower). Not counted:
// the band path's eigen fallback for a λ too small to factor (three more
// D × D while dsbevd runs; ridge_band.h).
// Calibrated against peak RSS in docs/benchmarks/training_memory.md.
//
// Pure functions; thread-safe.
#ifndef INVARIANT_TRAIN_PIPELINE_TRAINING_MEMORY_H_
#define INVARIANT_TRAIN_PIPELINE_TRAINING_MEMORY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "train/pipeline/solve.h"

namespace invariant::train {

// What a run's memory depends on.
struct TrainingShape {
  int64_t feature_dim = 0;  // D
  int64_t target_dim = 1;   // T: classes (one-vs-all) or regression targets
  int64_t input_dim = 0;    // floats per input row
  int64_t validation_rows = 0;
  int64_t block_rows = 4096;
  int64_t prepared_bytes = 0;               // resident once data and bank are ready
  HeadSolver solver = HeadSolver::kCgGram;  // from sums (ChooseHeadSolver, rows 0)
};

struct TrainingMemory {
  int64_t shard_bytes = 0;       // a shard process's peak
  int64_t reduce_bytes = 0;      // the reduce's peak
  int64_t shard_file_bytes = 0;  // each shard file (shard_file.h)
};

TrainingMemory EstimateTrainingMemory(const TrainingShape& shape);

// OK when `limit` is 0 (none known) or needed ≤ limit; else
// RESOURCE_EXHAUSTED: "<what> needs about N GiB (D features, solver S), the
// memory limit is L GiB: raise the limit (invariant-train plan sizes it)".
absl::Status CheckTrainingMemory(const std::string& what, int64_t needed, uint64_t limit,
                                 const TrainingShape& shape);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_TRAINING_MEMORY_H_
