#include "server/batcher.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

// The shared completion of a job split into chunks.
struct SplitState {
  std::atomic<int64_t> remaining{0};
  std::mutex mu;
  absl::Status first_error;
  std::function<void(absl::Status)> done;
};

}  // namespace

Batcher::Batcher(BatcherOptions options) : options_(std::move(options)) {
  if (!options_.enabled) return;
  const int threads = std::max(1, options_.num_threads);
  workers_.reserve(threads);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

Batcher::~Batcher() { Stop(); }

void Batcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_ && workers_.empty()) return;
    stopped_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

int64_t Batcher::QueuedRows(const std::string& label) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = queued_rows_.find(label);
  return it == queued_rows_.end() ? 0 : it->second;
}

void Batcher::ComputeInline(BatchJob& job) {
  if (absl::Now() > job.deadline) {
    job.done(absl::DeadlineExceededError("deadline expired before compute"));
    return;
  }
  const absl::Time start = absl::Now();
  job.compute(job.num_rows, job.x, job.out);
  if (options_.observers.on_batch) {
    options_.observers.on_batch(job.label, job.method, job.num_rows,
                                absl::ToDoubleSeconds(absl::Now() - start));
  }
  job.done(absl::OkStatus());
}

absl::Status Batcher::Submit(BatchJob job) {
  if (job.num_rows <= 0 || job.in_dim <= 0 || job.out_dim <= 0 || !job.compute || !job.done) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch job: expected positive num_rows, in_dim, out_dim and a compute and done function, "
        "received num_rows=",
        job.num_rows, " in_dim=", job.in_dim, " out_dim=", job.out_dim));
  }
  if (!options_.enabled) {
    ComputeInline(job);
    return absl::OkStatus();
  }
  const int64_t chunk = std::max<int64_t>(1, options_.max_batch_rows);
  if (options_.compute_inline_when_idle && !options_.wait_when_idle && job.num_rows <= chunk) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!stopped_ && computing_ == 0 && !forming_ && queue_.empty()) {
      ++computing_;  // later jobs queue behind this one and may merge
      lock.unlock();
      std::vector<Task> batch;
      batch.push_back(Task{std::move(job), absl::Now()});
      RunBatch(std::move(batch));
      lock.lock();
      const bool idle = --computing_ == 0;
      lock.unlock();
      if (idle) cv_.notify_all();
      return absl::OkStatus();
    }
  }
  const absl::Time now = absl::Now();
  int64_t queued_now = 0;
  const std::string label = job.label;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return absl::UnavailableError("the batcher is shutting down");
    int64_t& queued = queued_rows_[job.label];
    if (queued + job.num_rows > options_.max_queue_rows) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "queue of model '", job.label,
          "' is full: expected at most max_queue_rows=", options_.max_queue_rows, " queued rows, ",
          queued, " are queued and the request adds ", job.num_rows));
    }
    queued += job.num_rows;
    queued_now = queued;
    if (job.num_rows <= chunk) {
      queue_.push_back(Task{std::move(job), now});
    } else {
      auto split = std::make_shared<SplitState>();
      const int64_t pieces = (job.num_rows + chunk - 1) / chunk;
      split->remaining = pieces;
      split->done = std::move(job.done);
      for (int64_t p = 0; p < pieces; ++p) {
        BatchJob piece = job;  // copies key, method, label, compute, dims, deadline
        const int64_t begin = p * chunk;
        piece.num_rows = std::min(chunk, job.num_rows - begin);
        piece.x = job.x + begin * job.in_dim;
        piece.out = job.out + begin * job.out_dim;
        piece.done = [split](absl::Status status) {
          if (!status.ok()) {
            std::lock_guard<std::mutex> lock(split->mu);
            if (split->first_error.ok()) split->first_error = status;
          }
          if (split->remaining.fetch_sub(1) == 1) {
            absl::Status result;
            {
              std::lock_guard<std::mutex> lock(split->mu);
              result = split->first_error;
            }
            split->done(result);
          }
        };
        queue_.push_back(Task{std::move(piece), now});
      }
    }
    // Published under the lock: two publishers racing after unlock could
    // leave a stale value in the gauge.
    if (options_.observers.on_queue_rows) options_.observers.on_queue_rows(label, queued_now);
  }
  cv_.notify_all();
  return absl::OkStatus();
}

bool Batcher::SameBatch(const Task& a, const Task& b) const {
  return a.job.key == b.job.key && a.job.method == b.job.method;
}

int64_t Batcher::QueuedRowsForKeyLocked(const Task& head) const {
  int64_t rows = 0;
  for (const Task& t : queue_) {
    if (SameBatch(t, head)) rows += t.job.num_rows;
    if (rows >= options_.max_batch_rows) break;
  }
  return rows;
}

void Batcher::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return (stopped_ && queue_.empty()) || (!queue_.empty() && !forming_); });
    if (queue_.empty()) return;  // stopped and drained
    forming_ = true;
    // Wait until the head's batch is full or its oldest job has waited long enough.
    while (!stopped_) {
      const Task& head = queue_.front();
      if (QueuedRowsForKeyLocked(head) >= options_.max_batch_rows) break;
      if (!options_.wait_when_idle && computing_ == 0) break;
      const absl::Time wake = head.enqueued + options_.max_batch_delay;
      if (absl::Now() >= wake) break;
      cv_.wait_until(lock, absl::ToChronoTime(wake));
    }
    std::vector<Task> batch;
    int64_t rows = 0;
    const void* const key = queue_.front().job.key;
    const std::string method = queue_.front().job.method;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->job.key != key || it->job.method != method) {
        ++it;
        continue;
      }
      if (!batch.empty() && rows + it->job.num_rows > options_.max_batch_rows) break;
      rows += it->job.num_rows;
      queued_rows_[it->job.label] -= it->job.num_rows;
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
      if (rows >= options_.max_batch_rows) break;
    }
    const std::string label = batch.front().job.label;
    const int64_t queued_after = queued_rows_[label];
    forming_ = false;
    ++computing_;
    if (options_.observers.on_queue_rows) options_.observers.on_queue_rows(label, queued_after);
    lock.unlock();
    cv_.notify_all();
    RunBatch(std::move(batch));
    lock.lock();
    --computing_;
    if (computing_ == 0) cv_.notify_all();  // a forming worker may now cut at once
  }
}

void Batcher::RunBatch(std::vector<Task> batch) {
  const absl::Time now = absl::Now();
  std::vector<Task> live;
  live.reserve(batch.size());
  for (Task& task : batch) {
    if (options_.observers.on_dequeue) {
      options_.observers.on_dequeue(task.job.label, absl::ToDoubleSeconds(now - task.enqueued));
    }
    if (now > task.job.deadline) {
      task.job.done(absl::DeadlineExceededError(
          absl::StrCat("deadline expired after ", absl::FormatDuration(now - task.enqueued),
                       " in the queue of model '", task.job.label, "', before compute")));
      continue;
    }
    live.push_back(std::move(task));
  }
  if (live.empty()) return;
  const BatchJob& first = live.front().job;
  const int64_t in_dim = first.in_dim;
  const int64_t out_dim = first.out_dim;
  const absl::Time start = absl::Now();
  int64_t rows = 0;
  if (live.size() == 1) {
    rows = first.num_rows;
    first.compute(rows, first.x, first.out);
  } else {
    for (const Task& t : live) rows += t.job.num_rows;
    std::vector<float> x(static_cast<size_t>(rows * in_dim));
    std::vector<float> out(static_cast<size_t>(rows * out_dim));
    int64_t offset = 0;
    for (const Task& t : live) {
      std::memcpy(x.data() + offset * in_dim, t.job.x, sizeof(float) * t.job.num_rows * in_dim);
      offset += t.job.num_rows;
    }
    first.compute(rows, x.data(), out.data());
    offset = 0;
    for (const Task& t : live) {
      std::memcpy(t.job.out, out.data() + offset * out_dim,
                  sizeof(float) * t.job.num_rows * out_dim);
      offset += t.job.num_rows;
    }
  }
  if (options_.observers.on_batch) {
    options_.observers.on_batch(first.label, first.method, rows,
                                absl::ToDoubleSeconds(absl::Now() - start));
  }
  for (Task& t : live) t.job.done(absl::OkStatus());
}

}  // namespace invariant::server
