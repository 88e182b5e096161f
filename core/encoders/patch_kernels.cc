#include "core/encoders/patch_kernels.h"

#include <cmath>

#include "core/base/kernel_path.h"  // INVARIANT_X86_SIMD, ActiveKernelPath

namespace invariant::patch_internal {

#if INVARIANT_X86_SIMD
// patch_kernels_avx2.cc (compiled with -mavx2 -mfma).
const RowKernels& Avx2RowKernels();
#endif

namespace {
#include "core/encoders/patch_kernels_loops.inc"
}  // namespace

const RowKernels& ActiveRowKernels() {
#if INVARIANT_X86_SIMD
  if (ActiveKernelPath() != KernelPath::kScalar) return Avx2RowKernels();
#endif
  static const RowKernels kPortable = {ThresholdLoop, ThresholdMaxLoop, AddBiasLoop, StepLoop,
                                       AddLoop,       FoldLoop,         FoldMaxLoop, NormalizeLoop};
  return kPortable;
}

}  // namespace invariant::patch_internal
