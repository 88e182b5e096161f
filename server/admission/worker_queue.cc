#include "server/admission/worker_queue.h"

#include <utility>

#include "core/base/thread_priority.h"

namespace invariant::server {
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
