#include "server/lifecycle/reload_coalescer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace invariant::server {
namespace {

// A reload that reports its run number as `loaded` and, on its first run,
// waits for `release` after announcing `entered` (the deterministic hook that
// holds a rescan in flight while more requests arrive).
struct GatedReload {
  absl::Notification entered;
  absl::Notification release;
  std::atomic<int> runs{0};

  ScanReport operator()() {
    const int run = ++runs;
    if (run == 1) {
      entered.Notify();
      release.WaitForNotification();
    }
    ScanReport report;
    report.loaded = run;
    return report;
  }
};

TEST(ReloadCoalescerTest, RequestsDuringARescanShareTheNextOne) {
  GatedReload reload;
  constexpr int kLater = 100;
  absl::BlockingCounter queued_later(kLater);
  std::atomic<int> queue_calls{0};
  ReloadCoalescer coalescer([&reload] { return reload(); },
                            [&](size_t) {
                              if (++queue_calls > 1) queued_later.DecrementCount();
                            });
  absl::BlockingCounter answered(kLater + 1);
  absl::Mutex mu;
  std::vector<int> reports;  // `loaded` seen by each request
  auto done = [&](const ScanReport& report) {
    {
      absl::MutexLock lock(&mu);
      reports.push_back(report.loaded);
    }
    answered.DecrementCount();
  };

  coalescer.Request(done);
  reload.entered.WaitForNotification();  // rescan 1 is in flight
  for (int i = 0; i < kLater; ++i) coalescer.Request(done);
  queued_later.Wait();  // all of them are queued before rescan 1 ends
  reload.release.Notify();
  answered.Wait();

  EXPECT_EQ(reload.runs.load(), 2);
  EXPECT_EQ(coalescer.runs(), 2);
  absl::MutexLock lock(&mu);
  ASSERT_EQ(reports.size(), kLater + 1u);
  EXPECT_EQ(reports[0], 1);  // the first request got the rescan it started
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i], 2) << "request " << i << " must see a rescan that began after it";
  }
}

TEST(ReloadCoalescerTest, SequentialRequestsEachGetARescan) {
  std::atomic<int> runs{0};
  ReloadCoalescer coalescer([&] {
    ScanReport report;
    report.loaded = ++runs;
    return report;
  });
  for (int i = 1; i <= 3; ++i) {
    absl::Notification done;
    int loaded = 0;
    coalescer.Request([&](const ScanReport& report) {
      loaded = report.loaded;
      done.Notify();
    });
    done.WaitForNotification();
    EXPECT_EQ(loaded, i);
  }
  EXPECT_EQ(coalescer.runs(), 3);
}

TEST(ReloadCoalescerTest, DestructorServesQueuedRequests) {
  GatedReload reload;
  std::atomic<int> answered{0};
  {
    ReloadCoalescer coalescer([&reload] { return reload(); });
    coalescer.Request([&](const ScanReport&) { ++answered; });
    reload.entered.WaitForNotification();
    coalescer.Request([&](const ScanReport&) { ++answered; });
    reload.release.Notify();
  }  // joins the worker only after both requests were answered
  EXPECT_EQ(answered.load(), 2);
  EXPECT_EQ(reload.runs.load(), 2);
}

TEST(ReloadCoalescerTest, NoRequestNoThreadNoRescan) {
  std::atomic<int> runs{0};
  {
    ReloadCoalescer coalescer([&] {
      ++runs;
      return ScanReport();
    });
  }
  EXPECT_EQ(runs.load(), 0);
}

}  // namespace
}  // namespace invariant::server
