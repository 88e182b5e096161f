#include "core/spectral/invariance_discrepancy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace invariant {

absl::StatusOr<std::vector<InvarianceDiscrepancy>> MeasureInvarianceDiscrepancies(
    const BatchPredictor& predictor, int64_t num_outputs, int32_t dim, int64_t n, const float* x,
    const TorusGroupElements& elements) {
  if (dim < 1 || num_outputs < 1 || n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("invariance discrepancy: expected dim, num_outputs, n >= 1, got ", dim, ", ",
                     num_outputs, ", ", n));
  }
  if (elements.elements.empty()) {
    return absl::InvalidArgumentError("invariance discrepancy: no group elements given");
  }
  for (size_t e = 0; e < elements.elements.size(); ++e) {
    if (elements.elements[e].dim() != dim) {
      return absl::InvalidArgumentError(absl::StrCat("invariance discrepancy: element ", e,
                                                     " has dimension ", elements.elements[e].dim(),
                                                     ", expected ", dim));
    }
  }
  std::vector<float> base(static_cast<size_t>(n * num_outputs));
  predictor(n, x, base.data());
  std::vector<InvarianceDiscrepancy> result(num_outputs);
  for (int64_t m = 0; m < num_outputs; ++m) {
    for (int64_t r = 0; r < n; ++r) {
      result[m].scale = std::max(result[m].scale, std::abs(double{base[r * num_outputs + m]}));
    }
  }
  // Transform and predict a chunk of elements at a time.
  const int64_t num_elements = static_cast<int64_t>(elements.elements.size());
  const int64_t per_chunk = std::max<int64_t>(1, 65536 / n);
  std::vector<double> sum(num_outputs, 0.0);
  for (int64_t e0 = 0; e0 < num_elements; e0 += per_chunk) {
    const int64_t count = std::min(per_chunk, num_elements - e0);
    std::vector<float> moved(static_cast<size_t>(count * n * dim));
    for (int64_t e = 0; e < count; ++e) {
      ApplyIsometry(elements.elements[e0 + e], n, x, moved.data() + e * n * dim);
    }
    std::vector<float> pred(static_cast<size_t>(count * n * num_outputs));
    predictor(count * n, moved.data(), pred.data());
    for (int64_t e = 0; e < count; ++e) {
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t m = 0; m < num_outputs; ++m) {
          const double diff = std::abs(double{pred[(e * n + r) * num_outputs + m]} -
                                       double{base[r * num_outputs + m]});
          result[m].max_abs = std::max(result[m].max_abs, diff);
          sum[m] += diff;
        }
      }
    }
  }
  for (int64_t m = 0; m < num_outputs; ++m) {
    InvarianceDiscrepancy& d = result[m];
    d.mean_abs = sum[m] / static_cast<double>(n * num_elements);
    d.relative_max = d.scale > 0 ? d.max_abs / d.scale : 0.0;
    d.num_points = n;
    d.num_elements = num_elements;
    d.exhaustive = elements.exhaustive;
    d.method = elements.method;
  }
  return result;
}

absl::StatusOr<InvarianceDiscrepancy> MeasureInvarianceDiscrepancy(
    const BatchPredictor& predictor, int32_t dim, int64_t n, const float* x,
    const TorusGroupElements& elements) {
  auto all = MeasureInvarianceDiscrepancies(predictor, 1, dim, n, x, elements);
  if (!all.ok()) return all.status();
  return (*all)[0];
}

}  // namespace invariant
