#include "core/base/kernel_path.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

KernelPath BestSupportedPath() { return SupportedKernelPaths().front(); }

// The path chosen from INVARIANT_KERNEL (or the best one), once per process.
KernelPath InitialPath() {
  const KernelPath best = BestSupportedPath();
  const char* env = std::getenv("INVARIANT_KERNEL");
  if (env == nullptr || *env == '\0') return best;
  const std::string want(env);
  for (KernelPath p : {KernelPath::kAvx512, KernelPath::kAvx2, KernelPath::kScalar}) {
    if (want != KernelPathName(p)) continue;
    if (KernelPathSupported(p)) return p;
    std::fprintf(stderr, "invariant: INVARIANT_KERNEL=%s is not supported by this CPU; using %s\n",
                 env, KernelPathName(best));
    return best;
  }
  std::fprintf(stderr,
               "invariant: INVARIANT_KERNEL=%s is not one of avx512, avx2, scalar; using %s\n", env,
               KernelPathName(best));
  return best;
}

std::atomic<int>& ActivePathSlot() {
  static std::atomic<int> slot{static_cast<int>(InitialPath())};
  return slot;
}

}  // namespace

const char* KernelPathName(KernelPath path) {
  switch (path) {
    case KernelPath::kAvx512:
      return "avx512";
    case KernelPath::kAvx2:
      return "avx2";
    case KernelPath::kScalar:
      return "scalar";
  }
  return "unknown";
}

bool KernelPathSupported(KernelPath path) {
  switch (path) {
    case KernelPath::kScalar:
      return true;
#if INVARIANT_X86_SIMD
    case KernelPath::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case KernelPath::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
#endif
    default:
      return false;
  }
}

std::vector<KernelPath> SupportedKernelPaths() {
  std::vector<KernelPath> paths;
  for (KernelPath p : {KernelPath::kAvx512, KernelPath::kAvx2, KernelPath::kScalar}) {
    if (KernelPathSupported(p)) paths.push_back(p);
  }
  return paths;
}

KernelPath ActiveKernelPath() { return static_cast<KernelPath>(ActivePathSlot().load()); }

absl::Status SetKernelPath(KernelPath path) {
  if (!KernelPathSupported(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel path ", KernelPathName(path), " is not supported by this CPU"));
  }
  ActivePathSlot().store(static_cast<int>(path));
  return absl::OkStatus();
}

}  // namespace invariant
