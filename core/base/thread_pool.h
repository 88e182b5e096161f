// thread_pool.h: one process-wide pool of worker threads for the kernels.
//
// Every encoder splits its work into independent tasks and runs them with
// ParallelFor on the default pool, so one Encode call uses all cores. The
// calling thread always takes part, so ParallelFor is correct with any pool
// size, including 1. Work that must not run on its submitter's thread (the
// server's batches, never computed on gRPC threads) is handed to the pool
// with Schedule; a scheduled task that calls ParallelFor is its caller and
// the other workers help, so it too uses all n threads.
//
// Contract:
//  * ParallelFor(n, fn) calls fn(i) exactly once for every i in [0, n), in
//    unspecified order and on unspecified threads, and returns when all
//    calls have returned. Tasks must not throw.
//  * It is safe to call from many threads at once (the server encodes on
//    several request threads) and from inside a task (a nested call never
//    deadlocks: its caller runs its tasks itself when every worker is busy).
//  * Results must not depend on which thread runs a task: the kernels give
//    each task a disjoint part of the output and fixed summation orders.
//  * Schedule(fn) runs fn once on a worker, after the ParallelFor tasks
//    already waiting (helping running computations first), in submission
//    order with other scheduled tasks. The destructor runs the scheduled
//    tasks still queued before it joins the workers.
//
// Sizing: the default pool has DefaultThreadCount() threads, the number of
// hardware threads unless SetDefaultThreadCount(n) was called before the
// pool was first used (the server's and the trainer's --threads flags).
#ifndef INVARIANT_CORE_BASE_THREAD_POOL_H_
#define INVARIANT_CORE_BASE_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace invariant {

class ThreadPool {
 public:
  // A pool of num_threads threads of compute: a ParallelFor caller plus at
  // most num_threads − 1 helping workers. The pool owns num_threads workers,
  // so that a scheduled task (whose caller is a worker) also gets
  // num_threads − 1 helpers. num_threads < 1 is treated as 1.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();  // runs queued scheduled tasks, joins; no ParallelFor may be running
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn(0) … fn(n_tasks − 1), each exactly once; see the contract above.
  void ParallelFor(int64_t n_tasks, absl::FunctionRef<void(int64_t)> fn);

  // Runs fn once on a worker thread, never on the calling thread.
  void Schedule(std::function<void()> fn);

 private:
  struct Job;
  void WorkerLoop();
  // Claims and runs tasks of `job` until none is left unclaimed.
  static void RunTasks(Job& job);

  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<std::shared_ptr<Job>> jobs_;  // jobs with unclaimed tasks
  std::deque<std::function<void()>> scheduled_;
  const int num_threads_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// Sets the size of the default pool. Call once at start-up, before any
// encoder runs. Errors: n < 1 (InvalidArgument); the default pool already
// exists with a different size (FailedPrecondition).
absl::Status SetDefaultThreadCount(int n);

// The size the default pool has or will have.
int DefaultThreadCount();

// The process-wide pool, created on first use.
ThreadPool& DefaultThreadPool();

// DefaultThreadPool().ParallelFor(n_tasks, fn).
void ParallelFor(int64_t n_tasks, absl::FunctionRef<void(int64_t)> fn);

// Tests only: replaces the default pool by one of n threads. Not safe while
// any other thread may be using the pool.
void ResetDefaultThreadPoolForTesting(int n);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_THREAD_POOL_H_
