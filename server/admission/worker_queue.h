// worker_queue.h: a few threads that do a request's heavy preparation (the
// decoding of sound clips) off the transport's threads.
//
// gRPC's completion-queue threads and the HTTP network thread must only move
// bytes: a request that needs seconds of decoding is handed to a
// WorkerQueue, and the transport thread returns at once. Tasks run in
// submission order on `threads` threads of their own (not the compute pool,
// whose workers compute batches). The queue itself is unbounded: what is
// queued is bounded by the admission taken before Post (inflight_budget.h;
// the handler leases the clip seconds a request will decode).
//
// Cancellation is the task's business: a task checks its call's
// CancelToken and deadline before and during its work (the clip decoder
// does, between clips) and ends early, so abandoned work stops at its next
// clip.
//
// Test hook: Pause holds every queued task (and later Posts) until Resume,
// so a test can queue calls, cancel them and watch them leave without work.
//
// Thread-safety: every method may be called from any thread. The
// destructor runs the tasks still queued (paused or not), then joins.
#ifndef INVARIANT_SERVER_ADMISSION_WORKER_QUEUE_H_
#define INVARIANT_SERVER_ADMISSION_WORKER_QUEUE_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace invariant::server {

class WorkerQueue {
 public:
  // `threads` < 1 is treated as 1. `nice` > 0 lowers the workers' CPU
  // priority by that much (their nice value; Linux), so the transport's
  // threads, which answer health and small calls, take a busy CPU first.
  explicit WorkerQueue(int threads, bool start_paused = false, int nice = 0);
  ~WorkerQueue();
  WorkerQueue(const WorkerQueue&) = delete;
  WorkerQueue& operator=(const WorkerQueue&) = delete;

  // Runs `task` once on a worker, never on the calling thread.
  void Post(std::function<void()> task);

  void Pause();
  void Resume();
  // Tasks queued, not yet started.
  int queued() const;

 private:
  void Loop();
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool paused_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_ADMISSION_WORKER_QUEUE_H_
