// patch_kernels.h: the element-wise loops of the patch encoder's responses
// (patch_encoder.cc), one set per kernel path.
//
// Each loop is plain C++ (patch_kernels_loops.inc) compiled twice: portably
// (patch_kernels.cc, any CPU) and with -mavx2 -mfma (patch_kernels_avx2.cc,
// used on the avx2 and avx512 paths). Both are built with
// -ffp-contract=off and do only IEEE additions, subtractions and
// comparisons per element, so every path gives the same bits (the CDF's
// counts are small integers, exact in float).
//
// Thread-safety: stateless functions; ActiveRowKernels() follows the active
// kernel path (kernel_path.h) at the time of the call.
#ifndef INVARIANT_CORE_ENCODERS_PATCH_KERNELS_H_
#define INVARIANT_CORE_ENCODERS_PATCH_KERNELS_H_

#include <cstdint>

namespace invariant::patch_internal {

struct RowKernels {
  // u = t[c] + b[c]; a0[c] += max(0, u − α); a1[c] += max(0, −u − α).
  void (*threshold)(int64_t n, const float* t, const float* b, float alpha, float* a0, float* a1);
  // The same responses, kept as running maxima (max pooling; a0, a1 start
  // at 0, the least response): a0[c] = max(a0[c], u − α), likewise a1.
  void (*threshold_max)(int64_t n, const float* t, const float* b, float alpha, float* a0,
                        float* a1);
  // t[c] += b[c].
  void (*add_bias)(int64_t n, float* t, const float* b);
  // a[c] += 1 when t[c] ≤ threshold, else 0 (NaN counts 0); exact counts.
  void (*step)(int64_t n, const float* t, float threshold, float* a);
  // a[c] += v[c].
  void (*add)(int64_t n, const float* v, float* a);
  // d[c] += a[c]; a[c] = 0.
  void (*fold)(int64_t n, float* a, double* d);
  // d[c] = max(d[c], a[c]); a[c] = 0.
  void (*fold_max)(int64_t n, float* a, double* d);
  // p ← (p − mean p) / sqrt(var p + epsilon) over n values (NormalizePatch;
  // its sums in a fixed order, so every path gives the same bits).
  void (*normalize)(int64_t n, double epsilon, float* p);
};

// The loops of the active kernel path.
const RowKernels& ActiveRowKernels();

}  // namespace invariant::patch_internal

#endif  // INVARIANT_CORE_ENCODERS_PATCH_KERNELS_H_
