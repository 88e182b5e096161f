#include "server/batcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace invariant::server {
namespace {

using ::testing::ElementsAre;

// A compute function out = 2·x + 1 (in_dim = out_dim = 1) that records batch
// sizes and can hold its first call until released.
class FakeCompute {
 public:
  RowComputeFn Fn() {
    return [this](int64_t n, const float* x, float* out) {
      std::unique_lock<std::mutex> lock(mu_);
      sizes_.push_back(n);
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

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  int calls_ = 0;
  std::vector<int64_t> sizes_;
};

struct Request {
  std::vector<float> x;
  std::vector<float> out;
  std::promise<absl::Status> status;
};

BatchJob MakeJob(FakeCompute& compute, Request& request,
                 absl::Time deadline = absl::InfiniteFuture()) {
  BatchJob job;
  job.key = &compute;
  job.method = "Predict";
  job.label = "m";
  job.compute = compute.Fn();
  job.in_dim = 1;
  job.out_dim = 1;
  job.num_rows = static_cast<int64_t>(request.x.size());
  request.out.assign(request.x.size(), -1.0f);
  job.x = request.x.data();
  job.out = request.out.data();
  job.deadline = deadline;
  job.done = [&request](absl::Status status) { request.status.set_value(status); };
  return job;
}

TEST(BatcherTest, MergesConcurrentRequestsIntoOneCall) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::Hours(1);  // only a full batch is cut
  options.wait_when_idle = true;
  options.num_threads = 1;
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

TEST(BatcherTest, IdleBatcherComputesALoneRequestAtOnce) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::Hours(1);  // would hold the request for an hour if it waited
  options.num_threads = 1;
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

TEST(BatcherTest, UnderLoadRequestsAreMergedAndCutWhenTheRunningBatchEnds) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::Hours(1);
  options.num_threads = 2;  // a free worker that must NOT cut while a batch computes
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

TEST(BatcherTest, IdleBatcherCanComputeOnTheSubmittingThread) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::Hours(1);
  options.compute_inline_when_idle = true;
  options.num_threads = 1;
  Batcher batcher(options);
  Request first;
  first.x = {1};
  std::future<absl::Status> first_done = first.status.get_future();
  compute.Hold();
  std::thread submitter([&] { EXPECT_TRUE(batcher.Submit(MakeJob(compute, first)).ok()); });
  compute.WaitForCalls(1);  // computing inline, inside Submit on `submitter`
  Request second;
  second.x = {2};
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, second)).ok());  // not idle: queued, returns
  EXPECT_EQ(batcher.QueuedRows("m"), 1);
  compute.Release();
  submitter.join();
  // Submit returned only after `done` ran: the status is already there.
  ASSERT_EQ(first_done.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(first_done.get().ok());
  EXPECT_EQ(first.out[0], 3.0f);
  ASSERT_TRUE(second.status.get_future().get().ok());
  EXPECT_EQ(second.out[0], 5.0f);
  EXPECT_THAT(compute.sizes(), ElementsAre(1, 1));
}

TEST(BatcherTest, BatchesNeverExceedMaxRows) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 10;
  options.max_batch_delay = absl::ZeroDuration();
  options.num_threads = 1;
  Batcher batcher(options);
  Request blocker;
  blocker.x = {0};
  compute.Hold();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, blocker)).ok());
  compute.WaitForCalls(1);  // the only worker is busy: the rest queue up
  std::vector<Request> requests(25);
  for (int i = 0; i < 25; ++i) {
    requests[i].x = {static_cast<float>(i)};
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, requests[i])).ok());
  }
  EXPECT_EQ(batcher.QueuedRows("m"), 25);
  compute.Release();
  for (auto& r : requests) ASSERT_TRUE(r.status.get_future().get().ok());
  EXPECT_THAT(compute.sizes(), ElementsAre(1, 10, 10, 5));
  EXPECT_EQ(batcher.QueuedRows("m"), 0);
}

TEST(BatcherTest, LargeRequestIsSplitAndReassembled) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 4;
  options.max_batch_delay = absl::ZeroDuration();
  options.num_threads = 2;
  Batcher batcher(options);
  Request request;
  for (int i = 0; i < 10; ++i) request.x.push_back(static_cast<float>(i));
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, request)).ok());
  ASSERT_TRUE(request.status.get_future().get().ok());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(request.out[i], 2.0f * i + 1);
  std::vector<int64_t> sizes = compute.sizes();
  std::sort(sizes.begin(), sizes.end());
  EXPECT_THAT(sizes, ElementsAre(2, 4, 4));
}

TEST(BatcherTest, ExpiredDeadlineIsDroppedBeforeCompute) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 8;
  options.max_batch_delay = absl::ZeroDuration();
  options.num_threads = 1;
  Batcher batcher(options);
  Request blocker, expired, live;
  blocker.x = {0};
  expired.x = {5};
  live.x = {7};
  compute.Hold();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, blocker)).ok());
  compute.WaitForCalls(1);
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, expired, absl::Now() - absl::Seconds(1))).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, live)).ok());
  compute.Release();
  const absl::Status status = expired.status.get_future().get();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(live.status.get_future().get().ok());
  EXPECT_EQ(live.out[0], 15.0f);
  EXPECT_EQ(expired.out[0], -1.0f);  // never computed
  EXPECT_THAT(compute.sizes(), ElementsAre(1, 1));
}

TEST(BatcherTest, FullQueueIsRefusedAtOnce) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 8;
  options.max_batch_delay = absl::ZeroDuration();
  options.max_queue_rows = 4;
  options.num_threads = 1;
  Batcher batcher(options);
  Request blocker;
  blocker.x = {0};
  compute.Hold();
  ASSERT_TRUE(batcher.Submit(MakeJob(compute, blocker)).ok());
  compute.WaitForCalls(1);
  std::vector<Request> queued(4);
  for (auto& r : queued) {
    r.x = {1};
    ASSERT_TRUE(batcher.Submit(MakeJob(compute, r)).ok());
  }
  Request refused;
  refused.x = {1};
  const absl::Status status = batcher.Submit(MakeJob(compute, refused));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("max_queue_rows=4"));
  compute.Release();
  for (auto& r : queued) EXPECT_TRUE(r.status.get_future().get().ok());
}

TEST(BatcherTest, DisabledComputesInlineOneJobPerCall) {
  FakeCompute compute;
  BatcherOptions options;
  options.enabled = false;
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

TEST(BatcherTest, DifferentKeysAreNotMerged) {
  FakeCompute first, second;
  BatcherOptions options;
  options.max_batch_rows = 8;
  options.max_batch_delay = absl::ZeroDuration();
  options.num_threads = 1;
  Batcher batcher(options);
  Request blocker, a, b;
  blocker.x = {0};
  a.x = {1};
  b.x = {2};
  first.Hold();
  ASSERT_TRUE(batcher.Submit(MakeJob(first, blocker)).ok());
  first.WaitForCalls(1);
  ASSERT_TRUE(batcher.Submit(MakeJob(first, a)).ok());
  ASSERT_TRUE(batcher.Submit(MakeJob(second, b)).ok());
  first.Release();
  EXPECT_TRUE(a.status.get_future().get().ok());
  EXPECT_TRUE(b.status.get_future().get().ok());
  EXPECT_THAT(first.sizes(), ElementsAre(1, 1));
  EXPECT_THAT(second.sizes(), ElementsAre(1));
}

TEST(BatcherTest, MalformedJobIsRefused) {
  Batcher batcher(BatcherOptions{});
  BatchJob job;
  EXPECT_EQ(batcher.Submit(job).code(), absl::StatusCode::kInvalidArgument);
}

TEST(BatcherTest, StopComputesQueuedJobs) {
  FakeCompute compute;
  BatcherOptions options;
  options.max_batch_rows = 100;
  options.max_batch_delay = absl::Hours(1);
  options.wait_when_idle = true;  // the job stays queued until Stop
  options.num_threads = 1;
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
