// random_fourier_encoder.h: local group-invariant random Fourier features.
//
// docs/math.md §3 (Raj et al. 2017, "LGIKA-RF", Eq. 7). The projector's bank holds
// g_k⁻¹·ω_j with ω_j ~ N(0, σ⁻² I) (SampleGaussianTemplates), j = 1..s,
// k = 1..r. For an input x with p_{j,k} = ⟨g_k⁻¹·ω_j, x⟩:
//   out[j]     = 1/(r√s) Σ_k cos p_{j,k}     (the s cosine sums, then)
//   out[s + j] = 1/(r√s) Σ_k sin p_{j,k}     (the s sine sums); d_out = 2s,
// so ⟨ψ(x), ψ(z)⟩ → k_{q,G}(x, z) = E_{g,g'} exp(−‖g·x − g'·z‖²/(2σ²)).
// (Eq. 7's e^{−ip} has imaginary part −sin p; the sign cancels in the
// real inner product, so +sin is stored.) r = 1 with the identity is the
// plain random Fourier map. cos/sin come from FastSinCos (|err| ≲ 1e-6).
// Parameters: invariant.v1.RandomFourierParams; bank = projector().rows().
#ifndef INVARIANT_CORE_ENCODERS_RANDOM_FOURIER_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_RANDOM_FOURIER_ENCODER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/encoders/encoder.h"
#include "core/encoders/projector.h"

namespace invariant {

struct RandomFourierOptions {
  // The Gaussian bandwidth the frequencies were drawn for. Encode does not
  // use it (the bank already holds ω ~ N(0, σ⁻² I)); kept for the manifest.
  double sigma = 1.0;
};

class RandomFourierEncoder final : public Encoder {
 public:
  // Errors: an empty projector, sigma not finite and > 0.
  static absl::StatusOr<std::unique_ptr<RandomFourierEncoder>> Create(
      const RandomFourierOptions& options, Projector projector);

  void Encode(int64_t n, const float* x, float* out) const override;
  std::string kind() const override { return "random_fourier"; }
  size_t parameter_bytes() const override { return projector_.bank_bytes(); }

  const RandomFourierOptions& options() const { return options_; }
  const Projector& projector() const { return projector_; }

 private:
  RandomFourierEncoder(const RandomFourierOptions& options, Projector projector);

  RandomFourierOptions options_;
  Projector projector_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_RANDOM_FOURIER_ENCODER_H_
