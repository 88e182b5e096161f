// invariance_discrepancy.h: how far a predictor is from G-invariant,
//   ID(f) = max_{x ∈ X, g ∈ E} |f(x) − f(g·x)|   (Soleymani et al. §6.3),
// over given points X and group elements E (the whole group when it is small
// enough to enumerate, otherwise random words: torus_group.h). Works for any
// batch predictor; the generator residual of spectral coefficients is in
// invariant_subspace.h (GeneratorResidual).
#ifndef INVARIANT_CORE_SPECTRAL_INVARIANCE_DISCREPANCY_H_
#define INVARIANT_CORE_SPECTRAL_INVARIANCE_DISCREPANCY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/spectral/torus_group.h"

namespace invariant {

// Writes n × num_outputs predictions (row-major) for n points (n × dim).
using BatchPredictor = std::function<void(int64_t n, const float* x, float* y)>;

struct InvarianceDiscrepancy {
  double max_abs = 0.0;       // max |f(x) − f(g·x)|
  double mean_abs = 0.0;      // mean over points × elements
  double scale = 0.0;         // max |f(x)| over the points
  double relative_max = 0.0;  // max_abs / scale (0 when scale = 0)
  int64_t num_points = 0;
  int64_t num_elements = 0;
  bool exhaustive = false;
  std::string method;
};

// One discrepancy per output of a predictor with num_outputs outputs.
// Errors: dim < 1, num_outputs < 1, n < 1, no elements, an element of
// another dimension.
absl::StatusOr<std::vector<InvarianceDiscrepancy>> MeasureInvarianceDiscrepancies(
    const BatchPredictor& predictor, int64_t num_outputs, int32_t dim, int64_t n, const float* x,
    const TorusGroupElements& elements);

// Single-output convenience.
absl::StatusOr<InvarianceDiscrepancy> MeasureInvarianceDiscrepancy(
    const BatchPredictor& predictor, int32_t dim, int64_t n, const float* x,
    const TorusGroupElements& elements);

}  // namespace invariant

#endif  // INVARIANT_CORE_SPECTRAL_INVARIANCE_DISCREPANCY_H_
