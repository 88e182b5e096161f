#include "train/data/torus.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"

namespace invariant::train {

double TorusTarget(int32_t dim, const float* x) {
  double sum = 0.0;
  for (int32_t i = 0; i < dim; ++i) sum += static_cast<double>(i + 1) * x[i] * x[i];
  return sum / dim;
}

absl::StatusOr<std::unique_ptr<RowSource>> MakeTorusSource(const TorusOptions& options) {
  if (options.dim < 1) {
    return absl::InvalidArgumentError(absl::StrCat("torus dim must be >= 1, got ", options.dim));
  }
  if (options.num_points < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("torus num_points must be >= 0, got ", options.num_points));
  }
  if (!(options.noise_stddev >= 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("torus noise_stddev must be >= 0, got ", options.noise_stddev));
  }
  RowSchema schema;
  schema.name = "torus";
  schema.dim = options.dim;
  schema.input_shape = {options.dim};
  schema.num_targets = 1;
  schema.num_rows = options.num_points;
  const TorusOptions o = options;
  return MakeGeneratedSource(std::move(schema), [o](int64_t index, float* x, int32_t*, float* y) {
    Rng rng = Rng::ForStream(o.seed, static_cast<uint64_t>(index));
    // Rounding to float could give 1.0f; keep the interval half-open.
    const float below_one = std::nextafter(1.0f, 0.0f);
    for (int32_t i = 0; i < o.dim; ++i) {
      x[i] = std::min(static_cast<float>(rng.Uniform(-1.0, 1.0)), below_one);
    }
    double target = TorusTarget(o.dim, x);
    if (o.noise_stddev > 0.0) target += rng.Normal(0.0, o.noise_stddev);
    y[0] = static_cast<float>(target);
  });
}

absl::StatusOr<Dataset> MakeTorus(const TorusOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source, MakeTorusSource(options));
  return ReadAllRows(*source);
}

}  // namespace invariant::train
