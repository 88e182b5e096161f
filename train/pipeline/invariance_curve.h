// invariance_curve.h: the invariance curve of a certificate: how far f moves
// as g grows along one generator of the checked group at a time.
//
// For each generator below, sizes s from the identity (s = 0) up to the
// reach of the group's law, and at each size the certificate's figures on
// its points X (certificate.h):
//   mean(s) = mean_{x ∈ X, g of size s, outputs} |f(x) − f(g·x)|
//   rel(s)  = mean(s) / spread     (spread = mean_pairwise_difference)
// Generators and their sizes, by group kind (other factors at the identity):
//   image:  rotation (degrees), translation_x, translation_y (pixels), scale
//           (factor), each whose law is set: kContinuousSizes sizes from 0
//           to the law's reach (LawReach);
//   audio:  pitch (cents), tempo (factor), time_shift (frames), likewise;
//   cyclic_shift: shift (samples), 0 … max_shift (0: every shift up to
//           length / 2), at most kDiscreteSizes sizes;
//   sign_flip: flips (count), k seeded random coordinates flipped, 0 … dim;
//   permutation, block_permutation, matrix_permutation: transpositions
//           (count), the product of k seeded random transpositions,
//           0 … min(degree − 1, kMaxWordLength);
//   dihedral: quarter_turns (count) 0 … 3 with turns, mirror 0 … 1 with flips;
//   spectral generators: "generator i: <sign flip|shift|permutation>"
//           (power), g_i^k for k = 0 … until g_i^k is the identity or
//           k = kMaxWordLength;
//   identity: none (the curve is empty).
// A size that names several elements (random transpositions, flips) is
// averaged over kDrawsPerSize seeded draws. Deterministic for a seed.
//
// Errors: a group spec the factory refuses (INVALID_ARGUMENT). Thread-safety:
// reentrant; f is called from the calling thread only.
#ifndef INVARIANT_TRAIN_PIPELINE_INVARIANCE_CURVE_H_
#define INVARIANT_TRAIN_PIPELINE_INVARIANCE_CURVE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant::train {

inline constexpr int kContinuousSizes = 9;
inline constexpr int kDiscreteSizes = 13;
inline constexpr int kMaxWordLength = 8;
inline constexpr int kDrawsPerSize = 8;

// out = g·x (or f(x)) for n row-major vectors.
using VectorMap = std::function<void(int64_t n, const float* x, float* out)>;

// One generator's path: sizes ascending from 0 and the elements at each.
struct GeneratorPath {
  std::string generator;
  std::string unit;
  std::vector<double> sizes;
  std::vector<std::vector<VectorMap>> elements;  // one list per size
};

// The reach of a scalar law: uniform max(|low|, |high|); fixed |value|;
// normal |mean| + 2σ; von Mises min(π, |mean| + 2/√κ); log-normal
// |log_mean| + 2σ. With `log_factor` the law is over a factor a > 0 and the
// reach is in log a (uniform and fixed: max |log a|; normal: log of
// mean + 2σ). 0 for an unset law.
double LawReach(const v1::ScalarDistribution& law, bool log_factor);

// The paths of `group` (header); `seed` draws the random words.
absl::StatusOr<std::vector<GeneratorPath>> GroupPaths(const v1::GroupSpec& group, uint64_t seed);

// The paths of a spectral encoder's torus generators.
absl::StatusOr<std::vector<GeneratorPath>> SpectralPaths(const v1::SpectralParams& params);

// The curve of f (num_outputs values per row) on the n rows of x along
// `paths`; `base` holds f(x) (n × num_outputs) and `spread` the certificate's
// mean_pairwise_difference (rel is 0 when spread is 0).
std::vector<v1::InvarianceCurvePoint> CurveAlong(const std::vector<GeneratorPath>& paths,
                                                 const VectorMap& f, int64_t num_outputs, int64_t n,
                                                 const float* x, int64_t dim, const float* base,
                                                 double spread);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_INVARIANCE_CURVE_H_
