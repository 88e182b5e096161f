// gram_accumulator.h: the sufficient statistics of ridge regression, summed
// in double precision over blocks of rows and across shards.
//
// For features Φ (N × D) and targets Y (N × T) a GramAccumulator holds
//   ΦᵀΦ (D × D, symmetric), ΦᵀY (D × T), Σ_i φ_i (D), Σ_i y_i (T),
//   Σ_i y_i² (T, per target) and N,
// which is everything the primal solver (ridge.h) needs, including the
// centring that fits an unregularised bias. Rows arrive as float blocks of
// any size; the sums are double. Shards built independently (one per
// training pod) add up with Merge. Floating-point addition is not
// associative, so the block sizes and the merge order may change the last
// bits of the sums (relative differences of order 1e-16 · number of terms),
// never more.
//
// Thread-compatible: a const accumulator may be read from many threads; Add
// and Merge need exclusive access.
#ifndef INVARIANT_CORE_RLS_GRAM_ACCUMULATOR_H_
#define INVARIANT_CORE_RLS_GRAM_ACCUMULATOR_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace invariant {

class GramAccumulator {
 public:
  // An empty accumulator (N = 0) for D = feature_dim features and
  // T = target_dim targets. Both must be ≥ 1 (checked by Create).
  static absl::StatusOr<GramAccumulator> Create(int64_t feature_dim, int64_t target_dim);

  // Adds n rows: `phi` is n × D row-major, `y` n × T row-major. Errors:
  // INVALID_ARGUMENT for n < 0, null pointers with n > 0, or a non-finite
  // value (the message names the array, row and column); the accumulator is
  // unchanged on error.
  absl::Status Add(int64_t n, const float* phi, const float* y);

  // Adds the sums of `other` to this one. Errors: INVALID_ARGUMENT when the
  // dimensions differ (names both).
  absl::Status Merge(const GramAccumulator& other);

  int64_t feature_dim() const { return feature_dim_; }
  int64_t target_dim() const { return target_dim_; }
  // N: rows added so far (over every merged shard).
  int64_t count() const { return count_; }

  // ΦᵀΦ, full symmetric D × D.
  Eigen::MatrixXd PhiTPhi() const;
  // ΦᵀΦ with only the lower triangle meaningful (the upper one is zero); no copy.
  const Eigen::MatrixXd& phi_t_phi_lower() const { return phi_t_phi_lower_; }
  // Moves ΦᵀΦ's storage (lower triangle meaningful) out of an accumulator
  // that is being consumed, so that a solver can centre and factor it in
  // place instead of copying D × D doubles. Afterwards the accumulator holds
  // a 0 × 0 ΦᵀΦ: Add and Merge return FAILED_PRECONDITION, and it must not
  // be serialised or solved from; its other sums are intact.
  Eigen::MatrixXd TakePhiTPhiLower() && { return std::move(phi_t_phi_lower_); }
  // ΦᵀY, D × T.
  const Eigen::MatrixXd& phi_t_y() const { return phi_t_y_; }
  // Σ_i φ_i, length D.
  const Eigen::VectorXd& phi_sum() const { return phi_sum_; }
  // Σ_i y_i, length T.
  const Eigen::VectorXd& y_sum() const { return y_sum_; }
  // Σ_i y_i² per target, length T (gives the training loss without the data).
  const Eigen::VectorXd& y_squared_sum() const { return y_squared_sum_; }

  // A flat buffer of doubles (host byte order; the training job writes it as
  // raw bytes to a shard file). Layout, in this order:
  //   [magic 0x47524D31 ("GRM1"), format version 1, D, T, N,
  //    Σφ (D), Σy (T), Σy² (T), lower triangle of ΦᵀΦ column by column
  //    (D(D+1)/2 values), ΦᵀY column-major (D·T values)].
  std::vector<double> Serialize() const;
  // Inverse of Serialize. Errors: DATA_LOSS for a wrong magic, version,
  // length (the message gives expected and received), or dimensions that are
  // not positive integers.
  static absl::StatusOr<GramAccumulator> Deserialize(absl::Span<const double> buffer);

  // Serialize's buffer in pieces, in order, without holding it (a shard file
  // of D = 25,600 is 2.6 GB): `write(values, n)` receives consecutive runs of
  // at most max(D, D·T) values and returns false to stop early, and then so
  // does this.
  bool SerializeTo(const std::function<bool(const double*, int64_t)>& write) const;
  // Adds a serialised accumulator to this one, read in pieces by
  // `read(values, n)` (fills n values; false when its input fails), holding
  // one column at a time: the streaming twin of Merge(Deserialize(buffer)).
  // Errors: DATA_LOSS as Deserialize for a bad header and for input that
  // ends early; INVALID_ARGUMENT when its D or T differ from this one's
  // (names both). After an error past the header this accumulator holds a
  // part of the sums and must be discarded.
  absl::Status MergeSerialized(const std::function<bool(double*, int64_t)>& read);

  // Number of doubles Serialize produces for D features and T targets.
  static int64_t SerializedSize(int64_t feature_dim, int64_t target_dim);

 private:
  GramAccumulator(int64_t feature_dim, int64_t target_dim);
  // FAILED_PRECONDITION naming `who` once TakePhiTPhiLower has run.
  absl::Status CheckNotConsumed(const char* who) const;

  int64_t feature_dim_;
  int64_t target_dim_;
  int64_t count_ = 0;
  Eigen::MatrixXd phi_t_phi_lower_;
  Eigen::MatrixXd phi_t_y_;
  Eigen::VectorXd phi_sum_;
  Eigen::VectorXd y_sum_;
  Eigen::VectorXd y_squared_sum_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_RLS_GRAM_ACCUMULATOR_H_
