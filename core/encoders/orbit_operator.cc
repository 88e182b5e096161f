#include "core/encoders/orbit_operator.h"

#include "core/base/kernel_path.h"  // INVARIANT_X86_SIMD, ActiveKernelPath

#if INVARIANT_X86_SIMD
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/base/thread_pool.h"

namespace invariant {
namespace {

// One element: y[u] = Σ_t w[t·d + u] · x[idx[t·d + u]], acc = fma(.., acc)
// for t ascending from acc = 0.
void ApplyElementPortable(const float* x, const int32_t* idx, const float* w, int64_t taps,
                          int64_t d, float* y) {
  for (int64_t u = 0; u < d; ++u) {
    float acc = 0.0f;
    for (int64_t t = 0; t < taps; ++t) {
      acc = std::fma(w[t * d + u], x[idx[t * d + u]], acc);
    }
    y[u] = acc;
  }
}

#if INVARIANT_X86_SIMD
__attribute__((target("avx2,fma"))) void ApplyElementAvx2(const float* x, const int32_t* idx,
                                                          const float* w, int64_t taps, int64_t d,
                                                          float* y) {
  int64_t u = 0;
  for (; u + 8 <= d; u += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + t * d + u));
      const __m256 v = _mm256_i32gather_ps(x, i, 4);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(w + t * d + u), v, acc);
    }
    _mm256_storeu_ps(y + u, acc);
  }
  for (; u < d; ++u) {
    float acc = 0.0f;
    for (int64_t t = 0; t < taps; ++t) {
      acc = _mm_cvtss_f32(
          _mm_fmadd_ss(_mm_set_ss(w[t * d + u]), _mm_set_ss(x[idx[t * d + u]]), _mm_set_ss(acc)));
    }
    y[u] = acc;
  }
}
#endif

}  // namespace

absl::StatusOr<OrbitOperator> OrbitOperator::Build(const GroupAction& action,
                                                   const std::vector<GroupElement>& elements) {
  const int64_t d = action.dim();
  if (d <= 0) return absl::InvalidArgumentError("orbit operator: the action has no coordinates");
  if (elements.empty()) return absl::InvalidArgumentError("orbit operator: no group elements");
  const int64_t r = static_cast<int64_t>(elements.size());
  // Per element: the (source, weight) list of every output coordinate.
  std::vector<std::vector<std::vector<std::pair<int32_t, float>>>> lists(static_cast<size_t>(r));
  // The unit vectors go through the action kUnitBlock at a time, so the
  // scratch is 2·kUnitBlock·d floats per element in flight, not d² (a
  // 224 × 224 × 3 image would have needed 90 GB at once).
  constexpr int64_t kUnitBlock = 256;
  const int64_t block = std::min(kUnitBlock, d);
  ParallelFor(r, [&](int64_t k) {
    std::vector<float> units(static_cast<size_t>(block * d), 0.0f);
    std::vector<float> moved(static_cast<size_t>(block * d));
    auto& per_output = lists[static_cast<size_t>(k)];
    per_output.assign(static_cast<size_t>(d), {});
    for (int64_t i0 = 0; i0 < d; i0 += block) {
      const int64_t rows = std::min(block, d - i0);
      for (int64_t b = 0; b < rows; ++b) units[static_cast<size_t>(b * d + i0 + b)] = 1.0f;
      // Row b of `moved` is g_k·e_{i0+b}: column u holds the weight of source i0 + b.
      action.Apply(elements[static_cast<size_t>(k)], rows, units.data(), moved.data());
      for (int64_t b = 0; b < rows; ++b) {
        units[static_cast<size_t>(b * d + i0 + b)] = 0.0f;
        for (int64_t u = 0; u < d; ++u) {
          const float v = moved[static_cast<size_t>(b * d + u)];
          if (v != 0.0f) {
            per_output[static_cast<size_t>(u)].push_back({static_cast<int32_t>(i0 + b), v});
          }
        }
      }
    }
  });
  OrbitOperator op;
  op.dim_ = d;
  int64_t total = 0;
  for (int64_t k = 0; k < r; ++k) {
    int64_t taps = 1;  // at least one (weight 0) tap, so every output is written
    for (const auto& l : lists[static_cast<size_t>(k)]) {
      taps = std::max<int64_t>(taps, static_cast<int64_t>(l.size()));
    }
    op.taps_.push_back(taps);
    op.offset_.push_back(total);
    total += taps * d;
  }
  op.index_.assign(static_cast<size_t>(total), 0);
  op.weight_.assign(static_cast<size_t>(total), 0.0f);
  for (int64_t k = 0; k < r; ++k) {
    const int64_t base = op.offset_[static_cast<size_t>(k)];
    for (int64_t u = 0; u < d; ++u) {
      const auto& l = lists[static_cast<size_t>(k)][static_cast<size_t>(u)];
      for (int64_t t = 0; t < static_cast<int64_t>(l.size()); ++t) {
        op.index_[static_cast<size_t>(base + t * d + u)] = l[static_cast<size_t>(t)].first;
        op.weight_[static_cast<size_t>(base + t * d + u)] = l[static_cast<size_t>(t)].second;
      }
      // Padding taps read the coordinate itself with weight 0.
      for (int64_t t = static_cast<int64_t>(l.size()); t < op.taps_[static_cast<size_t>(k)]; ++t) {
        op.index_[static_cast<size_t>(base + t * d + u)] = static_cast<int32_t>(u);
      }
    }
  }
  return op;
}

void OrbitOperator::ApplyElement(int64_t k, const float* x, float* y) const {
  const size_t base = static_cast<size_t>(offset_[static_cast<size_t>(k)]);
  const int64_t taps = taps_[static_cast<size_t>(k)];
#if INVARIANT_X86_SIMD
  if (ActiveKernelPath() != KernelPath::kScalar) {
    ApplyElementAvx2(x, index_.data() + base, weight_.data() + base, taps, dim_, y);
    return;
  }
#endif
  ApplyElementPortable(x, index_.data() + base, weight_.data() + base, taps, dim_, y);
}

void OrbitOperator::Apply(int64_t n, const float* x, int64_t ldx, float* y) const {
  const int64_t r = num_elements();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < r; ++k) ApplyElement(k, x + i * ldx, y + (i * r + k) * dim_);
  }
}

}  // namespace invariant
