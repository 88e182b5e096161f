// The AVX2 compilation of patch_kernels_loops.inc (compiled with -mavx2
// -mfma -ffp-contract=off; core/encoders/CMakeLists.txt), called only on the
// avx2 and avx512 paths. Everything but the entry point has internal
// linkage, so no AVX2 code can stand in for a function elsewhere.
#include <cmath>
#include <cstdint>

#include "core/encoders/patch_kernels.h"

namespace invariant::patch_internal {
namespace {
#include "core/encoders/patch_kernels_loops.inc"
}  // namespace

const RowKernels& Avx2RowKernels() {
  static const RowKernels kAvx2 = {ThresholdLoop, ThresholdMaxLoop, AddBiasLoop, StepLoop,
                                   AddLoop,       FoldLoop,         FoldMaxLoop, NormalizeLoop};
  return kAvx2;
}

}  // namespace invariant::patch_internal
