// permutation_distributions.h: distributions over the permutation actions of
// permutation_actions.h.
//
//   UniformPermutations  the uniform (Haar) distribution on all k! permutations;
//                        symmetric; enumerable when k ≤ kMaxEnumerableDegree.
//   NoisySort            the input-dependent noisy sort of Coulomb matrices
//                        (Montavon et al. 2012, used by Raj et al. 2017 §5):
//                        rows ordered by ‖row_i‖ + N(0, σ²), descending.
//                        depends_on_input(): its draws must be applied to each
//                        input at encode time (Placement::kInput).
#ifndef INVARIANT_CORE_GROUPS_PERMUTATION_DISTRIBUTIONS_H_
#define INVARIANT_CORE_GROUPS_PERMUTATION_DISTRIBUTIONS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/groups/group.h"
#include "core/groups/permutation_actions.h"

namespace invariant {

// Largest degree whose k! permutations Enumerate() lists (8! = 40,320).
inline constexpr int64_t kMaxEnumerableDegree = 8;

class UniformPermutations final : public GroupDistribution {
 public:
  // `action` must not be null.
  explicit UniformPermutations(std::unique_ptr<PermutationAction> action)
      : action_(std::move(action)) {}

  const GroupAction& action() const override { return *action_; }
  std::string name() const override;
  // r independent uniform permutations (RandomPermutation).
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  bool symmetric() const override { return true; }
  bool enumerable() const override { return action_->degree() <= kMaxEnumerableDegree; }
  // All k! permutations (AllPermutations), or {} when not enumerable().
  std::vector<GroupElement> Enumerate() const override;

 private:
  std::unique_ptr<PermutationAction> action_;
};

class NoisySort final : public GroupDistribution {
 public:
  // `action` must not be null; sigma ≥ 0 (σ = 0: the deterministic sort, so
  // every draw for one input is the same permutation).
  NoisySort(std::unique_ptr<MatrixPermutation> action, double sigma)
      : action_(std::move(action)), sigma_(sigma) {}

  const GroupAction& action() const override { return *action_; }
  std::string name() const override;
  double sigma() const { return sigma_; }

  // Without an input there is nothing to sort: r uniform permutations (the
  // σ → ∞ limit of the noisy sort). Encoders should call SampleFor instead.
  std::vector<GroupElement> Sample(int64_t r, Rng& rng) const override;
  // An input-dependent q has no meaningful q(g) = q(g⁻¹): always false.
  bool symmetric() const override { return false; }
  bool depends_on_input() const override { return true; }

  // r draws for the n × n matrix x (row-major, n² floats). For each draw,
  // key_i = ‖row_i‖₂ + σ·N(0, 1) (one rng.Normal() per row when σ > 0, none
  // when σ = 0) and rows are ordered by descending key, ties by ascending
  // row index; a row whose norm is NaN ranks last. The returned element g satisfies: row k of g·x
  // is the row of x with the k-th largest key (so g's images are the ranks of the rows).
  std::vector<GroupElement> SampleFor(const float* x, int64_t r, Rng& rng) const override;

 private:
  std::unique_ptr<MatrixPermutation> action_;
  double sigma_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_PERMUTATION_DISTRIBUTIONS_H_
