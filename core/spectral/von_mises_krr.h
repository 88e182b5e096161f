// von_mises_krr.h: the non-invariant baseline of Soleymani et al. §6, kernel
// ridge regression with the von Mises product kernel on the torus,
//   K(x, z) = exp(η Σ_i cos(π (x_i − z_i))),
// fitted as α = (K + λ I)⁻¹ y (λ on the kernel-matrix scale, like
// scikit-learn's KernelRidge(alpha=λ)) for several λ sharing one kernel
// matrix. Σ_i cos(π(x_i − z_i)) = cos(πx)·cos(πz) + sin(πx)·sin(πz), so the
// kernel is one matrix product of n × 2d trig features. The solve is a
// Cholesky factorisation (LAPACK dpotrf/dpotrs from OpenBLAS), O(n³) per λ.
#ifndef INVARIANT_CORE_SPECTRAL_VON_MISES_KRR_H_
#define INVARIANT_CORE_SPECTRAL_VON_MISES_KRR_H_

#include <cstdint>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"

namespace invariant {

class VonMisesKrr {
 public:
  // Fits one model per lambda. Errors: dim < 1, n < 1, eta <= 0, an empty or
  // negative lambda list, a kernel system that is not positive definite.
  static absl::StatusOr<VonMisesKrr> Fit(int32_t dim, int64_t n, const float* x, const float* y,
                                         double eta, const std::vector<double>& lambdas);

  int32_t dim() const { return dim_; }
  int64_t num_models() const { return static_cast<int64_t>(lambdas_.size()); }
  const std::vector<double>& lambdas() const { return lambdas_; }

  // out is n × num_models row-major: column m is the model of lambdas()[m].
  // Thread-safe.
  void Predict(int64_t n, const float* x, float* out) const;

 private:
  VonMisesKrr() = default;

  int32_t dim_ = 0;
  double eta_ = 0.0;
  std::vector<double> lambdas_;
  Eigen::MatrixXd train_trig_;  // n × 2d: cos(πx), sin(πx)
  Eigen::MatrixXd alphas_;      // n × num_models
};

}  // namespace invariant

#endif  // INVARIANT_CORE_SPECTRAL_VON_MISES_KRR_H_
