// nystrom_encoder.h: local group-invariant Nyström features (Gaussian kernel).
//
// docs/math.md §4 (Raj et al. 2017, "LGIKA-Nys", Eq. 8). Landmarks z_1..z_s; the
// projector's bank holds g_k⁻¹·z_j (row j·r + k). For an input x:
//   a_j(x) = (1/r) Σ_k exp(−(‖x‖² − 2⟨x, g_k⁻¹z_j⟩ + ‖g_k⁻¹z_j‖²) / (2σ²))
//          = (1/r) Σ_k k0(g_k·x, z_j)      (unitary action)
//   ψ(x)   = L · a(x) ∈ R^rank,  with K_ZZ⁺ = LᵀL.
// Choice of K_ZZ (Raj Eq. 8): the BASE Gaussian kernel on the untransformed
// landmarks, K_ZZ[i][j] = k0(z_i, z_j) — Nyström projects each k0(·, g·x)
// onto span{k0(·, z_j)} and the orbit average is taken after the projection,
// so ⟨ψ(x), ψ(x')⟩ = E_{g,g'} K_{g·x,Z} K_ZZ⁺ K_{Z,g'·x'} ≈ k_{q,G}(x, x'),
// exact when the span contains every k0(·, g·x) (landmarks = the orbits).
// K_ZZ⁺ comes from a double-precision symmetric eigendecomposition
// K_ZZ = U Λ Uᵀ, keeping eigenvalues λ > eigen_cutoff · λ_max (default 1e-6:
// below it float features would amplify rounding by λ^{-1/2}); L = Λ_+^{-1/2}
// U_+ᵀ, rows in descending eigenvalue order.
// Input placement: ‖g_k·x‖² is used in place of ‖x‖² (no unitarity needed).
// Parameters: invariant.v1.NystromParams; tensors projector().rows() and
// projection() (rank × s).
#ifndef INVARIANT_CORE_ENCODERS_NYSTROM_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_NYSTROM_ENCODER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/encoders/encoder.h"
#include "core/encoders/packed_dot.h"
#include "core/encoders/projector.h"

namespace invariant {

struct NystromOptions {
  double sigma = 1.0;          // Gaussian bandwidth, > 0
  double eigen_cutoff = 1e-6;  // relative eigenvalue cutoff, in [0, 1)
};

// L (rank × s) with LᵀL = K_ZZ⁺ for the Gaussian kernel on the s × d
// landmarks, dropping eigenvalues ≤ eigen_cutoff · λ_max. Errors: no
// landmarks, sigma not > 0, cutoff outside [0, 1).
absl::StatusOr<FloatMatrix> ComputeNystromProjection(const FloatMatrix& landmarks,
                                                     const NystromOptions& options);

class NystromEncoder final : public Encoder {
 public:
  static constexpr int64_t kMeansFloats = 1 << 19;  // rows × s orbit means per chunk

  // `projection` is L (rank × s, s = projector.num_templates()).
  // Errors: empty projector, bad sigma, projection.cols() != s, rank 0.
  static absl::StatusOr<std::unique_ptr<NystromEncoder>> Create(const NystromOptions& options,
                                                                Projector projector,
                                                                FloatMatrix projection);

  void Encode(int64_t n, const float* x, float* out) const override;
  std::string kind() const override { return "nystrom"; }
  size_t parameter_bytes() const override { return projector_.bank_bytes() + projection_.bytes(); }

  const NystromOptions& options() const { return options_; }
  const Projector& projector() const { return projector_; }
  const FloatMatrix& projection() const { return projection_; }  // L, rank × s
  int64_t rank() const { return projection_.rows(); }

 private:
  NystromEncoder(const NystromOptions& options, Projector projector, FloatMatrix projection);

  NystromOptions options_;
  Projector projector_;
  FloatMatrix projection_;
  PackedBank packed_projection_;      // L packed for PackedDot
  std::vector<float> bank_sq_norms_;  // ‖row‖² of every projector row
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_NYSTROM_ENCODER_H_
