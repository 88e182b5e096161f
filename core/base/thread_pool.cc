#include "core/base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"

namespace invariant {

// One ParallelFor call. Tasks are claimed with fetch_add on next_task; the
// caller waits until `finished` reaches n_tasks.
struct ThreadPool::Job {
  Job(int64_t n, absl::FunctionRef<void(int64_t)> f) : n_tasks(n), fn(f) {}
  const int64_t n_tasks;
  absl::FunctionRef<void(int64_t)> fn;
  std::atomic<int64_t> next_task{0};
  std::atomic<int64_t> finished{0};
  std::mutex mu;
  std::condition_variable done;
};

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  workers_.reserve(static_cast<size_t>(num_threads_));
  for (int i = 0; i < num_threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunTasks(Job& job) {
  int64_t ran = 0;
  for (int64_t i = job.next_task.fetch_add(1); i < job.n_tasks; i = job.next_task.fetch_add(1)) {
    job.fn(i);
    ++ran;
  }
  if (ran > 0 && job.finished.fetch_add(ran) + ran == job.n_tasks) {
    std::lock_guard<std::mutex> lock(job.mu);
    job.done.notify_all();
  }
}

void ThreadPool::Schedule(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    scheduled_.push_back(std::move(fn));
  }
  work_ready_.notify_one();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    std::function<void()> scheduled;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [this] { return stopping_ || !jobs_.empty() || !scheduled_.empty(); });
      if (jobs_.empty()) {
        if (scheduled_.empty()) return;  // stopping and drained
        scheduled = std::move(scheduled_.front());
        scheduled_.pop_front();
      } else {
        job = jobs_.front();
        // Every task of the front job is claimed or about to be: later
        // arrivals go to the next job.
        if (job->next_task.load() >= job->n_tasks) {
          jobs_.pop_front();
          continue;
        }
      }
    }
    if (scheduled) {
      scheduled();
      continue;
    }
    RunTasks(*job);
    std::lock_guard<std::mutex> lock(mu_);
    if (!jobs_.empty() && jobs_.front() == job) jobs_.pop_front();
  }
}

void ThreadPool::ParallelFor(int64_t n_tasks, absl::FunctionRef<void(int64_t)> fn) {
  if (n_tasks <= 0) return;
  if (n_tasks == 1 || num_threads_ == 1) {
    for (int64_t i = 0; i < n_tasks; ++i) fn(i);
    return;
  }
  auto job = std::make_shared<Job>(n_tasks, fn);
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(job);
  }
  // The caller is one of the num_threads_ threads of compute.
  const int64_t helpers = std::min<int64_t>(n_tasks - 1, num_threads_ - 1);
  for (int64_t i = 0; i < helpers; ++i) work_ready_.notify_one();
  RunTasks(*job);
  {
    std::unique_lock<std::mutex> lock(job->mu);
    job->done.wait(lock, [&] { return job->finished.load() == job->n_tasks; });
  }
  // Workers drop exhausted jobs lazily; drop ours now if it is still queued.
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(jobs_.begin(), jobs_.end(), job);
  if (it != jobs_.end()) jobs_.erase(it);
}

namespace {

std::mutex default_mu;
int default_count = 0;  // 0: not set, use the hardware count
// Never destroyed: request threads may still be encoding while the process
// exits, and joining workers from a static destructor would race with them.
ThreadPool* default_pool = nullptr;
std::atomic<ThreadPool*> default_pool_ptr{nullptr};

int HardwareThreads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

}  // namespace

absl::Status SetDefaultThreadCount(int n) {
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat("threads must be >= 1, got ", n));
  std::lock_guard<std::mutex> lock(default_mu);
  if (default_pool != nullptr && default_pool->num_threads() != n) {
    return absl::FailedPreconditionError(
        absl::StrCat("the thread pool already runs ", default_pool->num_threads(),
                     " threads; set its size before the first encoder runs"));
  }
  default_count = n;
  return absl::OkStatus();
}

int DefaultThreadCount() {
  std::lock_guard<std::mutex> lock(default_mu);
  if (default_pool != nullptr) return default_pool->num_threads();
  return default_count > 0 ? default_count : HardwareThreads();
}

ThreadPool& DefaultThreadPool() {
  ThreadPool* pool = default_pool_ptr.load(std::memory_order_acquire);
  if (pool != nullptr) return *pool;
  std::lock_guard<std::mutex> lock(default_mu);
  if (default_pool == nullptr) {
    default_pool = new ThreadPool(default_count > 0 ? default_count : HardwareThreads());
    default_pool_ptr.store(default_pool, std::memory_order_release);
  }
  return *default_pool;
}

void ParallelFor(int64_t n_tasks, absl::FunctionRef<void(int64_t)> fn) {
  DefaultThreadPool().ParallelFor(n_tasks, fn);
}

void ResetDefaultThreadPoolForTesting(int n) {
  std::lock_guard<std::mutex> lock(default_mu);
  default_pool_ptr.store(nullptr, std::memory_order_release);
  delete default_pool;
  default_count = std::max(1, n);
  default_pool = new ThreadPool(default_count);
  default_pool_ptr.store(default_pool, std::memory_order_release);
}

}  // namespace invariant
