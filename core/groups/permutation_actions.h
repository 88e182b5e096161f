// permutation_actions.h: actions of the symmetric group S_k on flat vectors.
//
// Element convention (shared by every action here): params = the images
// π(0), …, π(k−1) of a permutation π of k items, stored as doubles. Item i is
// MOVED TO position π(i):
//   CoordinatePermutation:  (g·x)[π(i)] = x[i], i.e. (g·x)_j = x_{π⁻¹(j)}
//   BlockPermutation:       block i of x becomes block π(i) of g·x
//   MatrixPermutation:      (g·M)[π(i), π(j)] = M[i, j]
// With this convention Compose(a, b) = a∘b as functions, (a∘b)(i) = a(b(i)),
// and (a∘b)·x = a·(b·x) as group.h requires; Inverse(g) = π⁻¹.
//
// Every action here is exactly unitary (it only moves coordinates). Apply
// expects an element made by these functions or by a distribution over the
// same action (a permutation of degree() items); it does not re-validate.
#ifndef INVARIANT_CORE_GROUPS_PERMUTATION_ACTIONS_H_
#define INVARIANT_CORE_GROUPS_PERMUTATION_ACTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/groups/group.h"

namespace invariant {

// The element with images `images` (a permutation of 0..k−1; not checked).
GroupElement PermutationElement(const std::vector<int64_t>& images);

// True when g.params is a permutation of 0..degree−1 (integral, in range,
// each value once).
bool IsPermutation(const GroupElement& g, int64_t degree);

// A uniformly random permutation of `degree` items (Fisher–Yates, one
// rng.UniformInt per item).
GroupElement RandomPermutation(int64_t degree, Rng& rng);

// All degree! permutations in lexicographic order of their images (the
// identity first). Intended for degree ≤ 9.
std::vector<GroupElement> AllPermutations(int64_t degree);

// Shared Identity / Inverse / Compose of the permutation convention above.
class PermutationAction : public GroupAction {
 public:
  // Number of items the permutations act on (coordinates, blocks, rows).
  int64_t degree() const { return degree_; }

  GroupElement Identity() const override;
  GroupElement Inverse(const GroupElement& g) const override;
  GroupElement Compose(const GroupElement& a, const GroupElement& b) const override;
  bool exactly_unitary() const override { return true; }

 protected:
  explicit PermutationAction(int64_t degree) : degree_(degree) {}

 private:
  int64_t degree_;
};

// Permutations of the `dim` coordinates of a vector.
class CoordinatePermutation final : public PermutationAction {
 public:
  explicit CoordinatePermutation(int64_t dim) : PermutationAction(dim) {}
  int64_t dim() const override { return degree(); }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
};

// Permutations of `num_blocks` contiguous blocks of `block_size` coordinates
// (Xperm: 5 blocks of 8); the order inside a block is kept.
class BlockPermutation final : public PermutationAction {
 public:
  BlockPermutation(int64_t num_blocks, int64_t block_size)
      : PermutationAction(num_blocks), block_size_(block_size) {}
  int64_t dim() const override { return degree() * block_size_; }
  int64_t num_blocks() const { return degree(); }
  int64_t block_size() const { return block_size_; }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;

 private:
  int64_t block_size_;
};

// Simultaneous row and column permutation of an n × n matrix stored flat,
// row-major (Coulomb matrices): dim() = n².
class MatrixPermutation final : public PermutationAction {
 public:
  explicit MatrixPermutation(int64_t n) : PermutationAction(n) {}
  int64_t dim() const override { return degree() * degree(); }
  int64_t n() const { return degree(); }
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_PERMUTATION_ACTIONS_H_
