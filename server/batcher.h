// batcher.h: dynamic batching of row-wise compute jobs (ARCHITECTURE "data path").
//
// Concurrent small requests for the same model and method are merged into one
// compute call of up to `max_batch_rows` rows: a batch is cut when it is full
// or when its oldest job has waited `max_batch_delay`, and — unless
// `wait_when_idle` — at once when no batch is being computed (work-conserving:
// a lone request on an idle server pays no batching delay, while under load
// requests queue up behind the running batches and are merged). A job larger than
// `max_batch_rows` is split into chunks that different worker threads compute
// in parallel; its `done` runs once, after the last chunk. A job whose
// deadline has passed when its batch is formed is dropped before compute with
// DEADLINE_EXCEEDED. Submit refuses at once with RESOURCE_EXHAUSTED when the
// rows queued for the job's label would exceed `max_queue_rows`.
//
// With `enabled == false` Submit computes inline on the caller's thread, one
// job per compute call (the "batching off" mode of the benchmark).
//
// Thread-safety: every method may be called from any thread. `done` is called
// exactly once per accepted job, from a worker thread (or inline on the
// submitting thread, see compute_inline_when_idle), and never under the
// batcher's lock.
#ifndef INVARIANT_SERVER_BATCHER_H_
#define INVARIANT_SERVER_BATCHER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace invariant::server {

// Computes `out` (n × out_dim) from `x` (n × in_dim), row-major. Must be
// thread-safe: several batches of the same key may run at once.
using RowComputeFn = std::function<void(int64_t n, const float* x, float* out)>;

// Observers for metrics; each may be empty. `label` is the job's label.
struct BatcherObservers {
  std::function<void(const std::string& label, const std::string& method, int64_t rows,
                     double compute_seconds)>
      on_batch;
  std::function<void(const std::string& label, double queue_seconds)> on_dequeue;
  // Called with the batcher's lock held, so the values arrive in order: it
  // must be quick and must not call into the batcher.
  std::function<void(const std::string& label, int64_t queued_rows)> on_queue_rows;
};

struct BatcherOptions {
  bool enabled = true;
  int64_t max_batch_rows = 64;                               // rows per compute call
  absl::Duration max_batch_delay = absl::Microseconds(500);  // oldest job's wait
  int64_t max_queue_rows = 1 << 16;                          // queued rows per label
  int num_threads = 2;                                       // worker threads
  // false: cut a batch at once while no batch is computing. true: always wait
  // for a full batch or max_batch_delay (tests that need a request to stay queued).
  bool wait_when_idle = false;
  // With wait_when_idle false: a job of at most max_batch_rows rows that finds
  // the batcher completely idle (nothing queued, forming or computing) is
  // computed on the submitting thread, saving the hand-off to a worker; `done`
  // then runs before Submit returns. Jobs arriving meanwhile queue as usual.
  bool compute_inline_when_idle = false;
  BatcherObservers observers;
};

// One unit of work. Jobs with equal (key, method) may share a compute call;
// the caller guarantees that equal keys mean the same `compute`, in_dim and
// out_dim. `x` and `out` must stay valid until `done` runs.
struct BatchJob {
  const void* key = nullptr;  // e.g. the model's address
  std::string method;         // e.g. "Featurize"
  std::string label;          // e.g. the model name (metrics, queue limit)
  RowComputeFn compute;       // kept alive until done
  int64_t in_dim = 0;
  int64_t out_dim = 0;
  int64_t num_rows = 0;
  const float* x = nullptr;
  float* out = nullptr;
  absl::Time deadline = absl::InfiniteFuture();
  std::function<void(absl::Status)> done;
};

class Batcher {
 public:
  explicit Batcher(BatcherOptions options);
  // Stops the workers after computing every queued job.
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Accepts `job` (OK; `done` will run) or refuses it (RESOURCE_EXHAUSTED when
  // the queue is full, INVALID_ARGUMENT for an empty or malformed job,
  // UNAVAILABLE after Stop; `done` will not run).
  absl::Status Submit(BatchJob job);

  // Computes the queued jobs, then joins the workers. Idempotent.
  void Stop();

  // Rows queued (not yet being computed) for `label`.
  int64_t QueuedRows(const std::string& label) const;

 private:
  struct Task {
    BatchJob job;  // a whole job or one chunk of a split job
    absl::Time enqueued;
  };

  void WorkerLoop();
  bool SameBatch(const Task& a, const Task& b) const;
  int64_t QueuedRowsForKeyLocked(const Task& head) const;
  void RunBatch(std::vector<Task> batch);
  void ComputeInline(BatchJob& job);

  const BatcherOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::list<Task> queue_;
  std::map<std::string, int64_t> queued_rows_;  // by label
  bool forming_ = false;                        // one worker forms a batch at a time
  int computing_ = 0;                           // batches being computed
  bool stopped_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_BATCHER_H_
