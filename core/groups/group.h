// group.h: group actions on flat float vectors and distributions over groups.
//
// A GroupAction applies an element g to a batch of row-major vectors of
// length dim(). Elements are opaque parameter vectors whose meaning belongs
// to the action (a permutation's indices, an angle and a shift, signs, ...);
// only the action that made an element may interpret it.
//
// A GroupDistribution q draws elements of one action. Most distributions do
// not depend on the input, so the sampled elements move onto the templates
// (docs/math.md §1: ⟨t, g·x⟩ = ⟨g⁻¹·t, x⟩ when the action is unitary). Those that
// do depend on it (the noisy sort of Coulomb matrices) report
// depends_on_input() and are applied to each input at encode time instead.
#ifndef INVARIANT_CORE_GROUPS_GROUP_H_
#define INVARIANT_CORE_GROUPS_GROUP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/random.h"

namespace invariant {

struct GroupElement {
  std::vector<double> params;
  bool operator==(const GroupElement& o) const { return params == o.params; }
};

class GroupAction {
 public:
  virtual ~GroupAction() = default;

  // Length of the flat vectors the group acts on.
  virtual int64_t dim() const = 0;
  // Human-readable description, e.g. "block_permutation(5x8)".
  virtual std::string name() const = 0;

  // out[i] = g·x[i] for n row-major vectors of length dim(). out must not
  // overlap x. Thread-safe.
  virtual void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const = 0;
  virtual GroupElement Identity() const = 0;
  virtual GroupElement Inverse(const GroupElement& g) const = 0;
  // The element a∘b, acting as (a∘b)·x = a·(b·x).
  virtual GroupElement Compose(const GroupElement& a, const GroupElement& b) const = 0;
  // True when ⟨g·x, g·z⟩ = ⟨x, z⟩ holds exactly (permutations, sign flips,
  // shifts); false when it holds only up to interpolation (image grids).
  virtual bool exactly_unitary() const = 0;
};

enum class Placement {
  kTemplates,  // sampled g_k are moved onto the templates when the bank is built
  kInput,      // g_k are applied to every input at encode time
};

class GroupDistribution {
 public:
  virtual ~GroupDistribution() = default;

  virtual const GroupAction& action() const = 0;
  // Human-readable description including its parameters.
  virtual std::string name() const = 0;

  // Draws r elements (for an enumerable distribution: r uniform draws).
  virtual std::vector<GroupElement> Sample(int64_t r, Rng& rng) const = 0;
  // q(g) = q(g⁻¹): the condition under which moving g onto templates keeps
  // the kernel exact (Raj §2.2.1).
  virtual bool symmetric() const = 0;

  // A finite support that can be listed in full with equal weights.
  virtual bool enumerable() const { return false; }
  virtual std::vector<GroupElement> Enumerate() const { return {}; }

  // Distributions that depend on the input; Placement must then be kInput.
  virtual bool depends_on_input() const { return false; }
  // r draws for input x (length dim()); defaults to Sample(r, rng).
  virtual std::vector<GroupElement> SampleFor(const float* x, int64_t r, Rng& rng) const {
    return Sample(r, rng);
  }
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_GROUP_H_
