#include "core/base/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace invariant {
namespace {

id_t ThisThreadsId() { return static_cast<id_t>(syscall(SYS_gettid)); }

}  // namespace

int ThisThreadsNice() {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, ThisThreadsId());
  return nice == -1 && errno != 0 ? 0 : nice;
}

void LowerThisThreadsPriority(int nice) {
  if (nice <= 0) return;
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, ThisThreadsId());
  if (current == -1 && errno != 0) return;
  (void)setpriority(PRIO_PROCESS, ThisThreadsId(), current + nice);
}

}  // namespace invariant
