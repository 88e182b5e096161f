// InflightBudget and WorkerQueue (server/admission/): the server-wide limit,
// one key's share, a request over the limit alone, leases given back once,
// and the worker queue's order, pause and drain.
#include "server/admission/inflight_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/base/thread_priority.h"
#include "server/admission/worker_queue.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

InflightBudgetOptions Options(int64_t limit, int64_t per_key, std::vector<std::string>* refusals) {
  InflightBudgetOptions options;
  options.name = "max_inflight_bytes";
  options.limit = limit;
  options.per_key_limit = per_key;
  options.on_refused = [refusals](const char* reason) { refusals->push_back(reason); };
  return options;
}

TEST(InflightBudgetTest, GrantsUpToTheLimitAndRefusesPastItUntilALeaseEnds) {
  std::vector<std::string> refusals;
  InflightBudget budget(Options(100, 0, &refusals));
  absl::StatusOr<Lease> a =
      budget.Acquire("", 60, "inputs.values", [] { return std::string("send less"); });
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(budget.in_flight(), 60);
  absl::StatusOr<Lease> b =
      budget.Acquire("", 41, "inputs.values", [] { return std::string("send less"); });
  ASSERT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(b.status().message(),
            "server: 41 bytes asked with 60 of max_inflight_bytes=100 in flight; retry later");
  absl::StatusOr<Lease> c =
      budget.Acquire("", 40, "inputs.values", [] { return std::string("send less"); });
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(budget.in_flight(), 100);
  a->Release();
  a->Release();  // once only
  EXPECT_EQ(budget.in_flight(), 40);
  EXPECT_TRUE(
      budget.Acquire("", 41, "inputs.values", [] { return std::string("send less"); }).ok());
  EXPECT_EQ(budget.in_flight(), 40);  // the temporary lease ended with its statement
  EXPECT_EQ(refusals, std::vector<std::string>{"budget"});
}

TEST(InflightBudgetTest, ARequestOverTheLimitAloneIsInvalidNamingTheFieldAndHowToAskLess) {
  std::vector<std::string> refusals;
  InflightBudget budget(Options(100, 0, &refusals));
  absl::StatusOr<Lease> big =
      budget.Acquire("", 101, "inputs.clips", [] { return std::string("send fewer clips"); });
  ASSERT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(big.status().message(),
            "inputs.clips: the request costs 101 bytes, over max_inflight_bytes=100 for one "
            "request; send fewer clips");
  EXPECT_EQ(refusals, std::vector<std::string>{"too_large"});
  EXPECT_EQ(budget.in_flight(), 0);
}

TEST(InflightBudgetTest, OneKeyCannotTakeMoreThanItsShare) {
  std::vector<std::string> refusals;
  InflightBudget budget(Options(100, 50, &refusals));
  absl::StatusOr<Lease> first = budget.Acquire("peer-a", 30, "f", [] { return std::string(""); });
  ASSERT_TRUE(first.ok());
  absl::StatusOr<Lease> second = budget.Acquire("peer-a", 30, "f", [] { return std::string(""); });
  ASSERT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(second.status().message()),
              StartsWith("connection: 30 bytes asked with 30 in flight"));
  EXPECT_TRUE(budget.Acquire("peer-b", 30, "f", [] { return std::string(""); }).ok());
  EXPECT_TRUE(budget.Acquire("", 30, "f", [] { return std::string(""); })
                  .ok());  // no key: the server-wide limit only
  EXPECT_EQ(budget.in_flight("peer-a"), 30);
  // A key's first request may exceed its share (the server-wide limit holds).
  first->Release();
  absl::StatusOr<Lease> alone = budget.Acquire("peer-a", 70, "f", [] { return std::string(""); });
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(budget.in_flight("peer-a"), 70);
  alone->Release();
  EXPECT_EQ(budget.in_flight("peer-a"), 0);
  EXPECT_EQ(refusals, std::vector<std::string>{"share"});
}

TEST(InflightBudgetTest, NoLimitGrantsEverythingAndMovedLeasesGiveBackOnce) {
  std::vector<std::string> refusals;
  InflightBudget unlimited(Options(0, 0, &refusals));
  EXPECT_TRUE(unlimited.Acquire("", int64_t{1} << 60, "f", [] { return std::string(""); }).ok());
  InflightBudget budget(Options(10, 0, &refusals));
  Lease outer;
  {
    absl::StatusOr<Lease> lease = budget.Acquire("", 10, "f", [] { return std::string(""); });
    ASSERT_TRUE(lease.ok());
    outer = *std::move(lease);
  }
  EXPECT_EQ(budget.in_flight(), 10);
  LeaseBag bag;
  bag.Add(std::move(outer));
  EXPECT_EQ(budget.in_flight(), 10);
  bag.Clear();
  EXPECT_EQ(budget.in_flight(), 0);
  EXPECT_TRUE(refusals.empty());
}

TEST(InflightBudgetTest, ConcurrentAcquiresNeverOvercommit) {
  std::vector<std::string> refusals;
  InflightBudgetOptions options = Options(1000, 0, &refusals);
  options.on_refused = nullptr;
  InflightBudget budget(options);
  std::atomic<int64_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        absl::StatusOr<Lease> lease = budget.Acquire("", 300, "f", [] { return std::string(""); });
        if (!lease.ok()) continue;
        int64_t now = budget.in_flight();
        int64_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(peak.load(), 1000);
  EXPECT_EQ(budget.in_flight(), 0);
}

TEST(WorkerQueueTest, RunsTasksOffTheCallerInOrderAndHoldsThemWhilePaused) {
  WorkerQueue queue(1, /*start_paused=*/true);
  std::vector<int> order;
  absl::Notification done;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> on_caller{false};
  for (int i = 0; i < 3; ++i) {
    queue.Post([&, i] {
      if (std::this_thread::get_id() == caller) on_caller = true;
      order.push_back(i);
      if (i == 2) done.Notify();
    });
  }
  EXPECT_EQ(queue.queued(), 3);  // paused: nothing started
  queue.Resume();
  done.WaitForNotification();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(on_caller.load());
}

TEST(WorkerQueueTest, TheDestructorRunsWhatIsQueuedEvenWhenPaused) {
  std::atomic<int> ran{0};
  {
    WorkerQueue queue(2, /*start_paused=*/true);
    for (int i = 0; i < 5; ++i) queue.Post([&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 5);
}

// Issue 50: clip decoding kept gRPC's threads (and health) waiting for the
// CPU; the decoders now run at a lower priority than the threads that post.
TEST(WorkerQueueTest, NiceWorkersRunAtALowerPriorityThanTheCaller) {
  const auto nice_of_this_thread = [] { return ThisThreadsNice(); };
  const int caller = nice_of_this_thread();
  std::atomic<int> worker{-100};
  absl::Notification done;
  {
    WorkerQueue queue(1, /*start_paused=*/false, /*nice=*/10);
    queue.Post([&] {
      worker = nice_of_this_thread();
      done.Notify();
    });
    done.WaitForNotification();
  }
  EXPECT_EQ(worker.load(), std::min(caller + 10, 19));  // 19: the lowest priority
  EXPECT_EQ(nice_of_this_thread(), caller) << "the caller's priority changed";
}

}  // namespace
}  // namespace invariant::server
