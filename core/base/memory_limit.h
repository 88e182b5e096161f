// memory_limit.h: what memory this process holds and may still take, read
// from the kernel (/proc/self/status, /proc/meminfo) and from its cgroup v2
// (a container's limit).
//
// Used before a large allocation (a bundle's private copy, a training run's
// Gram matrix) to refuse with figures instead of being OOM-killed later.
// Reentrant; each call reads the files anew.
#ifndef INVARIANT_CORE_BASE_MEMORY_LIMIT_H_
#define INVARIANT_CORE_BASE_MEMORY_LIMIT_H_

#include <cstdint>

namespace invariant {

// The bytes the machine can still give this process: the smaller of the
// kernel's MemAvailable and what the cgroup has left (memory.max less
// memory.current); 0 when neither can be read.
uint64_t AvailableMemoryBytes();

// This process's resident set (VmRSS of /proc/self/status) and its peak
// (VmHWM); 0 when they cannot be read.
uint64_t ResidentBytes();
uint64_t PeakResidentBytes();

// The cgroup's memory.max (a pod's resources.limits.memory); 0 when there
// is none ("max") or it cannot be read.
uint64_t CgroupMemoryLimitBytes();

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_MEMORY_LIMIT_H_
