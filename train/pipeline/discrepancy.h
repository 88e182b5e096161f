// discrepancy.h: the figures every invariance certificate is made of, shared
// by the group certificate (certificate.h), its curve (invariance_curve.h)
// and the pair certificate (pair_certificate.h).
//
//   Discrepancy   |f(x) − f(g·x)| (or |f(x) − f(x')|) summed and maximised
//                 over matched outputs;
//   spread        mean |f(x_i) − f(x_{(i+s) mod n})| over the shifts
//                 1 ≤ s ≤ min(n − 1, kMaxPairShifts): every ordered pair
//                 when n ≤ kMaxPairShifts + 1 (MeanPairwiseDifference);
//   figures       a certificate's max / mean / relative discrepancies from
//                 those two (SetDiscrepancyFigures).
//
// Errors: none (plain arithmetic on the caller's buffers). Thread-safety:
// the functions are reentrant; a Discrepancy is a value, not shared.
#ifndef INVARIANT_TRAIN_PIPELINE_DISCREPANCY_H_
#define INVARIANT_TRAIN_PIPELINE_DISCREPANCY_H_

#include <cstdint>

#include "invariant/v1/bundle.pb.h"

namespace invariant::train {

// The largest shift s of the pairs (x_i, x_{(i+s) mod n}) of the spread.
inline constexpr int64_t kMaxPairShifts = 64;

// |a − b| summed and maximised over matched outputs: the discrepancy of a
// certificate (|f(x) − f(g·x)|, or |f(x) − f(x')| over real pairs).
struct Discrepancy {
  double max_abs = 0;
  double sum_abs = 0;
  int64_t count = 0;  // values added
  // Adds |a[i] − b[i]| for i < m.
  void Add(const float* a, const float* b, int64_t m);
  double mean() const { return count > 0 ? sum_abs / static_cast<double>(count) : 0; }
};

// The spread above, mean |f(x_i) − f(x_{(i+s) mod n})| over
// 1 ≤ s ≤ min(n − 1, kMaxPairShifts), every i and every output, of n rows of
// k scores (row-major); 0 when n < 2.
double MeanPairwiseDifference(const float* scores, int64_t n, int64_t k);

// Sets the figures of `c` from `d`: max_discrepancy, mean_discrepancy,
// relative_max_discrepancy (d.max_abs / max_abs_score, 0 when that is 0),
// mean_pairwise_difference (`spread`) and relative_mean_discrepancy
// (d.mean() / spread, 0 when spread is 0).
void SetDiscrepancyFigures(const Discrepancy& d, double max_abs_score, double spread,
                           v1::InvarianceCertificate& c);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_DISCREPANCY_H_
