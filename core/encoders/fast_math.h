// fast_math.h: vectorisable float sin/cos and exp for the pooling kernels.
//
// The pooling step of the random Fourier and Nyström encoders evaluates one
// sin/cos pair or one exp per bank row and input row, as many evaluations as
// the GEMM has outputs; libm's scalar calls would cost more than the GEMM.
// The kernels (Cody–Waite range reduction and the Cephes minimax
// polynomials, fast_math_kernels.h) are written once over a lane type and
// run 8 lanes wide (AVX2) on the avx2/avx512 kernel paths and one lane wide
// (portable C++, any CPU) on the scalar path; the path is the active
// kernel path (kernel_path.h: INVARIANT_KERNEL, SetKernelPath). They are
// deterministic: the same input gives the same bits on every path, whatever
// the array length or its position in it.
//
// Accuracy: |error| ≤ 2e-7 + 1e-7·|x| for sin/cos with |x| ≤ 1e5 (beyond
// 4e6 the reduction is meaningless and the result is only bounded by 1);
// relative error ≤ 1e-6 for exp on [-87, 88]; exp underflows to 0 below -87.
#ifndef INVARIANT_CORE_ENCODERS_FAST_MATH_H_
#define INVARIANT_CORE_ENCODERS_FAST_MATH_H_

#include <cstdint>

namespace invariant {

// sin_out[i] = sin(x[i]), cos_out[i] = cos(x[i]) for i < n. The outputs must
// not overlap x or each other. NaN inputs give unspecified finite values.
void FastSinCos(int64_t n, const float* x, float* sin_out, float* cos_out);

// out[i] = exp(x[i]) for i < n; out may equal x (in place).
void FastExp(int64_t n, const float* x, float* out);

// Σ v[i] for i < n in one fixed order that depends only on n: four lane
// sums over i mod 4 (ascending), combined as (l0 + l1) + (l2 + l3), then the
// n mod 4 tail in order.
float SumInFixedOrder(const float* v, int64_t n);

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_FAST_MATH_H_
