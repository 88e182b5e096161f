// trainer.h: the stages of invariant-train.
//
//   data      PlanData: open the data, fix the split, load validation/test rows
//   bank      BuildFeatureMap: preprocessing statistics, templates, bank
//   featurize stream the training rows through the feature map into ΦᵀΦ, ΦᵀY
//   solve     ridge over the λ grid on validation (or Spec-Avg: solve.h; or KRR)
//   evaluate  test metrics and the invariance certificate
//   write     MODELS/<name>/<version>/{model.bundle, report.json, report.md},
//             staged in a temporary directory and renamed when complete
//             (publish.h)
//
// A sharded run (shard i of n) stops after `featurize` and writes its partial
// sums to a shard file; `reduce` merges the n shard files and runs the rest,
// giving the same model as one unsharded run up to floating-point summation
// order.
#ifndef INVARIANT_TRAIN_PIPELINE_TRAINER_H_
#define INVARIANT_TRAIN_PIPELINE_TRAINER_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "invariant/v1/bundle.pb.h"
#include "train/pipeline/training_memory.h"

namespace invariant::train {

struct TrainOptions {
  std::string config_path;
  std::string models_dir;
  std::string name;
  int64_t version = 0;  // 0: one above the highest existing version
  int shard = 0;        // this process's shard (with num_shards > 1)
  int num_shards = 1;
  std::string shard_dir;  // default MODELS/<name>/shards
  // The memory this process may use (training_memory.h): a shard or reduce
  // whose estimated peak passes it is RESOURCE_EXHAUSTED before featurizing.
  // 0: the cgroup's memory.max (a pod's limit), none when there is none.
  uint64_t memory_limit_bytes = 0;
  // reduce: wait up to this long for the shard files to appear (an Indexed
  // Job's shards still running); 0 = they must be there.
  int64_t shard_wait_seconds = 0;
  // reduce: remove the shard files (and the shard directory when it is then
  // empty) once the version is written.
  bool remove_shards = false;
  // Tests only (--testonly_hold_before_publish): once the staged version
  // directory is complete, print "invariant-train: holding <staged path>" to
  // stderr and block forever instead of publishing, so a test can interrupt
  // the run at a known point.
  bool testonly_hold_before_publish = false;
};

// What a finished run measured: the test metrics ("accuracy"; "rmse", "mae")
// on test_rows held-out rows. A k-fold run (k_fold > 0) tests every row once:
// test_metrics is then the mean over the K folds, test_metrics_std their
// sample std (K − 1 in the denominator) and test_metrics_pooled the metric
// over all test_rows rows of every round.
struct TrainSummary {
  std::map<std::string, double> test_metrics;
  int64_t test_rows = 0;
  int k_fold = 0;
  std::map<std::string, double> test_metrics_std;
  std::map<std::string, double> test_metrics_pooled;
};

// The unsharded run. Returns the version directory written; fills `summary`
// when not null. An explicit options.version that exists is ALREADY_EXISTS
// before any data is read.
absl::StatusOr<std::string> RunTraining(const TrainOptions& options,
                                        TrainSummary* summary = nullptr);

// Featurizes shard `options.shard` of `options.num_shards` and writes
// SHARD_DIR/shard-<i>-of-<n>.gram. Returns the file written. Refuses with
// RESOURCE_EXHAUSTED before featurizing when its estimated peak passes the
// memory limit (options.memory_limit_bytes); so does the reduce.
absl::StatusOr<std::string> RunShard(const TrainOptions& options);

// Merges the shard files of options.num_shards shards (each must come from
// the same config: checked by a fingerprint of its text) and finishes the run.
absl::StatusOr<std::string> RunReduce(const TrainOptions& options, TrainSummary* summary = nullptr);

// What `invariant-train plan` prints: the run's shape and the estimated
// peaks of a shard and of the reduce (training_memory.h), from the data and
// bank stages only (no training row is featurized).
struct TrainingPlan {
  TrainingShape shape;
  TrainingMemory memory;
  int64_t train_rows = 0;
};
absl::StatusOr<TrainingPlan> PlanTraining(const TrainOptions& options);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_TRAINER_H_
