#include "core/base/signal_waiter.h"

#include <signal.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(SignalWaiterTest, HandsEachPendingSignalToWaitByPriority) {
  auto waiter = SignalWaiter::Install({SIGUSR1, SIGUSR2});
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  EXPECT_EQ((*waiter)->Wait(), SIGUSR2);
  // Two signals before anyone waits are both kept; the first of Install's
  // list comes first, whatever order they came in.
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  EXPECT_EQ((*waiter)->Wait(), SIGUSR1);
  EXPECT_EQ((*waiter)->Wait(), SIGUSR2);
}

// Issue 50: a flood of SIGHUPs filled the old one-byte-per-signal pipe and
// the SIGTERM after it was dropped. Termination is never lost, it comes
// before the flood, and the flood coalesces into one pending SIGHUP.
TEST(SignalWaiterTest, TerminationSurvivesAFloodAndTheFloodCoalesces) {
  auto waiter = SignalWaiter::Install({SIGTERM, SIGHUP, SIGUSR2});
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  for (int i = 0; i < 200000; ++i) ASSERT_EQ(kill(getpid(), SIGHUP), 0);  // > 64 KiB of bytes
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  EXPECT_EQ((*waiter)->Wait(), SIGTERM);
  EXPECT_EQ((*waiter)->Wait(), SIGHUP);
  // Had a second SIGHUP been kept, it would come before SIGUSR2.
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  EXPECT_EQ((*waiter)->Wait(), SIGUSR2);
}

TEST(SignalWaiterTest, ASignalFromAnotherThreadWakesABlockedWait) {
  auto waiter = SignalWaiter::Install({SIGUSR1});
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  // Wait blocks first (nothing is pending); the kill may run before or after
  // it polls: either way it is returned.
  std::thread other([] { kill(getpid(), SIGUSR1); });
  EXPECT_EQ((*waiter)->Wait(), SIGUSR1);
  other.join();
}

TEST(SignalWaiterTest, ASignalDeliveredToAnotherThreadReachesTheWaiter) {
  auto waiter = SignalWaiter::Install({SIGUSR1});
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  // Like an OpenBLAS pool thread: started elsewhere, blocking nothing. Before
  // SignalWaiter, SIGUSR1's default action there would end the process.
  std::thread other([] { pthread_kill(pthread_self(), SIGUSR1); });
  other.join();
  EXPECT_EQ((*waiter)->Wait(), SIGUSR1);
}

TEST(SignalWaiterTest, OneAtATimeAndTheDestructorRestoresThePreviousAction) {
  struct sigaction before;
  ASSERT_EQ(sigaction(SIGUSR2, nullptr, &before), 0);
  {
    auto waiter = SignalWaiter::Install({SIGUSR2});
    ASSERT_TRUE(waiter.ok()) << waiter.status();
    auto second = SignalWaiter::Install({SIGUSR1});
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  }
  struct sigaction after;
  ASSERT_EQ(sigaction(SIGUSR2, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  EXPECT_TRUE(SignalWaiter::Install({SIGUSR2}).ok());  // installable again
}

TEST(SignalWaiterDeathTest, RaiseDefaultEndsTheProcessByTheSignal) {
  EXPECT_EXIT(
      {
        auto waiter = SignalWaiter::Install({SIGTERM});
        if (!waiter.ok()) _exit(3);
        SignalWaiter::RaiseDefault(SIGTERM);
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

}  // namespace
}  // namespace invariant
