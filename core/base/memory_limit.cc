#include "core/base/memory_limit.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace invariant {

namespace {

// The value of `key` ("VmRSS:") in /proc/self/status, in bytes.
uint64_t ProcStatusBytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, key.size(), key) == 0) {
      return std::strtoull(line.c_str() + key.size(), nullptr, 10) << 10;  // kB
    }
  }
  return 0;
}

}  // namespace

uint64_t ResidentBytes() { return ProcStatusBytes("VmRSS:"); }
uint64_t PeakResidentBytes() { return ProcStatusBytes("VmHWM:"); }

uint64_t CgroupMemoryLimitBytes() {
  uint64_t limit = 0;
  std::ifstream max_file("/sys/fs/cgroup/memory.max");
  if (max_file >> limit) return limit;  // "max" fails the read: no limit
  return 0;
}

uint64_t AvailableMemoryBytes() {
  uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      available = kib << 10;
      break;
    }
  }
  uint64_t current = 0;
  const uint64_t limit = CgroupMemoryLimitBytes();
  std::ifstream current_file("/sys/fs/cgroup/memory.current");
  if (limit > 0 && (current_file >> current) && limit > current) {
    available = available == 0 ? limit - current : std::min(available, limit - current);
  }
  return available;
}

}  // namespace invariant
