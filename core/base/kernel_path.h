// kernel_path.h: which instruction set the vector kernels run on.
//
// Every kernel with a vector path keeps a portable twin that gives the same
// bits (packed_dot.h, fast_math.h, orbit_operator.h, audio/band_energies.h);
// this file chooses, once per process, which of them runs:
//   kAvx512  AVX-512F                (packed_dot; the others use AVX2 here)
//   kAvx2    AVX2 + FMA              (band_energies: AVX2 alone)
//   kScalar  portable C++ (std::fma): any CPU, aarch64 included
// The best path the CPU supports is used, unless the environment variable
// INVARIANT_KERNEL=avx512|avx2|scalar names another: a path the CPU lacks,
// or an unknown name, falls back to the best supported path with a note on
// stderr. SetKernelPath forces a path (tests, benchmarks).
//
// INVARIANT_X86_SIMD is 1 when the x86 vector paths are compiled in: on
// x86-64, unless the build set INVARIANT_PORTABLE_KERNELS (CMake option
// INVARIANT_PORTABLE_KERNELS=ON), which leaves only kScalar, as on aarch64.
// A kernel's vector code sits behind `#if INVARIANT_X86_SIMD` and runs only
// when ActiveKernelPath() is not kScalar.
//
// Errors: SetKernelPath of a path the CPU lacks (FailedPrecondition).
// Thread-safety: all functions are thread-safe; the active path is one
// process-wide atomic, read by every kernel call (a change applies to the
// calls that start after it).
#ifndef INVARIANT_CORE_BASE_KERNEL_PATH_H_
#define INVARIANT_CORE_BASE_KERNEL_PATH_H_

#include <vector>

#include "absl/status/status.h"

#if defined(__x86_64__) && !defined(INVARIANT_PORTABLE_KERNELS)
#define INVARIANT_X86_SIMD 1
#else
#define INVARIANT_X86_SIMD 0
#endif

namespace invariant {

enum class KernelPath { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

// "scalar", "avx2" or "avx512".
const char* KernelPathName(KernelPath path);
bool KernelPathSupported(KernelPath path);
// The supported paths, best first (always ends with kScalar).
std::vector<KernelPath> SupportedKernelPaths();
// The path the kernels use now.
KernelPath ActiveKernelPath();
// Forces a path for the whole process. Errors: the CPU lacks it
// (FailedPrecondition; the active path is unchanged).
absl::Status SetKernelPath(KernelPath path);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_KERNEL_PATH_H_
