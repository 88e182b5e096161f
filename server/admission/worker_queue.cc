#include "server/admission/worker_queue.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace invariant::server {
namespace {

// Lowers the calling thread's CPU priority by `nice` (Linux: a thread's nice
// value is its own). Best effort: a failure leaves the priority as it was.
void LowerThisThreadsPriority(int nice) {
  if (nice <= 0) return;
  const id_t tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, tid);
  if (current == -1 && errno != 0) return;
  (void)setpriority(PRIO_PROCESS, tid, current + nice);
}

}  // namespace

WorkerQueue::WorkerQueue(int threads, bool start_paused, int nice) : paused_(start_paused) {
  if (threads < 1) threads = 1;
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, nice] {
      LowerThisThreadsPriority(nice);
      Loop();
    });
  }
}

WorkerQueue::~WorkerQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

void WorkerQueue::Post(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
}

void WorkerQueue::Pause() {
  absl::MutexLock lock(&mu_);
  paused_ = true;
}

void WorkerQueue::Resume() {
  absl::MutexLock lock(&mu_);
  paused_ = false;
}

int WorkerQueue::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(tasks_.size());
}

bool WorkerQueue::ReadyLocked() const {
  // Stopping runs what is queued, paused or not, before the threads end.
  if (stopping_) return true;
  return !tasks_.empty() && !paused_;
}

void WorkerQueue::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &WorkerQueue::ReadyLocked));
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace invariant::server
