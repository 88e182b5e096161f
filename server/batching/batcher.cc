#include "server/batching/batcher.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace invariant::server {

// A submitted job, shared by its pieces. Every field but `spec.x/out/dims` is
// read and written under the batcher's lock, except `spec.compute` (read by
// computing pieces; released only when none is left) and `spec.done` (moved
// out by the one thread that finishes the job).
struct Batcher::Job : std::enable_shared_from_this<Job> {
  BatchJob spec;
  Queue* queue = nullptr;
  absl::Time enqueued;
  int64_t bytes_per_row = 0;
  int64_t pieces_queued = 0;
  int64_t pieces_running = 0;
  bool dequeued = false;  // a piece was taken for compute (BatchJob::times)
  bool ended = false;     // left the queue early (cancelled or expired)
  bool finished = false;  // done handed to a thread
  absl::Status status;    // the outcome
  bool has_deadline_entry = false;
  std::multimap<absl::Time, Job*>::iterator deadline_entry;
};

// Rows [begin, begin + rows) of one job.
struct Batcher::Piece {
  std::shared_ptr<Job> job;
  int64_t begin = 0;
  int64_t rows = 0;
};

struct Batcher::Queue {
  std::pair<const void*, std::string> id;  // (key, method)
  std::string label;
  std::deque<Piece> pieces;
  int64_t rows = 0;  // of `pieces`
  int running = 0;   // batches of this queue computing
};

struct Batcher::Batch {
  Queue* queue = nullptr;
  std::vector<Piece> pieces;
};

namespace {

constexpr int64_t kFloatBytes = sizeof(float);

}  // namespace

// ---------------------------------------------------------------- CancelToken

void CancelToken::Cancel(absl::Status reason) {
  std::vector<Entry> entries;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return;
    cancelled_ = true;
    reason_ = reason;
    entries.swap(entries_);
  }
  for (const Entry& entry : entries) {
    if (std::shared_ptr<void> job = entry.job.lock()) {
      entry.batcher->Cancel(std::static_pointer_cast<Batcher::Job>(job), reason);
    }
  }
}

absl::Status CancelToken::reason() const {
  absl::MutexLock lock(&mu_);
  return reason_;
}

bool CancelToken::Register(Batcher* batcher, std::weak_ptr<void> job) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  if (entries_.size() >= prune_at_) {  // a long stream: forget finished jobs
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [](const Entry& e) { return e.job.expired(); }),
                   entries_.end());
    prune_at_ = std::max<size_t>(16, 2 * entries_.size());
  }
  entries_.push_back(Entry{batcher, std::move(job)});
  return true;
}

// -------------------------------------------------------------------- Batcher

Batcher::Batcher(BatcherOptions options)
    : options_(std::move(options)),
      pool_(options_.pool != nullptr ? *options_.pool : DefaultThreadPool()),
      paused_(options_.start_paused) {
  clock_ = std::thread([this] { ClockLoop(); });
}

Batcher::~Batcher() { Stop(); }

void Batcher::Stop() {
  std::vector<Batch> ready;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_ && !clock_.joinable()) return;
    stopped_ = true;
    paused_ = false;
    DispatchLocked(absl::Now(), ready);
  }
  Launch(std::move(ready), {});
  {
    absl::MutexLock lock(&mu_);
    while (running_ > 0 || exiting_ > 0 || !queues_.empty()) idle_cv_.Wait(&mu_);
    clock_exit_ = true;
    clock_cv_.Signal();
  }
  if (clock_.joinable()) clock_.join();
}

void Batcher::Pause() {
  absl::MutexLock lock(&mu_);
  if (!stopped_) paused_ = true;
}

void Batcher::Resume() {
  std::vector<Batch> ready;
  {
    absl::MutexLock lock(&mu_);
    paused_ = false;
    DispatchLocked(absl::Now(), ready);
    WakeClockLocked();
  }
  Launch(std::move(ready), {});
}

void Batcher::Tick(absl::Time now) {
  std::vector<Batch> ready;
  std::vector<std::shared_ptr<Job>> finished;
  {
    absl::MutexLock lock(&mu_);
    ExpireLocked(now, finished);
    DispatchLocked(now, ready);
  }
  Launch(std::move(ready), std::move(finished));
}

int64_t Batcher::QueuedRows(const std::string& label) const {
  absl::MutexLock lock(&mu_);
  auto it = queued_rows_.find(label);
  return it == queued_rows_.end() ? 0 : it->second;
}

int64_t Batcher::QueuedBytes() const {
  absl::MutexLock lock(&mu_);
  return queued_bytes_;
}

int Batcher::RunningBatches() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

absl::Status Batcher::Submit(BatchJob spec, const std::shared_ptr<CancelToken>& cancel) {
  if (spec.num_rows <= 0 || spec.in_dim <= 0 || spec.out_dim <= 0 || !spec.compute || !spec.done) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch job: expected positive num_rows, in_dim, out_dim and a compute and done function, "
        "received num_rows=",
        spec.num_rows, " in_dim=", spec.in_dim, " out_dim=", spec.out_dim));
  }
  if (cancel != nullptr) {
    if (absl::Status reason = cancel->reason(); !reason.ok()) return reason;
  }
  const absl::Time now = absl::Now();
  if (spec.deadline <= now) {
    return absl::DeadlineExceededError(
        absl::StrCat("deadline expired before the request of model '", spec.label, "' was queued"));
  }
  auto job = std::make_shared<Job>();
  job->bytes_per_row = (spec.in_dim + spec.out_dim) * kFloatBytes;
  const int64_t bytes = spec.num_rows * job->bytes_per_row;
  std::vector<Batch> ready;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return absl::UnavailableError("the batcher is shutting down");
    int64_t& label_rows = queued_rows_[spec.label];
    if (label_rows + spec.num_rows > options_.max_queue_rows) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "queue of model '", spec.label,
          "' is full: expected at most max_queue_rows=", options_.max_queue_rows, " queued rows, ",
          label_rows, " are queued and the request adds ", spec.num_rows));
    }
    if (queued_bytes_ + bytes > options_.max_queue_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "batch queues are full: expected at most max_queue_bytes=", options_.max_queue_bytes,
          " queued bytes, ", queued_bytes_, " are queued and the request of model '", spec.label,
          "' adds ", bytes));
    }
    std::unique_ptr<Queue>& queue = queues_[{spec.key, spec.method}];
    if (queue == nullptr) {
      queue = std::make_unique<Queue>();
      queue->id = {spec.key, spec.method};
      queue->label = spec.label;
    }
    job->queue = queue.get();
    job->enqueued = now;
    job->spec = std::move(spec);
    const BatchJob& s = job->spec;
    const int64_t chunk =
        options_.enabled ? std::max<int64_t>(1, options_.max_batch_rows) : s.num_rows;
    for (int64_t begin = 0; begin < s.num_rows; begin += chunk) {
      queue->pieces.push_back(Piece{job, begin, std::min(chunk, s.num_rows - begin)});
      ++job->pieces_queued;
    }
    queue->rows += s.num_rows;
    label_rows += s.num_rows;
    queued_bytes_ += bytes;
    if (s.deadline != absl::InfiniteFuture()) {
      job->deadline_entry = deadlines_.emplace(s.deadline, job.get());
      job->has_deadline_entry = true;
    }
    PublishQueueRowsLocked(*queue);
    DispatchLocked(now, ready);
    WakeClockLocked();
  }
  // Registered after queueing: a Cancel racing with this Submit finds the job.
  if (cancel != nullptr && !cancel->Register(this, job)) Cancel(job, cancel->reason());
  Launch(std::move(ready), {});
  return absl::OkStatus();
}

void Batcher::Cancel(const std::shared_ptr<Job>& job, absl::Status reason) {
  std::vector<std::shared_ptr<Job>> finished;
  {
    absl::MutexLock lock(&mu_);
    DropJobLocked(*job, std::move(reason), finished);
  }
  Launch({}, std::move(finished));
}

void Batcher::DropJobLocked(Job& job, absl::Status reason,
                            std::vector<std::shared_ptr<Job>>& finished) {
  if (job.ended || job.finished) return;
  // Its queued pieces may be the last owners: keep it alive while it ends.
  std::shared_ptr<Job> keep = job.shared_from_this();
  job.ended = true;
  job.status = std::move(reason);
  const absl::StatusCode code = job.status.code();
  if (options_.observers.on_abandoned &&
      (code == absl::StatusCode::kCancelled || code == absl::StatusCode::kDeadlineExceeded)) {
    options_.observers.on_abandoned(job.spec.label, job.status);
  }
  if (job.pieces_queued > 0) {
    Queue& queue = *job.queue;
    int64_t rows = 0;
    auto is_job = [&job](const Piece& p) { return p.job.get() == &job; };
    for (const Piece& p : queue.pieces) {
      if (is_job(p)) rows += p.rows;
    }
    queue.pieces.erase(std::remove_if(queue.pieces.begin(), queue.pieces.end(), is_job),
                       queue.pieces.end());
    job.pieces_queued = 0;
    queue.rows -= rows;
    queued_rows_[queue.label] -= rows;
    queued_bytes_ -= rows * job.bytes_per_row;
    PublishQueueRowsLocked(queue);
  }
  if (job.has_deadline_entry) {
    deadlines_.erase(job.deadline_entry);
    job.has_deadline_entry = false;
  }
  if (job.pieces_running == 0) {
    job.finished = true;
    finished.push_back(std::move(keep));
  }
  if (job.queue->pieces.empty() && job.queue->running == 0) {
    const std::pair<const void*, std::string> id = job.queue->id;
    queues_.erase(id);  // no piece refers to it any more
    if (running_ == 0 && exiting_ == 0 && queues_.empty()) idle_cv_.SignalAll();
  }
}

void Batcher::ExpireLocked(absl::Time now, std::vector<std::shared_ptr<Job>>& finished) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    Job& job = *deadlines_.begin()->second;
    DropJobLocked(job,
                  absl::DeadlineExceededError(absl::StrCat(
                      "deadline expired after ", absl::FormatDuration(now - job.enqueued),
                      " in the queue of model '", job.spec.label, "', before compute")),
                  finished);
  }
}

void Batcher::PublishQueueRowsLocked(const Queue& queue) {
  if (!options_.observers.on_queue_rows) return;
  auto it = queued_rows_.find(queue.label);
  options_.observers.on_queue_rows(queue.label, it == queued_rows_.end() ? 0 : it->second);
}

bool Batcher::CutBatchLocked(Queue& queue, absl::Time now, std::vector<Batch>& ready) {
  if (queue.pieces.empty() || running_ >= std::max(1, options_.max_concurrent_batches)) {
    return false;
  }
  const int64_t max_rows = std::max<int64_t>(1, options_.max_batch_rows);
  const bool go = !options_.enabled || stopped_ || queue.rows >= max_rows ||
                  (!options_.wait_when_idle && queue.running == 0) ||
                  now >= queue.pieces.front().job->enqueued + options_.max_batch_delay;
  if (!go) return false;
  Batch batch;
  batch.queue = &queue;
  int64_t rows = 0;
  while (!queue.pieces.empty()) {
    Piece& piece = queue.pieces.front();
    if (!batch.pieces.empty() && (!options_.enabled || rows + piece.rows > max_rows)) break;
    Job& job = *piece.job;
    rows += piece.rows;
    queued_bytes_ -= piece.rows * job.bytes_per_row;
    ++job.pieces_running;
    if (--job.pieces_queued == 0 && job.has_deadline_entry) {
      deadlines_.erase(job.deadline_entry);
      job.has_deadline_entry = false;
    }
    batch.pieces.push_back(std::move(piece));
    queue.pieces.pop_front();
    if (rows >= max_rows) break;
  }
  queue.rows -= rows;
  queued_rows_[queue.label] -= rows;
  ++queue.running;
  ++running_;
  PublishQueueRowsLocked(queue);
  ready.push_back(std::move(batch));
  return true;
}

void Batcher::DispatchLocked(absl::Time now, std::vector<Batch>& ready) {
  if (paused_) return;
  // Round robin: at most one batch per queue per pass, so no queue starves.
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto& [id, queue] : queues_) progress |= CutBatchLocked(*queue, now, ready);
  }
}

absl::Time Batcher::NextWakeLocked() const {
  absl::Time wake = deadlines_.empty() ? absl::InfiniteFuture() : deadlines_.begin()->first;
  if (paused_ || !options_.enabled || running_ >= std::max(1, options_.max_concurrent_batches)) {
    return wake;  // a resume or a finishing batch dispatches
  }
  for (const auto& [id, queue] : queues_) {
    if (!queue->pieces.empty()) {
      wake = std::min(wake, queue->pieces.front().job->enqueued + options_.max_batch_delay);
    }
  }
  return wake;
}

void Batcher::WakeClockLocked() {
  if (NextWakeLocked() < clock_wake_) clock_cv_.Signal();
}

void Batcher::ClockLoop() {
  mu_.Lock();
  while (!clock_exit_) {
    std::vector<Batch> ready;
    std::vector<std::shared_ptr<Job>> finished;
    const absl::Time now = absl::Now();
    ExpireLocked(now, finished);
    DispatchLocked(now, ready);
    if (!ready.empty() || !finished.empty()) {
      clock_wake_ = absl::InfinitePast();  // busy: nobody needs to wake the clock
      mu_.Unlock();
      Launch(std::move(ready), std::move(finished));
      mu_.Lock();
      continue;
    }
    clock_wake_ = NextWakeLocked();
    if (clock_wake_ == absl::InfiniteFuture()) {
      clock_cv_.Wait(&mu_);
    } else {
      clock_cv_.WaitWithDeadline(&mu_, clock_wake_);
    }
  }
  mu_.Unlock();
}

void Batcher::Launch(std::vector<Batch> ready, std::vector<std::shared_ptr<Job>> finished) {
  for (Batch& batch : ready) {
    pool_.Schedule([this, batch = std::move(batch)]() mutable { RunBatch(batch); });
  }
  for (std::shared_ptr<Job>& job : finished) {
    // This thread alone finishes the job: nothing else touches done now.
    std::function<void(absl::Status)> done = std::move(job->spec.done);
    job->spec.done = nullptr;
    job->spec.compute = nullptr;
    absl::Status status = job->status;
    job.reset();
    done(std::move(status));
  }
}

void Batcher::RunBatch(Batch& batch) {
  const absl::Time start = absl::Now();
  std::vector<std::shared_ptr<Job>> finished;
  std::vector<Piece> live = TakeLivePieces(batch, start, finished);
  Compute(live, start);
  EndBatch(batch, std::move(live), std::move(finished));
}

void Batcher::PieceEndedLocked(const Piece& piece, std::vector<std::shared_ptr<Job>>& finished) {
  Job& job = *piece.job;
  if (--job.pieces_running == 0 && job.pieces_queued == 0 && !job.finished) {
    job.finished = true;
    finished.push_back(piece.job);
  }
}

std::vector<Batcher::Piece> Batcher::TakeLivePieces(Batch& batch, absl::Time start,
                                                    std::vector<std::shared_ptr<Job>>& finished) {
  std::vector<Piece> live;
  live.reserve(batch.pieces.size());
  absl::MutexLock lock(&mu_);
  for (Piece& piece : batch.pieces) {
    Job& job = *piece.job;
    if (!job.ended && start > job.spec.deadline) {
      DropJobLocked(job,
                    absl::DeadlineExceededError(absl::StrCat(
                        "deadline expired after ", absl::FormatDuration(start - job.enqueued),
                        " in the queue of model '", job.spec.label, "', before compute")),
                    finished);
    }
    if (job.ended) {  // cancelled or expired since the batch was cut: not computed
      PieceEndedLocked(piece, finished);
      continue;
    }
    if (job.spec.times != nullptr && !job.dequeued) {
      job.spec.times->queue_ns.fetch_add(absl::ToInt64Nanoseconds(start - job.enqueued),
                                         std::memory_order_relaxed);
    }
    job.dequeued = true;
    live.push_back(std::move(piece));
  }
  return live;
}

void Batcher::Compute(const std::vector<Piece>& live, absl::Time start) const {
  if (options_.observers.on_dequeue) {
    for (const Piece& piece : live) {
      options_.observers.on_dequeue(piece.job->spec.label, piece.job->spec.version,
                                    absl::ToDoubleSeconds(start - piece.job->enqueued));
    }
  }
  if (live.empty()) return;
  int64_t rows = 0;
  for (const Piece& piece : live) rows += piece.rows;
  const BatchJob& first = live.front().job->spec;
  const int64_t in_dim = first.in_dim;
  const int64_t out_dim = first.out_dim;
  if (live.size() == 1) {
    const Piece& p = live.front();
    first.compute(p.rows, first.x + p.begin * in_dim, first.out + p.begin * out_dim);
  } else {
    // The pieces' rows gathered into one input, the outputs scattered back.
    std::vector<float> x(static_cast<size_t>(rows * in_dim));
    std::vector<float> out(static_cast<size_t>(rows * out_dim));
    int64_t offset = 0;
    for (const Piece& p : live) {
      std::memcpy(x.data() + offset * in_dim, p.job->spec.x + p.begin * in_dim,
                  sizeof(float) * p.rows * in_dim);
      offset += p.rows;
    }
    first.compute(rows, x.data(), out.data());
    offset = 0;
    for (const Piece& p : live) {
      std::memcpy(p.job->spec.out + p.begin * out_dim, out.data() + offset * out_dim,
                  sizeof(float) * p.rows * out_dim);
      offset += p.rows;
    }
  }
  const absl::Duration took = absl::Now() - start;
  const BatchJobTimes* counted = nullptr;  // a job's pieces are adjacent: count it once
  for (const Piece& piece : live) {
    BatchJobTimes* times = piece.job->spec.times.get();
    if (times == nullptr || times == counted) continue;
    times->compute_ns.fetch_add(absl::ToInt64Nanoseconds(took), std::memory_order_relaxed);
    counted = times;
  }
  if (options_.observers.on_batch) {
    options_.observers.on_batch(first.label, first.version, first.method, rows,
                                absl::ToDoubleSeconds(took));
  }
}

void Batcher::EndBatch(Batch& batch, std::vector<Piece> live,
                       std::vector<std::shared_ptr<Job>> finished) {
  std::vector<Batch> ready;
  {
    absl::MutexLock lock(&mu_);
    for (const Piece& piece : live) PieceEndedLocked(piece, finished);
    Queue& queue = *batch.queue;
    --queue.running;
    --running_;
    if (queue.pieces.empty() && queue.running == 0) {
      const std::pair<const void*, std::string> id = queue.id;
      queues_.erase(id);
    }
    DispatchLocked(absl::Now(), ready);
    WakeClockLocked();
    ++exiting_;  // this thread still uses the batcher below
  }
  batch.pieces.clear();
  live.clear();
  Launch(std::move(ready), std::move(finished));
  absl::MutexLock lock(&mu_);
  if (--exiting_ == 0 && running_ == 0 && queues_.empty()) idle_cv_.SignalAll();
}

}  // namespace invariant::server
