// torus_group.h: finite groups of isometries of the torus [-1, 1)^d, given by
// generators.
//
// A generator is a sign flip of some coordinates, a permutation of the
// coordinates, or a shift of some coordinates by 2/p (wrapped). Every element
// of the group they generate is a "signed permutation plus shift":
//   (g·x)_i = sign_i · x_{source_i} + shift_i   (mod 2, into [-1, 1)).
// Permutations follow proto TorusGenerator: x ← x∘σ, i.e. (g·x)_i = x_{σ(i)}
// with `permutation[i] = σ(i)` (0-based).
//
// The spectral code never enumerates the group; enumeration here is only for
// measuring invariance (closure with a cap, or random words).
#ifndef INVARIANT_CORE_SPECTRAL_TORUS_GROUP_H_
#define INVARIANT_CORE_SPECTRAL_TORUS_GROUP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace invariant {

enum class TorusGeneratorKind { kSignFlip, kPermutation, kShift };

struct TorusGeneratorSpec {
  TorusGeneratorKind kind = TorusGeneratorKind::kSignFlip;
  std::vector<int32_t> coords;       // sign flip, shift: the coordinates acted on
  std::vector<int32_t> permutation;  // permutation: σ(i) for i = 0..d−1
  int32_t p = 0;                     // shift: by 2/p, p ≥ 1
};

// x_i ← −x_i for i in coords.
TorusGeneratorSpec SignFlipGenerator(std::vector<int32_t> coords);
// (g·x)_i = x_{images[i]}.
TorusGeneratorSpec PermutationGenerator(std::vector<int32_t> images);
// x_i ← x_i + 2/p (wrapped) for i in coords.
TorusGeneratorSpec ShiftGenerator(std::vector<int32_t> coords, int32_t p);

// d generators x_i ← −x_i, i = 0..d−1: the group {±1}^d.
std::vector<TorusGeneratorSpec> AllSignFlipGenerators(int32_t dim);
// The swap (0 1) and the cycle (0 1 … d−1): all d! permutations (d ≥ 2;
// for d = 2 the two coincide and only the swap is returned).
std::vector<TorusGeneratorSpec> SymmetricGroupGenerators(int32_t dim);

// OK when the generator is well-formed for dimension dim; otherwise
// InvalidArgument naming "generators[index]" and the bad field.
absl::Status ValidateTorusGenerator(const TorusGeneratorSpec& g, int32_t dim, int index);

// One group element as a signed permutation plus a shift in [0, 2).
struct TorusIsometry {
  std::vector<int32_t> source;
  std::vector<int8_t> sign;
  std::vector<double> shift;

  int32_t dim() const { return static_cast<int32_t>(source.size()); }
};

TorusIsometry IdentityIsometry(int32_t dim);
// The element of a validated generator.
TorusIsometry IsometryFromGenerator(const TorusGeneratorSpec& g, int32_t dim);
// (a∘b)·x = a·(b·x).
TorusIsometry ComposeIsometries(const TorusIsometry& a, const TorusIsometry& b);
// out[r] = g·x[r] for n row-major points; coordinates wrapped into [-1, 1).
void ApplyIsometry(const TorusIsometry& g, int64_t n, const float* x, float* out);

// Elements of the generated group used to measure invariance.
struct TorusGroupElements {
  std::vector<TorusIsometry> elements;
  bool exhaustive = false;  // every element of the group is listed
  std::string method;       // "closure(N)" or "random_words(N, length L)"
};

// The whole group by closure under the generators when it has at most
// max_elements elements; otherwise num_random products of word_length
// generators drawn uniformly (seeded), plus the identity and the generators.
// Errors: a generator that fails validation, max_elements < 1.
absl::StatusOr<TorusGroupElements> EnumerateOrSampleTorusGroup(
    const std::vector<TorusGeneratorSpec>& generators, int32_t dim, int64_t max_elements,
    int64_t num_random, int32_t word_length, uint64_t seed);

}  // namespace invariant

#endif  // INVARIANT_CORE_SPECTRAL_TORUS_GROUP_H_
