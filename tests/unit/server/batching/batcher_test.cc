#include "server/batching/batcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/base/thread_pool.h"

namespace invariant::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A compute function out = 2·x + 1 (in_dim = out_dim = 1) that records batch
// sizes and threads, and can hold its calls until released.
class FakeCompute {
 public:
  RowComputeFn Fn() {
    return [this](int64_t n, const float* x, float* out) {
      std::unique_lock<std::mutex> lock(mu_);
      sizes_.push_back(n);
      threads_.push_back(std::this_thread::get_id());
      ++calls_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !hold_; });
      for (int64_t i = 0; i < n; ++i) out[i] = 2 * x[i] + 1;
    };
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = false;
    cv_.notify_all();
  }
  void WaitForCalls(int calls) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return calls_ >= calls; });
  }
  std::vector<int64_t> sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }
  std::vector<std::thread::id> threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  int calls_ = 0;
  std::vector<int64_t> sizes_;
  std::vector<std::thread::id> threads_;
};

struct Request {
  std::vector<float> x;
  std::vector<float> out;
  std::promise<absl::Status> status;
  std::atomic<int> done_calls{0};
  // Stands for the memory a request holds (its decoded rows): captured by
  // `done`, released when the batcher lets go of the job.
  std::shared_ptr<int> payload = std::make_shared<int>(0);
};

BatchJob MakeJob(FakeCompute& compute, Request& request,
                 absl::Time deadline = absl::InfiniteFuture(),
                 const std::string& method = "Predict") {
  BatchJob job;
  job.key = &compute;
  job.method = method;
  job.label = "m";
  job.compute = compute.Fn();
  job.in_dim = 1;
  job.out_dim = 1;
  job.num_rows = static_cast<int64_t>(request.x.size());
  request.out.assign(request.x.size(), -1.0f);
  job.x = request.x.data();
  job.out = request.out.data();
  job.deadline = deadline;
  std::shared_ptr<int> payload = request.payload;
  job.done = [&request, payload](absl::Status status) {
    request.done_calls.fetch_add(1);
    request.status.set_value(status);
  };
  return job;
}

// Every test owns its compute pool: two workers, so one can be held.
class BatcherTest : public ::testing::Test {
 protected:
  BatcherOptions Options() {
    BatcherOptions options;
    options.pool = &pool_;
    return options;
  }
  ThreadPool pool_{2};
};

TEST_F(BatcherTest, MergesConcurrentRequestsIntoOneCall) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::Hours(1);  // only a full batch is cut
  options.wait_when_idle = true;
  Batcher batcher(options);
  std::vector<Request> requests(10);
  for (int i = 0; i < 10; ++i) {
    requests[i].x = {static_cast<float>(i)};
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, requests[i])).ok());
  }
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(requests[i].status.get_future().get().ok());
    EXPECT_EQ(requests[i].out[0], 2.0f * i + 1);  // each gets its own rows back
  }
  EXPECT_THAT(compute.sizes(), ElementsAre(10));
}

TEST_F(BatcherTest, JobTimesAddUpTheQueueWaitAndTheComputeOfEveryPiece) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 2;  // 5 rows: three pieces
  Batcher batcher(options);
  auto times = std::make_shared<BatchJobTimes>();
  Request first, second, untimed;
  first.x = {1, 2, 3, 4, 5};
  second.x = {6};
  untimed.x = {7};
  for (Request* request : {&first, &second}) {
    BatchJob job = MakeJob(compute, *request);
    job.times = times;  // one call's two jobs, as a stream's
    ASSERT_TRUE(batcher.Submit(std::move(job)).ok());
  }
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, untimed)).ok());
  for (Request* request : {&first, &second, &untimed}) {
    ASSERT_TRUE(request->status.get_future().get().ok());
  }
  EXPECT_GT(times->compute_ns.load(), 0);
  EXPECT_GE(times->queue_ns.load(), 0);
  EXPECT_EQ(first.out[4], 11.0f);
}

TEST_F(BatcherTest, IdleBatcherComputesALoneRequestAtOnce) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::Hours(1);  // would hold the request for an hour if it waited
  Batcher batcher(options);
  Request request;
  request.x = {4};
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, request)).ok());
  std::future<absl::Status> result = request.status.get_future();
  // A liveness bound, not a latency assertion: without the idle rule this waits an hour.
  ASSERT_EQ(result.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_TRUE(result.get().ok());
  EXPECT_EQ(request.out[0], 9.0f);
  EXPECT_THAT(compute.sizes(), ElementsAre(1));
}

TEST_F(BatcherTest, ComputeRunsOnThePoolNeverOnTheSubmittingThread) {
  for (int pool_threads : {1, 2}) {
    ThreadPool pool(pool_threads);
    FakeCompute compute;
    BatcherOptions options;
    options.pool = &pool;
    options.max_batch_rows = 4;
    Batcher batcher(options);
    Request small, large;
    small.x = {1};
    large.x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, small)).ok());
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, large)).ok());
    ASSERT_TRUE(small.status.get_future().get().ok());
    ASSERT_TRUE(large.status.get_future().get().ok());
    batcher.Stop();
    for (std::thread::id id : compute.threads()) EXPECT_NE(id, std::this_thread::get_id());
    EXPECT_FALSE(compute.threads().empty());
  }
}

TEST_F(BatcherTest, UnderLoadRequestsAreMergedAndCutWhenTheRunningBatchEnds) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::Hours(1);
  options.max_concurrent_batches = 2;  // room for a second batch that must NOT be cut yet
  Batcher batcher(options);
  Request blocker;
  blocker.x = {0};
  compute.Hold();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, blocker)).ok());
  compute.WaitForCalls(1);
  std::vector<Request> requests(3);
  for (int i = 0; i < 3; ++i) {
    requests[i].x = {static_cast<float>(i + 1)};
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, requests[i])).ok());
  }
  EXPECT_EQ(batcher.QueuedRows("m"), 3);  // held: a batch is computing and 3 < 10 rows
  compute.Release();                      // the running batch ends: the 3 go as one
  ASSERT_TRUE(blocker.status.get_future().get().ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(requests[i].status.get_future().get().ok());
    EXPECT_EQ(requests[i].out[0], 2.0f * (i + 1) + 1);
  }
  EXPECT_THAT(compute.sizes(), ElementsAre(1, 3));
}

TEST_F(BatcherTest, BatchesNeverExceedMaxRows) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::ZeroDuration();
  options.max_concurrent_batches = 1;
  Batcher batcher(options);
  Request blocker;
  blocker.x = {0};
  compute.Hold();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, blocker)).ok());
  compute.WaitForCalls(1);  // the only batch slot is busy: the rest queue up
  std::vector<Request> requests(25);
  for (int i = 0; i < 25; ++i) {
    requests[i].x = {static_cast<float>(i)};
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, requests[i])).ok());
  }
  EXPECT_EQ(batcher.QueuedRows("m"), 25);
  compute.Release();
  // Every request is awaited: its done callback writes into it.
  ASSERT_TRUE(blocker.status.get_future().get().ok());
  for (auto& r : requests) ASSERT_TRUE(r.status.get_future().get().ok());
  EXPECT_THAT(compute.sizes(), ElementsAre(1, 10, 10, 5));
  EXPECT_EQ(batcher.QueuedRows("m"), 0);
}

TEST_F(BatcherTest, LargeRequestIsSplitIntoPiecesOfOneJobThatCompletesOnce) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 4;
  options.max_batch_delay = absl::ZeroDuration();
  Batcher batcher(options);
  Request request;
  for (int i = 0; i < 10; ++i) request.x.push_back(static_cast<float>(i));
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, request)).ok());
  ASSERT_TRUE(request.status.get_future().get().ok());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(request.out[i], 2.0f * i + 1);
  batcher.Stop();
  EXPECT_EQ(request.done_calls.load(), 1);
  std::vector<int64_t> sizes = compute.sizes();
  std::sort(sizes.begin(), sizes.end());
  EXPECT_THAT(sizes, ElementsAre(2, 4, 4));
}

TEST_F(BatcherTest, CancelledSplitJobDropsItsQueuedPiecesAndCompletesOnceAfterTheComputingOne) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 4;
  options.max_concurrent_batches = 1;
  Batcher batcher(options);
  auto token = std::make_shared<CancelToken>();
  Request request;
  for (int i = 0; i < 10; ++i) request.x.push_back(static_cast<float>(i));
  std::future<absl::Status> result = request.status.get_future();
  compute.Hold();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, request), token).ok());
  compute.WaitForCalls(1);  // the first piece computes, two wait
  EXPECT_EQ(batcher.QueuedRows("m"), 6);
  token->Cancel(absl::CancelledError("client went away"));
  EXPECT_EQ(batcher.QueuedRows("m"), 0);  // the waiting pieces left at once
  EXPECT_EQ(batcher.QueuedBytes(), 0);
  // The computing piece still writes into the request's buffers: not done yet.
  EXPECT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  compute.Release();
  EXPECT_EQ(result.get().code(), absl::StatusCode::kCancelled);
  batcher.Stop();
  EXPECT_EQ(request.done_calls.load(), 1);
  EXPECT_THAT(compute.sizes(), ElementsAre(4));
  EXPECT_EQ(request.out[9], -1.0f);  // never computed
}

TEST_F(BatcherTest, CancelTakesAQueuedJobOutAtOnceWithoutComputeAndReleasesItsMemory) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.start_paused = true;  // nothing computes until Resume
  Batcher batcher(options);
  auto token = std::make_shared<CancelToken>();
  Request cancelled, live;
  cancelled.x = {1, 2};
  live.x = {3};
  std::weak_ptr<int> payload = cancelled.payload;
  std::future<absl::Status> result = cancelled.status.get_future();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, cancelled), token).ok());
  cancelled.payload.reset();  // only the job holds it now
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, live)).ok());
  EXPECT_EQ(batcher.QueuedRows("m"), 3);
  EXPECT_EQ(batcher.QueuedBytes(), 3 * 8);
  EXPECT_FALSE(payload.expired());
  token->Cancel(absl::CancelledError("client went away"));
  // done ran inside Cancel, on this thread, and let go of the request's memory.
  ASSERT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(result.get().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(payload.expired());
  EXPECT_EQ(batcher.QueuedRows("m"), 1);
  EXPECT_EQ(batcher.QueuedBytes(), 8);
  // A job submitted on a cancelled token is refused; its done never runs.
  Request late;
  late.x = {4};
  EXPECT_EQ(batcher.Submit(MakeJob(compute, late), token).code(), absl::StatusCode::kCancelled);
  batcher.Resume();
  ASSERT_TRUE(live.status.get_future().get().ok());
  batcher.Stop();
  EXPECT_THAT(compute.sizes(), ElementsAre(1));  // only the live row
  EXPECT_EQ(cancelled.out[0], -1.0f);
  EXPECT_EQ(cancelled.done_calls.load(), 1);
  EXPECT_EQ(late.done_calls.load(), 0);
}

TEST_F(BatcherTest, ExpiredJobLeavesTheQueueAtItsDeadlineWithoutCompute) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.start_paused = true;
  Batcher batcher(options);
  Request expired, live;
  expired.x = {5};
  live.x = {7};
  const absl::Time deadline = absl::Now() + absl::Hours(1);
  std::future<absl::Status> result = expired.status.get_future();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, expired, deadline)).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, live)).ok());
  batcher.Tick(deadline - absl::Seconds(1));  // not yet
  EXPECT_EQ(batcher.QueuedRows("m"), 2);
  batcher.Tick(deadline);  // the clock's step at the deadline: the job leaves the queue
  ASSERT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const absl::Status status = result.get();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()), HasSubstr("before compute"));
  EXPECT_EQ(batcher.QueuedRows("m"), 1);
  batcher.Resume();
  ASSERT_TRUE(live.status.get_future().get().ok());
  EXPECT_EQ(live.out[0], 15.0f);
  batcher.Stop();
  EXPECT_EQ(expired.out[0], -1.0f);  // never computed
  EXPECT_THAT(compute.sizes(), ElementsAre(1));
}

TEST_F(BatcherTest, AJobWhoseDeadlineHasPassedIsRefused) {
  FakeCompute compute;
  Batcher batcher(Options());
  Request expired;
  expired.x = {5};
  const absl::Status status =
      batcher.Submit(MakeJob(compute, expired, absl::Now() - absl::Seconds(1)));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  batcher.Stop();
  EXPECT_THAT(compute.sizes(), IsEmpty());
  EXPECT_EQ(expired.done_calls.load(), 0);
}

TEST_F(BatcherTest, FullQueueIsRefusedAtOnceAndOnlyLiveWorkCounts) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_queue_rows = 4;
  options.start_paused = true;
  Batcher batcher(options);
  std::vector<Request> queued(4);
  auto token = std::make_shared<CancelToken>();
  for (size_t i = 0; i < queued.size(); ++i) {
    queued[i].x = {1};
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, queued[i]), i == 0 ? token : nullptr).ok());
  }
  Request refused;
  refused.x = {1};
  const absl::Status status = batcher.Submit(MakeJob(compute, refused));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("max_queue_rows=4"));
  token->Cancel(absl::CancelledError("gone"));  // one row leaves: room for one
  Request admitted;
  admitted.x = {1};
  EXPECT_TRUE(batcher.Submit(MakeJob(compute, admitted)).ok());
  batcher.Resume();
  for (size_t i = 1; i < queued.size(); ++i) EXPECT_TRUE(queued[i].status.get_future().get().ok());
  EXPECT_TRUE(admitted.status.get_future().get().ok());
  EXPECT_EQ(refused.done_calls.load(), 0);
}

TEST_F(BatcherTest, ByteBoundRefusesWorkBeyondMaxQueueBytes) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_queue_bytes = 3 * 8;  // three rows of in_dim 1 + out_dim 1 floats
  options.start_paused = true;
  Batcher batcher(options);
  Request two, one, over;
  two.x = {1, 2};
  one.x = {3};
  over.x = {4};
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, two)).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, one, absl::InfiniteFuture(), "Featurize")).ok());
  EXPECT_EQ(batcher.QueuedBytes(), 24);
  // The bound covers every queue: a third queue is refused too.
  const absl::Status status =
      batcher.Submit(MakeJob(compute, over, absl::InfiniteFuture(), "Other"));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("max_queue_bytes=24"));
  batcher.Resume();
  EXPECT_TRUE(two.status.get_future().get().ok());
  EXPECT_TRUE(one.status.get_future().get().ok());
  batcher.Stop();
  EXPECT_EQ(batcher.QueuedBytes(), 0);
}

TEST_F(BatcherTest, DisabledComputesOneJobPerCall) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.enabled = false;
  options.max_batch_rows = 2;  // ignored: no splitting either
  options.max_concurrent_batches = 1;
  Batcher batcher(options);
  Request a, b;
  a.x = {1, 2, 3};
  b.x = {4};
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, a)).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, b)).ok());
  EXPECT_TRUE(a.status.get_future().get().ok());
  EXPECT_TRUE(b.status.get_future().get().ok());
  EXPECT_THAT(compute.sizes(), ElementsAre(3, 1));
  EXPECT_EQ(a.out[2], 7.0f);
}

TEST_F(BatcherTest, EachModelAndMethodHasItsOwnQueue) {
  FakeCompute first, second;
  BatcherOptions options = Options();
  options.max_batch_rows = 8;
  options.start_paused = true;
  options.max_concurrent_batches = 1;
  Batcher batcher(options);
  Request a1, a2, predict, other_model;
  a1.x = {1};
  a2.x = {2};
  predict.x = {3};
  other_model.x = {4};
  ASSERT_TRUE(batcher.Submit(MakeJob(first, a1, absl::InfiniteFuture(), "Featurize")).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(first, predict, absl::InfiniteFuture(), "Predict")).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(first, a2, absl::InfiniteFuture(), "Featurize")).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(second, other_model)).ok());
  batcher.Resume();
  for (Request* r : {&a1, &a2, &predict, &other_model}) {
    EXPECT_TRUE(r->status.get_future().get().ok());
  }
  std::vector<int64_t> sizes = first.sizes();
  std::sort(sizes.begin(), sizes.end());
  EXPECT_THAT(sizes, ElementsAre(1, 2));  // the two Featurize rows merged, Predict apart
  EXPECT_THAT(second.sizes(), ElementsAre(1));
  EXPECT_EQ(a2.out[0], 5.0f);
  EXPECT_EQ(predict.out[0], 7.0f);
}

TEST_F(BatcherTest, MalformedJobIsRefused) {
  Batcher batcher(Options());
  BatchJob job;
  EXPECT_EQ(batcher.Submit(job).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(BatcherTest, StopComputesQueuedJobsEvenWhenPaused) {
  FakeCompute compute;
  BatcherOptions options = Options();
  options.max_batch_rows = 100;
  options.max_batch_delay = absl::Hours(1);
  options.wait_when_idle = true;  // the job stays queued until Stop
  options.start_paused = true;
  Batcher batcher(options);
  Request r;
  r.x = {3};
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, r)).ok());
  batcher.Stop();
  EXPECT_TRUE(r.status.get_future().get().ok());
  EXPECT_EQ(r.out[0], 7.0f);
  Request late;
  late.x = {1};
  EXPECT_EQ(batcher.Submit(MakeJob(compute, late)).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace invariant::server
