// nearest_neighbor.h: batched exact 1-nearest-neighbour search (Euclidean),
// for the papers' nearest-neighbour checks (Mroueh §5, Theorem 2).
//
// Distances use ‖q − r‖² = ‖q‖² − 2⟨q, r⟩ + ‖r‖² with the inner products
// from one double-precision GEMM per block (OpenBLAS), so the ranking is
// exact for integer-valued data and accurate to ~1e-16 relative otherwise.
// Ties go to the smallest reference index. Thread-safe.
#ifndef INVARIANT_CORE_RLS_NEAREST_NEIGHBOR_H_
#define INVARIANT_CORE_RLS_NEAREST_NEIGHBOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"

namespace invariant {

// For each row of queries (M × D), the index of its nearest row of
// references (R × D). Errors: INVALID_ARGUMENT when R = 0, the column counts
// differ, or a value is not finite.
absl::StatusOr<std::vector<int64_t>> NearestNeighborIndices(const FloatMatrix& queries,
                                                            const FloatMatrix& references);

// The label of each query's nearest reference. reference_labels has R
// entries. Errors: those of NearestNeighborIndices, or INVALID_ARGUMENT when
// the label count is not R.
absl::StatusOr<std::vector<int32_t>> NearestNeighborClassify(
    const FloatMatrix& queries, const FloatMatrix& references,
    absl::Span<const int32_t> reference_labels);

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_NEAREST_NEIGHBOR_H_
