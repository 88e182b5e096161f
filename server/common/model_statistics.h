// model_statistics.h: the per-(model, version) numbers of Triton's statistics
// extension (inference.ModelStatistics; docs/operations.md "Per-model
// statistics").
//
// ModelStatisticsTable is owned by ServerMetrics (metrics.h), whose recording
// methods update it in the same call that updates the Prometheus series, so
// the two never disagree. What each number counts, and its Prometheus twin
// (Prometheus labels by model only: the sum over a model's versions equals
// the series, as long as no version of the model was unloaded, see Forget):
//   inference_count   rows computed (RecordBatch rows)   == invariant_rows_total{model}
//                                                           summed over methods
//   execution_count   compute calls (batches)            == invariant_batch_rows_count{model}
//   last_inference    ms since the epoch when the last request (OK or not) ended; 0: none
//   inference_stats.success / .fail   requests that ended OK / with an error: count, and
//                     ns from the handler's start (after the model lookup) to the end
//   inference_stats.queue   one per piece of a request taken from the batch queue for
//                     compute (a request of more than --max_batch_size rows is several
//                     pieces), ns waited       == invariant_queue_seconds{model}
//   inference_stats.compute_input   one per request of clips decoded into rows (models
//                     of sound), ns decoding; 0 for models of rows
//   inference_stats.compute_infer   one per compute call, ns computing
//                                              == invariant_compute_seconds{model}
//   inference_stats.compute_output  one per request answered OK, ns writing the outputs
//                     after the compute (the head scoring the features of a call that
//                     asked for both, the predicted classes; often ~0: most outputs
//                     are computed in place)
//   inference_stats.cache_hit / .cache_miss   always 0: there is no response cache
//   batch_stats       one entry per batch size (rows of a compute call), sorted by
//                     size: compute_infer as above for that size; compute_input and
//                     compute_output 0 (they are per request, not per batch). At most
//                     kMaxBatchSizes distinct sizes a version: a batch of a new size
//                     past the cap counts in execution_count and compute_infer only.
//
// Entries are created by the first record of a (model, version) and erased
// by Forget (the version was unloaded); a version loaded again starts at 0.
// Records that arrive after Forget (calls that were in flight on the
// unloaded bits) are dropped until Loaded says the version serves again, so
// they never reach the next load's numbers. (A call of the old load still in
// flight after the version was loaded again counts in the new load's.)
//
// Thread-safety: every method may be called from any thread at once (one
// mutex; each record is a few additions under it).
#ifndef INVARIANT_SERVER_COMMON_MODEL_STATISTICS_H_
#define INVARIANT_SERVER_COMMON_MODEL_STATISTICS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "inference/grpc_service.pb.h"

namespace invariant::server {

class ModelStatisticsTable {
 public:
  static constexpr size_t kMaxBatchSizes = 64;

  // One compute call of `rows` rows that took `compute`.
  void RecordBatch(const std::string& model, int64_t version, int64_t rows, absl::Duration compute);
  // One piece of a request that waited `queued` in the batch queue.
  void RecordQueue(const std::string& model, int64_t version, absl::Duration queued);
  // One request that ended at `end` (OK or not), `elapsed` after its handler began.
  void RecordRequest(const std::string& model, int64_t version, bool ok, absl::Duration elapsed,
                     absl::Time end);
  // One request's clips decoded into rows in `decoding`.
  void RecordInput(const std::string& model, int64_t version, absl::Duration decoding);
  // One request's outputs written in `writing` after its compute.
  void RecordOutput(const std::string& model, int64_t version, absl::Duration writing);
  // Erases the entry of (model, version), if any, and drops its records
  // until Loaded.
  void Forget(const std::string& model, int64_t version);
  // (model, version) serves (again): its records count from 0.
  void Loaded(const std::string& model, int64_t version);

  // Sets `out` to the statistics of (model, version): its name, its version
  // in decimal, and zeros when nothing was recorded.
  void Fill(const std::string& model, int64_t version, inference::ModelStatistics* out) const;

 private:
  struct Duration {
    uint64_t count = 0;
    uint64_t ns = 0;
    void Add(absl::Duration d);
  };
  struct Entry {
    uint64_t last_inference_ms = 0;
    uint64_t inference_count = 0;
    uint64_t execution_count = 0;
    Duration success, fail, queue, compute_input, compute_infer, compute_output;
    std::map<int64_t, Duration> batch_compute;  // by batch size, at most kMaxBatchSizes
  };
  // The entry records go to, or null for a forgotten version.
  Entry* At(const std::string& model, int64_t version) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, int64_t>, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<std::string, int64_t>> forgotten_ ABSL_GUARDED_BY(mu_);
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_COMMON_MODEL_STATISTICS_H_
