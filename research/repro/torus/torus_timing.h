// torus_timing.h: the fit-time tables of the torus reproduction. The claim
// under test (Soleymani et al. 2025): an exactly invariant Spec-Avg fit costs
// time polynomial in the number of generators and the basis size D, not in
// |G| (2^d for sign flips, d! for permutations).
#ifndef INVARIANT_BENCH_SPECTRAL_TORUS_TIMING_H_
#define INVARIANT_BENCH_SPECTRAL_TORUS_TIMING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/spectral/torus_group.h"

namespace invariant {

struct TimingRow {
  std::string group;  // e.g. "sign flips {±1}^d"
  int32_t d = 0;
  int64_t generators = 0;
  double group_order = 0;  // |G| (as a double: 12! and beyond)
  int64_t num_basis = 0;   // eigenfunctions enumerated (whole eigenspaces)
  int64_t num_invariant = 0;
  int64_t nnz = 0;         // non-zeros of U (cost of one feature evaluation)
  double enumerate_s = 0;  // basis enumeration (independent of the group)
  double subspace_s = 0;   // generator matrices + invariant subspaces
  double fit_s = 0;        // Spec-Avg coefficients on n points (features + mean)
  double total_s() const { return enumerate_s + subspace_s + fit_s; }
};

struct TimingOptions {
  int32_t level = 4;  // eigenvalue level Σk² of the basis
  int64_t n = 2000;   // training points of the Spec-Avg fit
  int32_t reps = 5;   // each time is the fastest of this many runs
};

// One row: enumerate the basis at options.level, compute the invariant
// subspaces for `generators`, fit Spec-Avg on n uniform points.
TimingRow TimeSpectralFit(const std::string& group, int32_t d,
                          const std::vector<TorusGeneratorSpec>& generators, double group_order,
                          const TimingOptions& options);

// Table 1: for each d, the full sign-flip group (d generators, |G| = 2^d) and
// the full permutation group (swap + cycle, |G| = d!).
std::vector<TimingRow> TimeGroupsByDimension(const std::vector<int32_t>& dims,
                                             const TimingOptions& options);

// Table 2, fixed d and basis: k = 1..d sign-flip generators (|G| = 2^k), and
// S_d from 2 generators (swap, cycle) vs d − 1 adjacent transpositions (the
// same group, more generators).
std::vector<TimingRow> TimeByGeneratorCount(int32_t d, const TimingOptions& options);

}  // namespace invariant

#endif  // INVARIANT_BENCH_SPECTRAL_TORUS_TIMING_H_
