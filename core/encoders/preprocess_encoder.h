// preprocess_encoder.h: per-input centering, scaling and L2 normalisation.
//
// invariant.v1.Preprocess: x ← (x − mean) / scale coordinate-wise (each step
// only when enabled), then x ← x / ‖x‖ when l2_normalize (the norm is
// accumulated in double; a zero row stays zero). d_out = d_in. Tensors:
// mean() and scale() are 1 × d ("preprocess/mean", "preprocess/scale"),
// empty when the step is off. Encode is const, thread-safe, row-wise (row
// blocks split over the thread pool).
#ifndef INVARIANT_CORE_ENCODERS_PREPROCESS_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_PREPROCESS_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/encoders/encoder.h"

namespace invariant {

struct PreprocessOptions {
  bool center = false;
  bool scale = false;
  bool l2_normalize = false;
};

// Column means and standard deviations accumulated block by block (Chan et
// al.'s pairwise update, each block centred on its own mean), so rows can be
// streamed and the result matches a two-pass computation in double. A
// constant column gets scale 1.
class ColumnStatistics {
 public:
  explicit ColumnStatistics(int64_t d);
  // Adds n rows of d floats (row-major).
  void Add(int64_t n, const float* rows);
  int64_t count() const { return count_; }
  // 1 × d means and standard deviations (1 where a column is constant).
  // Precondition: count() > 0.
  FloatMatrix Mean() const;
  FloatMatrix Scale() const;

 private:
  int64_t d_;
  int64_t count_ = 0;
  std::vector<double> mean_;
  std::vector<double> m2_;  // Σ (x − mean)²
};

class PreprocessEncoder final : public Encoder {
 public:
  // Errors: d ≤ 0; mean (scale) not 1 × d when center (scale) is on; a
  // scale entry that is zero or not finite.
  static absl::StatusOr<std::unique_ptr<PreprocessEncoder>> Create(const PreprocessOptions& options,
                                                                   int64_t d, FloatMatrix mean,
                                                                   FloatMatrix scale);

  // Fits mean (column means) and scale (column standard deviations, 1 where
  // a column is constant) on the n × d rows of `data`, in double.
  // Errors: no rows.
  static absl::StatusOr<std::unique_ptr<PreprocessEncoder>> Fit(const PreprocessOptions& options,
                                                                const FloatMatrix& data);

  void Encode(int64_t n, const float* x, float* out) const override;
  std::string kind() const override { return "preprocess"; }
  size_t parameter_bytes() const override { return mean_.bytes() + scale_.bytes(); }

  const PreprocessOptions& options() const { return options_; }
  const FloatMatrix& mean() const { return mean_; }
  const FloatMatrix& scale() const { return scale_; }

 private:
  PreprocessEncoder(const PreprocessOptions& options, int64_t d, FloatMatrix mean,
                    FloatMatrix scale);

  PreprocessOptions options_;
  FloatMatrix mean_;
  FloatMatrix scale_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_PREPROCESS_ENCODER_H_
