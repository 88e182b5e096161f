#include "core/base/signal_waiter.h"

#include <signal.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(SignalWaiterTest, HandsEachSignalToWaitInOrder) {
  auto waiter = SignalWaiter::Install({SIGUSR1, SIGUSR2});
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  EXPECT_EQ((*waiter)->Wait(), SIGUSR2);
  // Two signals before anyone waits are both kept, in the order they came.
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  EXPECT_EQ((*waiter)->Wait(), SIGUSR1);
  EXPECT_EQ((*waiter)->Wait(), SIGUSR2);
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
