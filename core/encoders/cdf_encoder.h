// cdf_encoder.h: CDF, moment and max pooling over group-transformed templates.
//
// docs/math.md §2 (Mroueh, Voinea, Poggio 2015). With projections
// p_{j,i}(x) = ⟨g_i·t_j, x⟩ from a Projector (bank of g_i⁻¹·t_j, or the
// input placement), the features of one input are, template by template:
//  * Pooling::kCdf: φ_{j,k}(x) = (1/r) Σ_i 1[p_{j,i} ≤ s·k/n], k = −n..n,
//    stored at column j·(2n+1) + (k + n); d_out = m(2n+1).
//  * kMean / kSecondMoment / kMax: one value per template at column j;
//    d_out = m.
// Parameters keep the meanings of invariant.v1.CdfParams; the bank tensor is
// projector().rows(). Encode is const, thread-safe, batch-independent.
#ifndef INVARIANT_CORE_ENCODERS_CDF_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_CDF_ENCODER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/encoders/encoder.h"
#include "core/encoders/pooling.h"
#include "core/encoders/projector.h"

namespace invariant {

struct CdfOptions {
  Pooling pooling = Pooling::kCdf;
  int64_t num_bins = 25;  // n: kCdf only, > 0
  double range = 1.0;     // s: kCdf only, > 0 (inputs with ‖x‖ ≤ R use s = R(1 + ε))
};

class CdfEncoder final : public Encoder {
 public:
  // Errors: kCdf with num_bins ≤ 0 or range not finite and > 0; an empty
  // projector.
  static absl::StatusOr<std::unique_ptr<CdfEncoder>> Create(const CdfOptions& options,
                                                            Projector projector);

  void Encode(int64_t n, const float* x, float* out) const override;
  std::string kind() const override { return "cdf"; }
  size_t parameter_bytes() const override { return projector_.bank_bytes(); }

  const CdfOptions& options() const { return options_; }
  const Projector& projector() const { return projector_; }
  // Features per template: 2n+1 for kCdf, else 1.
  int64_t features_per_template() const { return per_template_; }

 private:
  CdfEncoder(const CdfOptions& options, Projector projector, int64_t per_template);

  CdfOptions options_;
  Projector projector_;
  int64_t per_template_;
  std::vector<float> thresholds_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_CDF_ENCODER_H_
