#include "train/pipeline/discrepancy.h"

#include <algorithm>
#include <cmath>

namespace invariant::train {

void Discrepancy::Add(const float* a, const float* b, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    const double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    max_abs = std::max(max_abs, diff);
    sum_abs += diff;
  }
  count += m;
}

double MeanPairwiseDifference(const float* scores, int64_t n, int64_t k) {
  double sum = 0;
  int64_t pairs = 0;
  for (int64_t s = 1; s <= std::min<int64_t>(n - 1, kMaxPairShifts); ++s) {
    for (int64_t i = 0; i < n; ++i) {
      const float* a = scores + i * k;
      const float* b = scores + ((i + s) % n) * k;
      for (int64_t c = 0; c < k; ++c) sum += std::fabs(static_cast<double>(a[c]) - b[c]);
    }
    pairs += n * k;
  }
  return pairs > 0 ? sum / static_cast<double>(pairs) : 0;
}

void SetDiscrepancyFigures(const Discrepancy& d, double max_abs_score, double spread,
                           v1::InvarianceCertificate& c) {
  c.set_max_discrepancy(d.max_abs);
  c.set_mean_discrepancy(d.mean());
  c.set_relative_max_discrepancy(max_abs_score > 0 ? d.max_abs / max_abs_score : 0);
  c.set_mean_pairwise_difference(spread);
  c.set_relative_mean_discrepancy(spread > 0 ? d.mean() / spread : 0);
}

}  // namespace invariant::train
