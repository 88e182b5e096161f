// batcher.h: dynamic batching of row-wise compute jobs (docs/architecture.md, "The data path").
//
// Jobs wait in one queue per (key, method) — one per model version and
// method. Concurrent small jobs of a queue are merged into one compute call of
// up to `max_batch_rows` rows: a batch is cut when it is full, when its oldest
// piece has waited `max_batch_delay`, or — unless `wait_when_idle` — at once
// when none of its queue's batches is computing (work-conserving: a lone
// request on an idle server pays no batching delay, while under load requests
// queue up behind the running batch and are merged). At most
// `max_concurrent_batches` batches compute at once.
//
// Every batch is computed on the compute pool (core/base/thread_pool.h, the
// default pool unless `pool` is set): never on the submitting thread (a gRPC
// callback thread), and the batcher owns no compute threads. A scheduled batch
// runs on a pool worker, whose encoder calls ParallelFor with the other
// workers helping. One small clock thread only cuts delayed batches and drops
// expired jobs; it never computes.
//
// A job larger than `max_batch_rows` is queued as pieces of that one job
// (row ranges; the job itself is never copied), which may compute in parallel
// batches; its `done` runs once, after the last piece.
//
// Leaving the queue: a job whose deadline passes, or that is cancelled
// (CancelToken, wired to gRPC's OnCancel), leaves the queue at once: its
// queued pieces are removed without compute and `done` runs with
// DEADLINE_EXCEEDED or the cancellation's status as soon as none of its pieces
// is computing (a computing piece finishes first, since it writes into the
// caller's buffers). `done` releases whatever the job captured.
//
// Admission: Submit refuses at once with RESOURCE_EXHAUSTED when the live
// queued rows of the job's label would exceed `max_queue_rows`, or the live
// queued bytes of all queues (rows · (in_dim + out_dim) · 4, the request's
// input and output buffers) would exceed `max_queue_bytes`. Jobs that left the
// queue no longer count, so only live work can fill it.
//
// With `enabled == false` every job is its own compute call (no merging, no
// splitting, no delay), still on the pool: the "batching off" mode.
//
// Thread-safety: every method may be called from any thread. `done` is called
// exactly once per accepted job, never under the batcher's lock, from a pool
// worker, the clock thread, or a thread calling CancelToken::Cancel.
#ifndef INVARIANT_SERVER_BATCHING_BATCHER_H_
#define INVARIANT_SERVER_BATCHING_BATCHER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/base/thread_pool.h"

namespace invariant::server {

class Batcher;

// Computes `out` (n × out_dim) from `x` (n × in_dim), row-major. Must be
// thread-safe: several batches of the same key may run at once.
using RowComputeFn = std::function<void(int64_t n, const float* x, float* out)>;

// Observers for metrics; each may be empty. `label` is the job's label and
// `version` its version (BatchJob; every job of a batch shares both).
struct BatcherObservers {
  std::function<void(const std::string& label, int64_t version, const std::string& method,
                     int64_t rows, double compute_seconds)>
      on_batch;
  std::function<void(const std::string& label, int64_t version, double queue_seconds)> on_dequeue;
  // Called with the batcher's lock held, so the values arrive in order: it
  // must be quick and must not call into the batcher.
  std::function<void(const std::string& label, int64_t queued_rows)> on_queue_rows;
  // A job that left its queue unfinished because its call was cancelled or
  // its deadline passed, with that status. Called with the lock held, like
  // on_queue_rows.
  std::function<void(const std::string& label, const absl::Status& status)> on_abandoned;
};

struct BatcherOptions {
  bool enabled = true;
  int64_t max_batch_rows = 64;                               // rows per compute call
  absl::Duration max_batch_delay = absl::Microseconds(500);  // oldest piece's wait
  int64_t max_queue_rows = 1 << 16;                          // live queued rows per label
  int64_t max_queue_bytes = int64_t{1} << 30;                // live queued bytes, all labels
  int max_concurrent_batches = 2;                            // batches computing at once
  // false: cut a batch at once while none of its queue is computing. true:
  // always wait for a full batch or max_batch_delay.
  bool wait_when_idle = false;
  // Tests: start paused (see Pause); the server's --testonly_start_paused.
  bool start_paused = false;
  ThreadPool* pool = nullptr;  // null: DefaultThreadPool()
  BatcherObservers observers;
};

// Where the times of a call's jobs add up (BatchJob::times), for its
// request record (server/access_log/request_record.h): queue_ns, each job's
// wait from Submit until its first piece was taken for compute; compute_ns,
// the compute calls its pieces were in (a batch shared with other jobs counts
// whole for each). A call that submits several jobs (a stream) shares one.
// Thread-safe (the batch threads add to it at once).
struct BatchJobTimes {
  std::atomic<int64_t> queue_ns{0};
  std::atomic<int64_t> compute_ns{0};
};

// One unit of work. Jobs with equal (key, method) share a queue and may share
// a compute call; the caller guarantees that equal keys mean the same
// `compute`, in_dim and out_dim. `x` and `out` must stay valid until `done`
// runs.
struct BatchJob {
  const void* key = nullptr;  // e.g. the model's address
  std::string method;         // e.g. "Featurize"
  std::string label;          // e.g. the model name (metrics, queue limit)
  int64_t version = 0;        // e.g. the model version (observers only; same key, same version)
  RowComputeFn compute;       // released once done has run
  int64_t in_dim = 0;
  int64_t out_dim = 0;
  int64_t num_rows = 0;
  const float* x = nullptr;
  float* out = nullptr;
  absl::Time deadline = absl::InfiniteFuture();
  std::function<void(absl::Status)> done;  // released once it has run
  std::shared_ptr<BatchJobTimes> times;    // may be null: not recorded
};

// The cancellation of one call, shared by the jobs it submits (a unary call
// submits one or two, a stream one per message). Cancel may come before,
// during or after Submit: a job submitted after Cancel is refused with the
// cancellation's status; a queued one leaves its queue at once.
class CancelToken {
 public:
  CancelToken() = default;
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  // Cancels every job registered now or later with `reason` (first call
  // wins; later calls do nothing). Runs the cancelled jobs' `done` that can
  // run at once on this thread.
  void Cancel(absl::Status reason);
  // The status given to Cancel, or OK while not cancelled.
  absl::Status reason() const;

 private:
  friend class Batcher;
  struct Entry {
    Batcher* batcher;
    std::weak_ptr<void> job;
  };
  // Registers a job; false (and nothing registered) when already cancelled.
  bool Register(Batcher* batcher, std::weak_ptr<void> job);

  mutable absl::Mutex mu_;
  absl::Status reason_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  size_t prune_at_ ABSL_GUARDED_BY(mu_) = 16;  // drop finished jobs' entries at this size
};

class Batcher {
 public:
  explicit Batcher(BatcherOptions options);
  // Stop().
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Accepts `job` (OK; `done` will run) or refuses it (RESOURCE_EXHAUSTED when
  // the queue is full, DEADLINE_EXCEEDED when its deadline has passed, the
  // token's status when `cancel` is already cancelled, INVALID_ARGUMENT for an
  // empty or malformed job, UNAVAILABLE after Stop; `done` will not run).
  // `cancel` may be null.
  absl::Status Submit(BatchJob job, const std::shared_ptr<CancelToken>& cancel = nullptr);

  // Computes every queued job (ignoring delays and a pause), waits for every
  // batch to finish, stops the clock. Later Submits are UNAVAILABLE. Idempotent.
  void Stop();

  // Test hook: while paused no batch starts (jobs queue up; deadlines,
  // cancellation and admission still act). Resume lets the queued batches go.
  void Pause();
  void Resume();

  // The clock's step, as of `now`: drops the queued jobs whose deadline is at
  // or before `now` and cuts the delayed batches that are due. The clock
  // thread calls it with the real time; tests with a later time.
  void Tick(absl::Time now);

  // Live rows queued (not yet computing) for `label`; live bytes of all queues.
  int64_t QueuedRows(const std::string& label) const;
  int64_t QueuedBytes() const;
  // Batches computing now (started on the pool, not finished).
  int RunningBatches() const;

 private:
  struct Job;
  struct Piece;
  struct Queue;
  struct Batch;
  friend class CancelToken;

  // Removes `job`'s queued pieces and ends it with `reason` (its done runs
  // here, or after its computing pieces). Nothing when it already ended.
  void Cancel(const std::shared_ptr<Job>& job, absl::Status reason);
  // Ends `job` (under the lock): removes its queued pieces, records `reason`,
  // and hands its done to `finished` when none of its pieces is computing.
  void DropJobLocked(Job& job, absl::Status reason, std::vector<std::shared_ptr<Job>>& finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Cuts every batch that may start now into `ready`.
  void DispatchLocked(absl::Time now, std::vector<Batch>& ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool CutBatchLocked(Queue& queue, absl::Time now, std::vector<Batch>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ExpireLocked(absl::Time now, std::vector<std::shared_ptr<Job>>& finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PublishQueueRowsLocked(const Queue& queue) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When the clock must next look at the queues.
  absl::Time NextWakeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WakeClockLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Schedules `ready` on the pool and runs the `finished` jobs' done (outside the lock).
  void Launch(std::vector<Batch> ready, std::vector<std::shared_ptr<Job>> finished);
  // On a pool thread: TakeLivePieces, Compute, EndBatch.
  void RunBatch(Batch& batch);
  // The pieces of `batch` whose job is still running (a job whose deadline
  // passed by `start` is ended first); each other piece given back.
  std::vector<Piece> TakeLivePieces(Batch& batch, absl::Time start,
                                    std::vector<std::shared_ptr<Job>>& finished)
      ABSL_LOCKS_EXCLUDED(mu_);
  // One compute call over every piece of `live` (merged when several), with
  // the dequeue and batch observers.
  void Compute(const std::vector<Piece>& live, absl::Time start) const;
  // Gives the computed pieces back, retires an empty queue, dispatches what
  // may start now and runs the finished jobs' done.
  void EndBatch(Batch& batch, std::vector<Piece> live, std::vector<std::shared_ptr<Job>> finished)
      ABSL_LOCKS_EXCLUDED(mu_);
  // One piece of its job no longer computing: the job goes to `finished`
  // when that was its last piece.
  void PieceEndedLocked(const Piece& piece, std::vector<std::shared_ptr<Job>>& finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ClockLoop();

  const BatcherOptions options_;
  ThreadPool& pool_;
  mutable absl::Mutex mu_;
  absl::CondVar clock_cv_;  // the clock's wake-up
  absl::CondVar idle_cv_;   // Stop waits for running batches
  // One queue per (key, method).
  std::map<std::pair<const void*, std::string>, std::unique_ptr<Queue>> queues_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> queued_rows_ ABSL_GUARDED_BY(mu_);  // by label
  int64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Jobs with queued pieces and a finite deadline, by deadline.
  std::multimap<absl::Time, Job*> deadlines_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;  // batches scheduled or computing
  int exiting_ ABSL_GUARDED_BY(mu_) = 0;  // finished batches still handing over (Stop waits)
  bool paused_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool clock_exit_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time clock_wake_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();  // the clock sleeps until
  std::thread clock_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_BATCHING_BATCHER_H_
