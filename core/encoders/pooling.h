// pooling.h: pooling of one template's r projections into features.
//
// docs/math.md §2 (Mroueh et al. 2015 and I-theory). Each function reads the r
// projections p_k = ⟨g_k⁻¹·t_j, x⟩ of one template and writes that
// template's features. All sums run in a fixed order over k, so the result
// is deterministic and independent of how rows were batched.
#ifndef INVARIANT_CORE_ENCODERS_POOLING_H_
#define INVARIANT_CORE_ENCODERS_POOLING_H_

#include <cstdint>
#include <vector>

namespace invariant {

// Mirrors invariant.v1.Pooling.
enum class Pooling {
  kCdf = 1,           // 2n+1 empirical-CDF bins per template
  kMean = 2,          // (1/r) Σ_k p_k
  kSecondMoment = 3,  // (1/r) Σ_k p_k²
  kMax = 4,           // max_k p_k
};

// The thresholds s·k/n for k = −n..n (2n+1 floats, ascending), computed in
// double and rounded to float. Requires n > 0, s > 0.
std::vector<float> CdfThresholds(int64_t num_bins, double range);

// out[k + n] = (1/r) · #{i : p_i ≤ thresholds[k + n]} for k = −n..n, with the
// comparison made in float exactly as written (NaN never counts).
// `counts` is caller scratch of 2n + 2 ints.
void PoolCdf(const float* p, int64_t r, const std::vector<float>& thresholds, int32_t* counts,
             float* out);

// out[0] = (1/r) Σ p_k, accumulated in double.
void PoolMean(const float* p, int64_t r, float* out);
// out[0] = (1/r) Σ p_k², accumulated in double.
void PoolSecondMoment(const float* p, int64_t r, float* out);
// out[0] = max_k p_k (NaN-free inputs assumed; a NaN is skipped unless all are).
void PoolMax(const float* p, int64_t r, float* out);

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_POOLING_H_
