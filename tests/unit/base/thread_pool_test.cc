// ThreadPool: every task runs exactly once, nested calls and concurrent
// callers complete, the default pool's size is settable once, scheduled tasks
// run on workers with a full set of helpers.
#include "core/base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(ThreadPoolTest, EveryIndexRunsExactlyOnce) {
  for (int threads = 1; threads <= 8; ++threads) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 7, 64, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      pool.ParallelFor(n, [&](int64_t i) { runs[static_cast<size_t>(i)].fetch_add(1); });
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1)
            << "threads " << threads << " n " << n << " index " << i;
      }
    }
  }
}

TEST(ThreadPoolTest, UsesMoreThanOneThreadWhenTasksBlock) {
  // Two tasks that each wait for the other to start can only finish if two
  // threads run them at once.
  ThreadPool pool(2);
  std::atomic<int> started{0};
  pool.ParallelFor(2, [&](int64_t) {
    started.fetch_add(1);
    while (started.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(started.load(), 2);
}

TEST(ThreadPoolTest, NestedCallsComplete) {
  for (int threads : {1, 2, 4, 8}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> runs(16 * 16);
    pool.ParallelFor(16, [&](int64_t outer) {
      pool.ParallelFor(
          16, [&](int64_t inner) { runs[static_cast<size_t>(outer * 16 + inner)].fetch_add(1); });
    });
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << i;
  }
}

TEST(ThreadPoolTest, ConcurrentCallersAllComplete) {
  ThreadPool pool(4);
  constexpr int kCallers = 8;
  constexpr int kCalls = 50;
  constexpr int64_t kTasks = 37;
  std::vector<std::atomic<int64_t>> sums(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int call = 0; call < kCalls; ++call) {
        pool.ParallelFor(kTasks, [&](int64_t i) { sums[static_cast<size_t>(c)].fetch_add(i + 1); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    EXPECT_EQ(sums[static_cast<size_t>(c)].load(), kCalls * kTasks * (kTasks + 1) / 2) << c;
  }
}

TEST(ThreadPoolTest, DefaultPoolSizeIsSetOnce) {
  EXPECT_EQ(SetDefaultThreadCount(0).code(), absl::StatusCode::kInvalidArgument);
  ResetDefaultThreadPoolForTesting(3);
  EXPECT_EQ(DefaultThreadCount(), 3);
  EXPECT_EQ(DefaultThreadPool().num_threads(), 3);
  EXPECT_TRUE(SetDefaultThreadCount(3).ok());
  const absl::Status late = SetDefaultThreadCount(5);
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(late.message().find("already runs 3"), std::string::npos) << late;
  std::atomic<int64_t> sum{0};
  ParallelFor(100, [&](int64_t i) { sum.fetch_add(i); });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPoolTest, ScheduledTasksRunOnWorkersAndGetHelpersForParallelFor) {
  ThreadPool pool(3);
  std::promise<std::vector<std::thread::id>> ran;
  pool.Schedule([&] {
    std::mutex mu;
    std::vector<std::thread::id> ids;
    std::atomic<int> inside{0};
    // Three tasks that each wait until all three run at once: only possible
    // when the scheduled caller gets both other workers as helpers.
    pool.ParallelFor(3, [&](int64_t) {
      inside.fetch_add(1);
      while (inside.load() < 3) std::this_thread::yield();
      std::lock_guard<std::mutex> lock(mu);
      ids.push_back(std::this_thread::get_id());
    });
    ran.set_value(ids);
  });
  std::vector<std::thread::id> ids = ran.get_future().get();
  ASSERT_EQ(ids.size(), 3u);
  for (std::thread::id id : ids) EXPECT_NE(id, std::this_thread::get_id());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
}

TEST(ThreadPoolTest, DestructorRunsEveryScheduledTask) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(1);
    for (int i = 0; i < 50; ++i) pool.Schedule([&ran] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 50);
}

}  // namespace
}  // namespace invariant
