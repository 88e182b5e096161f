// spec_avg.h: estimators on the exactly invariant spectral features.
//
// Spec-Avg (Soleymani et al. 2025, Algorithm 1): empirical coefficients
// f̃ = (1/n) Σ_i y_i φ(x_i) for every eigenfunction up to the budget D, then
// the per-eigenspace projection f̂_λ = U_λU_λᵀ f̃_λ onto the invariant
// subspace. Since U_λᵀf̃_λ = (1/n) Σ_i y_i U_λᵀφ_λ(x_i), the fit is the mean of
// y_i·features(x_i) over the training set (FitSpecAvg); the literal
// full-basis computation is SpecAvgAlgorithm1 (used to check the two agree).
// The result is a linear model on the features, so predictions are exactly
// invariant up to float rounding.
//
// Also: ridge regression (RLS) on the same features, and the default budget
// D = n^{1/(1+α)}. Algorithm 1 takes the features' second moment (1/n)ΨᵀΨ to
// be its expectation I; FitInvariantRidge solves with the measured one
// (least squares for lambda → 0), exactly invariant all the same. Its
// variance on noiseless labels does not carry Algorithm 1's ≈ #features·E[y²]/n,
// so it is the trainer's default for spectral features
// (learner.spec_avg_estimator SPEC_AVG_LEAST_SQUARES; research/results/torus.md).
#ifndef INVARIANT_CORE_SPECTRAL_SPEC_AVG_H_
#define INVARIANT_CORE_SPECTRAL_SPEC_AVG_H_

#include <cstdint>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/torus_basis.h"

namespace invariant {

// floor(n^{1/(1+alpha)}), at least 1. alpha = 2s/dim M for a Sobolev order s.
int64_t DefaultSpecAvgBudget(int64_t n, double alpha);

struct SpecAvgOptions {
  // Estimate the constant coefficient as mean(y) and the others from y − ȳ
  // (a variance reduction; false is Algorithm 1 exactly).
  bool center_targets = false;
};

// Coefficients c over the encoder's features: prediction = c · features(x).
// Errors: n < 1.
absl::StatusOr<Eigen::VectorXd> FitSpecAvg(const SpectralEncoder& encoder, int64_t n,
                                           const float* x, const float* y,
                                           const SpecAvgOptions& options = {});

// Ridge on the features: argmin_c (1/n)‖y − Ψc‖² + lambda‖c‖², i.e.
// ((1/n)ΨᵀΨ + lambda·I) c = (1/n)Ψᵀy, solved in double (Ψ is n × d_out).
// Errors: n < 1, lambda < 0, a singular system.
absl::StatusOr<Eigen::VectorXd> FitInvariantRidge(const SpectralEncoder& encoder, int64_t n,
                                                  const float* x, const float* y, double lambda);

// out[r] = c · features(x_r) for n points.
void PredictSpectral(const SpectralEncoder& encoder, const Eigen::VectorXd& coefficients, int64_t n,
                     const float* x, float* out);

// Algorithm 1 literally: f̃ over every function of `basis` (n × num_basis
// evaluations), projected per eigenspace. Returns f̂ in basis order.
// Errors: n < 1.
absl::StatusOr<Eigen::VectorXd> SpecAvgAlgorithm1(const TorusBasis& basis,
                                                  const InvariantSubspaces& subspaces, int64_t n,
                                                  const float* x, const float* y);

}  // namespace invariant

#endif  // INVARIANT_CORE_SPECTRAL_SPEC_AVG_H_
