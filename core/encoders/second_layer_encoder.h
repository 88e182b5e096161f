// second_layer_encoder.h: a Gaussian random Fourier map stacked on an encoder.
//
// Raj et al. 2017 Remark 3 (docs/math.md §4): a nonlinear "hyperkernel" between
// orbit embeddings. With ψ the inner encoder and W (s2 × d_feat) with rows
// w ~ N(0, σ2⁻² I) (SampleGaussianTemplates(s2, d_feat, σ2, rng)):
//   ψ2(x) = (1/√s2) [cos(W ψ(x)); sin(W ψ(x))]    (d_out = 2·s2: cos then sin)
// so ⟨ψ2(x), ψ2(z)⟩ → exp(−‖ψ(x) − ψ(z)‖² / (2σ2²)).
// Parameters: invariant.v1.SecondLayerParams; tensor frequencies() is
// "second_layer/frequencies", packed once at construction. Encode runs the
// inner encoder on row blocks, then splits the frequencies over the thread
// pool (cos/sin right after each tile). Const, thread-safe, batch-independent.
#ifndef INVARIANT_CORE_ENCODERS_SECOND_LAYER_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_SECOND_LAYER_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/encoders/encoder.h"
#include "core/encoders/packed_dot.h"

namespace invariant {

struct SecondLayerOptions {
  double sigma = 1.0;  // σ2 the frequencies were drawn for (manifest only)
  uint64_t seed = 0;   // seed the frequencies were drawn with (manifest only)
};

class SecondLayerEncoder final : public Encoder {
 public:
  // Errors: null inner, frequencies.cols() != inner->d_out(), no
  // frequencies, sigma not finite and > 0.
  static absl::StatusOr<std::unique_ptr<SecondLayerEncoder>> Create(
      const SecondLayerOptions& options, std::shared_ptr<const Encoder> inner,
      FloatMatrix frequencies);

  void Encode(int64_t n, const float* x, float* out) const override;
  std::string kind() const override { return "second_layer"; }
  size_t parameter_bytes() const override {
    return inner_->parameter_bytes() + frequencies_.bytes();
  }

  const SecondLayerOptions& options() const { return options_; }
  const Encoder& inner() const { return *inner_; }
  const FloatMatrix& frequencies() const { return frequencies_; }  // s2 × d_feat

 private:
  SecondLayerEncoder(const SecondLayerOptions& options, std::shared_ptr<const Encoder> inner,
                     FloatMatrix frequencies);

  SecondLayerOptions options_;
  std::shared_ptr<const Encoder> inner_;
  FloatMatrix frequencies_;
  PackedBank packed_frequencies_;  // frequencies_ packed for PackedDot
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_SECOND_LAYER_ENCODER_H_
