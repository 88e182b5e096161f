// signal_waiter.h: process signals taken in ordinary thread context.
//
// Blocking signals and calling sigwait() in one thread is not enough in our
// binaries: libraries start threads before main() runs (OpenBLAS starts its
// pool from a shared-library constructor), those threads do not block the
// signals, and the kernel may deliver a process-directed signal to any thread
// that does not block it, where the default action ends the process at once
// (no drain, no cleanup). SignalWaiter installs a handler that only writes the
// signal number to a pipe (async-signal-safe, whichever thread runs it), and
// Wait() reads the numbers back, in order, in the caller's ordinary context,
// where locks, I/O and cleanup are allowed.
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
  // Installs the handler for every signal in `signals` (SA_RESTART) and
  // unblocks them in the calling thread. FAILED_PRECONDITION when another
  // SignalWaiter exists; INTERNAL when pipe(2) or sigaction(2) fails.
  static absl::StatusOr<std::unique_ptr<SignalWaiter>> Install(const std::vector<int>& signals);

  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;
  // Restores the previous actions and closes the pipe.
  ~SignalWaiter();

  // Blocks until a signal arrives and returns its number (signals that arrive
  // while nobody waits are kept, in order, up to the pipe's capacity).
  int Wait();

  // Ends the process by `signal` with its default action, so a parent sees
  // "killed by SIGINT" (exit status 128 + n in a shell). Call after cleanup.
  [[noreturn]] static void RaiseDefault(int signal);

 private:
  SignalWaiter(std::vector<int> signals, int read_fd)
      : signals_(std::move(signals)), read_fd_(read_fd) {}
  std::vector<int> signals_;
  int read_fd_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_SIGNAL_WAITER_H_
