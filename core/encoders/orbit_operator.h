// orbit_operator.h: r fixed group elements applied to an input in one pass.
//
// With the input placement and elements fixed when the model was drawn
// (Projector::OverInputOrbit), every request applies the same r elements
// g_1..g_r to each input row. Every action in core/groups is linear in the
// pixel/coordinate values, so each g_k is a sparse d × d matrix; it is
// extracted ONCE (by applying g_k to the unit vectors, 256 at a time: r·d²
// work, a scratch of 2·256·d floats per element in flight) and stored in ELL
// form: for element k and output coordinate u, taps t < T_k of
// (source index, weight), the sources ascending. Image rotations become
// ≤ 4 bilinear taps per pixel, permutations and shifts a one-tap index map,
// sign flips a one-tap ±1 map. Taps beyond a coordinate's count have weight
// 0 (so a non-finite input coordinate gives NaN, as in the projections).
//
// Apply computes, for every row i and element k,
//   y[i·r + k][u]:  acc = 0;  for t ascending: acc = fma(w_t, x[s_t], acc)
// — one order, so
// the AVX2 (8-lane gathers) and portable paths give the same bits, and a
// row's copies never depend on the other rows. The path is the active
// kernel path (kernel_path.h: ActiveKernelPath, INVARIANT_KERNEL).
//
// Thread-safety: immutable after Build; Apply is const and thread-safe.
#ifndef INVARIANT_CORE_ENCODERS_ORBIT_OPERATOR_H_
#define INVARIANT_CORE_ENCODERS_ORBIT_OPERATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/groups/group.h"

namespace invariant {

class OrbitOperator {
 public:
  OrbitOperator() = default;

  // Extracts the sparse maps of `elements` under `action`. Errors: no
  // elements, an action of dimension ≤ 0.
  static absl::StatusOr<OrbitOperator> Build(const GroupAction& action,
                                             const std::vector<GroupElement>& elements);

  int64_t dim() const { return dim_; }                                         // d
  int64_t num_elements() const { return static_cast<int64_t>(taps_.size()); }  // r
  // Taps of element k (the largest source count over its coordinates).
  int64_t taps(int64_t k) const { return taps_[static_cast<size_t>(k)]; }

  // y (n·r × d, row i·r + k = g_k·x_i) from x (n × d, row stride ldx).
  void Apply(int64_t n, const float* x, int64_t ldx, float* y) const;
  // y (d values) = g_k·x for one row x.
  void ApplyElement(int64_t k, const float* x, float* y) const;

 private:
  int64_t dim_ = 0;
  std::vector<int64_t> taps_;    // T_k
  std::vector<int64_t> offset_;  // start of element k in index_/weight_
  std::vector<int32_t> index_;   // element k: T_k × d, tap-major
  std::vector<float> weight_;    // same layout
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_ORBIT_OPERATOR_H_
