// xperm_experiment.h: the pieces of the Xperm reproduction (Mroueh, Voinea,
// Poggio 2015, Fig. 1/4/5 and Appendix D.1), shared by invariant-repro-xperm.
//
// Every representation is a Featurizer from the 40-dim one-hot rows to
// features; the experiment featurizes all 32,768 rows once and then fits
// regularised least squares (core/rls) on per-class training draws:
//   raw        the one-hot rows (40), linear RLS with bias
//   bow        the 8 symbol counts (XpermBagOfWords), linear RLS with bias
//   cdf        CDF(n, m): CdfEncoder over a bank of m standard-normal 40-dim
//              templates moved by r block permutations (all 120, or r distinct
//              ones drawn at random), rows first L2-normalised (‖x‖ = √5 → 1)
//   haar       RLS with the exact Haar-integration kernel of a Gaussian base
//              kernel (docs/math.md §5), no bias. Xperm has only C(12, 5) = 792
//              orbits (multisets of 5 of 8 symbols) and the kernel depends only
//              on the pair of orbits, so K = P K_orb Pᵀ with P the N × 792
//              orbit indicator. Writing K_orb = F Fᵀ (eigendecomposition)
//              turns kernel RLS into ridge without bias on the ≤ 792-dim rows
//              F[orbit(x)], which is the same minimiser (kernel_rls.h) at a
//              fraction of the cost; CheckHaar verifies both identities.
// λ is chosen as GURLS's hold-out selection does: a fraction of the training
// draw (at least one row per class) is held out, λ is picked from
// GurlsLambdaGrid on it (ties → the smallest λ, as GURLS's max does), then
// the model is refitted on the whole draw.
#ifndef INVARIANT_BENCH_REPRO_XPERM_EXPERIMENT_H_
#define INVARIANT_BENCH_REPRO_XPERM_EXPERIMENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/groups/group.h"
#include "core/rls/linear_model.h"

namespace invariant {

// rows (n × 40 one-hot) → features (n × D).
using Featurizer = std::function<FloatMatrix(const FloatMatrix& rows)>;

struct XpermData {
  FloatMatrix x;                              // 32,768 × 40 one-hot rows
  std::vector<int32_t> labels;                // 0 negative, 1 positive
  std::vector<int32_t> orbit;                 // orbit index of each row, in [0, num_orbits)
  std::vector<int64_t> orbit_representative;  // one row index per orbit
  std::unique_ptr<GroupDistribution> group;   // uniform over the 120 block permutations
  std::vector<GroupElement> elements;         // all 120, in enumeration order
};

absl::StatusOr<XpermData> LoadXperm(uint64_t target_seed);

// The orbit index of a one-hot row (sorted symbol multiset, ranked).
int32_t OrbitOfRow(const float* row);

Featurizer RawFeaturizer();
Featurizer BagOfWordsFeaturizer();

struct CdfSpec {
  int64_t bins = 25;             // n: 2n + 1 thresholds
  int64_t templates = 25;        // m
  int64_t group_elements = 120;  // r distinct permutations (120: all)
  double range = 2.0;            // s, for unit-norm rows and N(0, I) templates
  uint64_t seed = 1;             // templates and the choice of elements
};
absl::StatusOr<Featurizer> CdfFeaturizer(const XpermData& data, const CdfSpec& spec);

// The orbit kernel K_orb[a, b] = (1/|G|) Σ_g k0(x_a, g·x_b) for the Gaussian
// k0 with bandwidth sigma (equal to the (1/|G|²) double sum for a group).
DoubleMatrix OrbitHaarKernel(const XpermData& data, double sigma);
// x ↦ F[orbit(x)] with K_orb = F Fᵀ.
absl::StatusOr<Featurizer> HaarFeaturizer(const XpermData& data, double sigma);

struct FitResult {
  LinearModel model;
  double lambda = 0;
  double holdout_accuracy = 0;
  double test_accuracy = 0;  // over every row not in the training draw
};

// Fits on rows `train` of `features` (all 32,768 rows), λ by hold-out.
// `holdout_fraction` of each class's rows (≥ 1) are held out for λ.
absl::StatusOr<FitResult> FitWithHoldout(const FloatMatrix& features,
                                         const std::vector<int32_t>& labels,
                                         const std::vector<int64_t>& train, double holdout_fraction,
                                         bool fit_bias);

// max over `points` test rows, every group element and both classes of
// |f(x) − f(g·x)| for the model on `featurizer`.
double InvarianceDiscrepancy(const XpermData& data, const Featurizer& featurizer,
                             const LinearModel& model, const std::vector<int64_t>& points);

struct HaarCheck {
  double kernel_max_abs_diff = 0;  // OrbitHaarKernel vs HaarKernelMatrix
  double score_max_abs_diff = 0;   // feature ridge vs KernelRidgeSolver
  double score_scale = 0;          // max |score|
};
// Both identities on a small draw (`per_class` rows of each class).
absl::StatusOr<HaarCheck> CheckHaar(const XpermData& data, double sigma, int64_t per_class,
                                    uint64_t seed);

}  // namespace invariant

#endif  // INVARIANT_BENCH_REPRO_XPERM_EXPERIMENT_H_
