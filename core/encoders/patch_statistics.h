// patch_statistics.h: what a patch encoder learns from training images
// before its bank is drawn (bundle.proto PatchParams; docs/math.md §10).
//
// Free functions, deterministic for a given Rng state, single-threaded
// unless stated. Every patch is k × k × C, channels last (patch_encoder.h).
#ifndef INVARIANT_CORE_ENCODERS_PATCH_STATISTICS_H_
#define INVARIANT_CORE_ENCODERS_PATCH_STATISTICS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/base/random.h"
#include "core/base/tensor.h"
#include "core/encoders/patch_encoder.h"

namespace invariant {

// `count` patches (count × patch_dim()) taken from the rows of `images`
// (n × image_dim()), each from a uniformly drawn image and position, and
// normalised with NormalizePatch when `normalize`. Errors: no images,
// images.cols() != image_dim(), count < 1, an invalid geometry.
absl::StatusOr<FloatMatrix> SamplePatches(const PatchGeometry& g, const FloatMatrix& images,
                                          int64_t count, bool normalize, double contrast_epsilon,
                                          Rng& rng);

// ZCA whitening of patches: mean μ (1 × d) and W = V (Λ + εI)^{-1/2} Vᵀ
// (d × d, symmetric) from the eigendecomposition V Λ Vᵀ of the patches'
// covariance (accumulated in double). W(p − μ) has covariance ≈ I on the
// directions with eigenvalues ≫ ε. Errors: fewer than 2 patches, ε ≤ 0.
struct PatchWhitening {
  FloatMatrix mean;    // 1 × d
  FloatMatrix matrix;  // d × d
};
absl::StatusOr<PatchWhitening> ComputeZcaWhitening(const FloatMatrix& patches, double epsilon);

// Spherical k-means (Coates & Ng 2011): k centres drawn from the rows of
// `points` (unit-normalised), then `iterations` rounds of: assign every
// point to the centre of largest |⟨c, x⟩|, c ← Σ (⟨c, x⟩) x over its points,
// renormalised; an empty centre is re-seeded from a random point. Returns
// k × d unit rows. Errors: k < 1, fewer than k points, iterations < 0.
// Runs the assignment on the default thread pool; the result does not
// depend on the number of threads.
absl::StatusOr<FloatMatrix> SphericalKMeans(const FloatMatrix& points, int64_t k, int iterations,
                                            Rng& rng);

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_PATCH_STATISTICS_H_
