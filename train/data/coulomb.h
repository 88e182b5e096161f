// coulomb.h: synthetic molecules as Coulomb matrices (a stand-in for QM7,
// Rupp et al. 2012; Raj et al. 2017 §5) and the sorted-Coulomb baseline.
//
// A molecule has n atoms (n uniform in [min_atoms, max_atoms]) with charges
// Z drawn uniformly from {1, 6, 7, 8, 16} (H, C, N, O, S) and positions R
// uniform in a cube of side box_scale·n^(1/3), redrawn until every pair is at
// least min_distance apart. Its Coulomb matrix is
//   C_ii = 0.5 Z_i^2.4,   C_ij = Z_i Z_j / |R_i − R_j|  (i ≠ j),
// zero-padded to max_atoms × max_atoms and flattened row-major
// (input_shape {max_atoms, max_atoms}); the atoms come in a random order and
// occupy the first n rows and columns. The regression target is the
// permutation-invariant Coulomb energy E = Σ_{i<j} Z_i Z_j / |R_i − R_j|
// (= Σ_{i<j} C_ij) plus N(0, noise_stddev²) noise. Molecule i is drawn from
// Rng::ForStream(seed, i).
//
// The sorted-Coulomb representation permutes rows and columns together so
// that row norms are non-increasing (ties keep the original order); it is
// invariant to the atom order whenever row norms are distinct.
#ifndef INVARIANT_TRAIN_DATA_COULOMB_H_
#define INVARIANT_TRAIN_DATA_COULOMB_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/random.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

struct Molecule {
  std::vector<std::array<double, 3>> positions;
  std::vector<int32_t> charges;
  int64_t size() const { return static_cast<int64_t>(charges.size()); }
};

struct CoulombOptions {
  int64_t num_molecules = 1000;
  int32_t max_atoms = 23;  // n_max: the padded matrix is n_max × n_max
  int32_t min_atoms = 4;
  double min_distance = 1.0;  // minimum distance between two atoms
  double box_scale = 1.5;     // cube side = box_scale · n^(1/3)
  double noise_stddev = 0.0;
  uint64_t seed = 1;
  bool sorted = false;  // emit sorted Coulomb matrices
};

// The charges a random atom takes.
inline constexpr std::array<int32_t, 5> kCoulombCharges = {1, 6, 7, 8, 16};

// A random molecule as described above (atoms in random order).
Molecule RandomMolecule(const CoulombOptions& options, Rng& rng);

// Writes the zero-padded max_atoms × max_atoms Coulomb matrix of `m`
// (m.size() <= max_atoms) to out.
void CoulombMatrix(const Molecule& m, int32_t max_atoms, float* out);

// Σ_{i<j} Z_i Z_j / |R_i − R_j|.
double CoulombEnergy(const Molecule& m);

// Sorts rows and columns of the n × n matrix `in` together by non-increasing
// row L2 norm (stable) into `out` (may not alias `in`).
void SortedCoulomb(int32_t n, const float* in, float* out);

// Generated molecules with one target (name "coulomb" or "coulomb/sorted").
// INVALID_ARGUMENT for 1 > min_atoms, min_atoms > max_atoms, min_distance <= 0,
// box_scale <= 0, noise_stddev < 0 or num_molecules < 0.
absl::StatusOr<std::unique_ptr<RowSource>> MakeCoulombSource(const CoulombOptions& options);
absl::StatusOr<Dataset> MakeCoulomb(const CoulombOptions& options);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_COULOMB_H_
