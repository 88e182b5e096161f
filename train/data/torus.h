// torus.h: the sign-flip-invariant regression on the torus of Soleymani,
// Tahmasebi, Jegelka, Jaillet (ICML 2025), §6.
//
// x ~ U[-1, 1)^d, y = f*(x) + ε with f*(x) = (1/d) Σ_{i=1..d} i·x_i² and
// ε ~ N(0, noise_stddev²). f* is invariant to flipping the sign of any
// coordinate. Row i is drawn from Rng::ForStream(seed, i) (d uniforms, then
// one normal when noise_stddev > 0), so any subset of rows is reproducible.
#ifndef INVARIANT_TRAIN_DATA_TORUS_H_
#define INVARIANT_TRAIN_DATA_TORUS_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

struct TorusOptions {
  int32_t dim = 10;
  int64_t num_points = 1000;
  double noise_stddev = 0.0;
  uint64_t seed = 1;
};

// f*(x) = (1/d) Σ_{i=1..d} i·x_i² (1-based i).
double TorusTarget(int32_t dim, const float* x);

// Rows with one regression target (name "torus"). INVALID_ARGUMENT for
// dim < 1, num_points < 0 or noise_stddev < 0.
absl::StatusOr<std::unique_ptr<RowSource>> MakeTorusSource(const TorusOptions& options);
absl::StatusOr<Dataset> MakeTorus(const TorusOptions& options);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_TORUS_H_
