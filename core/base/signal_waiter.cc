#include "core/base/signal_waiter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

std::atomic<int> g_write_fd{-1};
// Bit n - 1: signal n is pending (lock-free on every platform we build for,
// so the handler may use it).
std::atomic<uint64_t> g_pending{0};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
struct sigaction g_previous[NSIG];

uint64_t BitOf(int signal) { return uint64_t{1} << (signal - 1); }

// Marks the signal pending; only the delivery that made it pending writes a
// wake-up byte, so the pipe holds at most one byte per installed signal.
extern "C" void MarkSignalPending(int signal) {
  const int saved_errno = errno;
  const uint64_t bit = BitOf(signal);
  if ((g_pending.fetch_or(bit) & bit) == 0) {
    const int fd = g_write_fd.load(std::memory_order_relaxed);
    if (fd >= 0) {
      const unsigned char wake = 1;
      ssize_t ignored = write(fd, &wake, 1);
      (void)ignored;
    }
  }
  errno = saved_errno;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SignalWaiter>> SignalWaiter::Install(
    const std::vector<int>& signals) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  int expected = -1;
  if (!g_write_fd.compare_exchange_strong(expected, fds[1])) {
    close(fds[0]);
    close(fds[1]);
    return absl::FailedPreconditionError("a SignalWaiter is already installed");
  }
  // The handler must never block a thread the kernel picked; Wait drains
  // the read end without blocking, then polls.
  fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  g_pending.store(0);
  std::unique_ptr<SignalWaiter> waiter(new SignalWaiter(fds[0]));
  sigset_t unblock;
  sigemptyset(&unblock);
  for (int signal : signals) {
    if (signal <= 0 || signal > 64 || signal >= NSIG) {
      return absl::InvalidArgumentError(absl::StrCat("signal ", signal, ": expected 1..64"));
    }
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = MarkSignalPending;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(signal, &action, &g_previous[signal]) != 0) {
      return absl::InternalError(absl::StrCat("sigaction(", signal, "): ", std::strerror(errno)));
    }
    waiter->signals_.push_back(signal);  // the destructor restores only these
    sigaddset(&unblock, signal);
  }
  pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  return waiter;
}

SignalWaiter::~SignalWaiter() {
  for (int signal : signals_) sigaction(signal, &g_previous[signal], nullptr);
  const int write_fd = g_write_fd.exchange(-1);
  close(write_fd);
  close(read_fd_);
}

int SignalWaiter::TakePending() {
  const uint64_t pending = g_pending.load();
  for (int signal : signals_) {
    const uint64_t bit = BitOf(signal);
    if ((pending & bit) != 0) {
      g_pending.fetch_and(~bit);
      return signal;
    }
  }
  return 0;
}

int SignalWaiter::Wait() {
  while (true) {
    // Drain the wake-ups first, then look: a signal marked after the drain
    // is either seen now or leaves a byte that ends the next poll.
    unsigned char wakes[64];
    while (read(read_fd_, wakes, sizeof(wakes)) > 0) {
    }
    if (const int signal = TakePending(); signal != 0) return signal;
    struct pollfd readable = {read_fd_, POLLIN, 0};
    if (poll(&readable, 1, -1) < 0 && errno != EINTR) std::abort();  // our own open pipe
  }
}

void SignalWaiter::RaiseDefault(int signal) {
  ::signal(signal, SIG_DFL);
  sigset_t just_this;
  sigemptyset(&just_this);
  sigaddset(&just_this, signal);
  pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
  raise(signal);
  std::_Exit(128 + signal);  // not reached for a signal whose default action terminates
}

}  // namespace invariant
