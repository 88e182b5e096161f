#include "core/base/signal_waiter.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

std::atomic<int> g_write_fd{-1};
struct sigaction g_previous[NSIG];

extern "C" void WriteSignalNumber(int signal) {
  const int saved_errno = errno;
  const int fd = g_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const unsigned char number = static_cast<unsigned char>(signal);
    ssize_t ignored = write(fd, &number, 1);  // full pipe: the signal is dropped
    (void)ignored;
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
  // The handler must never block a thread the kernel picked.
  fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  std::unique_ptr<SignalWaiter> waiter(new SignalWaiter({}, fds[0]));
  sigset_t unblock;
  sigemptyset(&unblock);
  for (int signal : signals) {
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = WriteSignalNumber;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (signal <= 0 || signal >= NSIG || sigaction(signal, &action, &g_previous[signal]) != 0) {
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

int SignalWaiter::Wait() {
  unsigned char number = 0;
  while (true) {
    const ssize_t got = read(read_fd_, &number, 1);
    if (got == 1) return number;
    if (got < 0 && errno == EINTR) continue;
    std::abort();  // the write end is ours and open: cannot happen
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
