// signal_waiter.h: process signals taken in ordinary thread context.
//
// Blocking signals and calling sigwait() in one thread is not enough in our
// binaries: libraries start threads before main() runs (OpenBLAS starts its
// pool from a shared-library constructor), those threads do not block the
// signals, and the kernel may deliver a process-directed signal to any thread
// that does not block it, where the default action ends the process at once
// (no drain, no cleanup). SignalWaiter installs a handler that only writes the
// signal as pending and wakes the waiter through a pipe (async-signal-safe,
// whichever thread runs it), and Wait() hands the pending signals back in the
// caller's ordinary context, where locks, I/O and cleanup are allowed.
//
// No signal is lost, whatever arrives: each installed signal is one pending
// flag, so repeated deliveries of a signal nobody has taken yet coalesce into
// one (a flood of SIGHUPs is one pending rescan), and the wake-up pipe holds
// at most one byte per installed signal, so it never fills. When several are
// pending, Wait() returns them by priority, the order of Install's list (put
// termination first: it is never kept behind a flood of anything else).
//
// One SignalWaiter may exist at a time (the handler has one pipe). Install it
// before the work whose interruption it handles.
#ifndef INVARIANT_CORE_BASE_SIGNAL_WAITER_H_
#define INVARIANT_CORE_BASE_SIGNAL_WAITER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"

namespace invariant {

class SignalWaiter {
 public:
  // Installs the handler for every signal in `signals` (SA_RESTART), highest
  // priority first, and unblocks them in the calling thread.
  // FAILED_PRECONDITION when another SignalWaiter exists; INVALID_ARGUMENT for
  // a number outside 1..64; INTERNAL when pipe(2) or sigaction(2) fails.
  static absl::StatusOr<std::unique_ptr<SignalWaiter>> Install(const std::vector<int>& signals);

  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;
  // Restores the previous actions and closes the pipe.
  ~SignalWaiter();

  // Blocks until a signal is pending and returns its number, clearing it:
  // the first of Install's list among those pending. A signal delivered
  // again before it is taken is returned once.
  int Wait();

  // Ends the process by `signal` with its default action, so a parent sees
  // "killed by SIGINT" (exit status 128 + n in a shell). Call after cleanup.
  [[noreturn]] static void RaiseDefault(int signal);

 private:
  explicit SignalWaiter(int read_fd) : read_fd_(read_fd) {}
  // The first pending signal of `signals_`, cleared, or 0 when none is.
  int TakePending();
  std::vector<int> signals_;  // installed, by priority
  int read_fd_;               // non-blocking: Wait drains it, then polls
};

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_SIGNAL_WAITER_H_
