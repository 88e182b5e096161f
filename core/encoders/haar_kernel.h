// haar_kernel.h: exact group-integrated kernels, the yardstick for features.
//
// docs/math.md §5: for a finite (fully enumerated) group G, or any list of equally
// weighted elements g_1..g_r standing for a distribution q,
//   K(x, z) = (1/r²) Σ_{a,b} k0(g_a·x, g_b·z),
// with base kernel k0 linear ⟨x, z⟩ or Gaussian exp(−‖x − z‖²/(2σ²)). The
// orbits are computed once in float by the action and the sums run in
// double. Cost O(|A|·|B|·r²·d): a reference, not a serving path.
#ifndef INVARIANT_CORE_ENCODERS_HAAR_KERNEL_H_
#define INVARIANT_CORE_ENCODERS_HAAR_KERNEL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/groups/group.h"

namespace invariant {

enum class BaseKernelKind { kLinear, kGaussian };

struct BaseKernel {
  BaseKernelKind kind = BaseKernelKind::kGaussian;
  double sigma = 1.0;  // kGaussian only, > 0
};

// k0(a_i, b_j) for every pair of rows (|A| × |B|). Errors: column counts
// differ, Gaussian sigma not > 0.
absl::StatusOr<DoubleMatrix> BaseKernelMatrix(const FloatMatrix& a, const FloatMatrix& b,
                                              const BaseKernel& kernel);

// The group-integrated kernel matrix (|A| × |B|) over `elements`.
// Errors: no elements, a.cols() or b.cols() != action.dim(), bad sigma.
absl::StatusOr<DoubleMatrix> HaarKernelMatrix(const FloatMatrix& a, const FloatMatrix& b,
                                              const GroupAction& action,
                                              const std::vector<GroupElement>& elements,
                                              const BaseKernel& kernel);

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_HAAR_KERNEL_H_
