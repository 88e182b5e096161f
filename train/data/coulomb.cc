#include "train/data/coulomb.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace invariant::train {
namespace {

double Distance(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

}  // namespace

Molecule RandomMolecule(const CoulombOptions& options, Rng& rng) {
  const int32_t n = options.min_atoms + static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(
                                            options.max_atoms - options.min_atoms + 1)));
  Molecule m;
  m.charges.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    m.charges[i] = kCoulombCharges[rng.UniformInt(kCoulombCharges.size())];
  }
  // Sequential placement with rejection; the box grows by 10% whenever an
  // atom fails 1000 times, so placement always terminates.
  double side = options.box_scale * std::cbrt(static_cast<double>(n));
  while (static_cast<int32_t>(m.positions.size()) < n) {
    bool placed = false;
    for (int attempt = 0; attempt < 1000 && !placed; ++attempt) {
      const std::array<double, 3> p = {rng.Uniform(0.0, side), rng.Uniform(0.0, side),
                                       rng.Uniform(0.0, side)};
      placed = std::all_of(m.positions.begin(), m.positions.end(),
                           [&](const auto& q) { return Distance(p, q) >= options.min_distance; });
      if (placed) m.positions.push_back(p);
    }
    if (!placed) side *= 1.1;
  }
  return m;  // atoms were drawn independently, so their order is already random
}

void CoulombMatrix(const Molecule& m, int32_t max_atoms, float* out) {
  std::fill(out, out + static_cast<int64_t>(max_atoms) * max_atoms, 0.0f);
  const int64_t n = m.size();
  for (int64_t i = 0; i < n; ++i) {
    const double zi = m.charges[i];
    out[i * max_atoms + i] = static_cast<float>(0.5 * std::pow(zi, 2.4));
    for (int64_t j = i + 1; j < n; ++j) {
      const float c =
          static_cast<float>(zi * m.charges[j] / Distance(m.positions[i], m.positions[j]));
      out[i * max_atoms + j] = c;
      out[j * max_atoms + i] = c;
    }
  }
}

double CoulombEnergy(const Molecule& m) {
  double e = 0.0;
  for (int64_t i = 0; i < m.size(); ++i) {
    for (int64_t j = i + 1; j < m.size(); ++j) {
      e += static_cast<double>(m.charges[i]) * m.charges[j] /
           Distance(m.positions[i], m.positions[j]);
    }
  }
  return e;
}

void SortedCoulomb(int32_t n, const float* in, float* out) {
  std::vector<double> norms(n, 0.0);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j < n; ++j) norms[i] += static_cast<double>(in[i * n + j]) * in[i * n + j];
  }
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return norms[a] > norms[b]; });
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j < n; ++j) out[i * n + j] = in[order[i] * n + order[j]];
  }
}

absl::StatusOr<std::unique_ptr<RowSource>> MakeCoulombSource(const CoulombOptions& options) {
  if (options.min_atoms < 1 || options.min_atoms > options.max_atoms) {
    return absl::InvalidArgumentError(absl::StrCat("coulomb atoms: need 1 <= min_atoms (",
                                                   options.min_atoms, ") <= max_atoms (",
                                                   options.max_atoms, ")"));
  }
  if (!(options.min_distance > 0.0) || !(options.box_scale > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("coulomb min_distance and box_scale must be > 0, got ", options.min_distance,
                     " and ", options.box_scale));
  }
  if (!(options.noise_stddev >= 0.0) || options.num_molecules < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("coulomb noise_stddev and num_molecules must be >= 0, got ",
                     options.noise_stddev, " and ", options.num_molecules));
  }
  RowSchema schema;
  schema.name = options.sorted ? "coulomb/sorted" : "coulomb";
  schema.dim = static_cast<int64_t>(options.max_atoms) * options.max_atoms;
  schema.input_shape = {options.max_atoms, options.max_atoms};
  schema.num_targets = 1;
  schema.num_rows = options.num_molecules;
  const CoulombOptions o = options;
  return MakeGeneratedSource(std::move(schema), [o](int64_t index, float* x, int32_t*, float* y) {
    Rng rng = Rng::ForStream(o.seed, static_cast<uint64_t>(index));
    const Molecule m = RandomMolecule(o, rng);
    double energy = CoulombEnergy(m);
    if (o.noise_stddev > 0.0) energy += rng.Normal(0.0, o.noise_stddev);
    y[0] = static_cast<float>(energy);
    if (o.sorted) {
      std::vector<float> raw(static_cast<size_t>(o.max_atoms) * o.max_atoms);
      CoulombMatrix(m, o.max_atoms, raw.data());
      SortedCoulomb(o.max_atoms, raw.data(), x);
    } else {
      CoulombMatrix(m, o.max_atoms, x);
    }
  });
}

absl::StatusOr<Dataset> MakeCoulomb(const CoulombOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source, MakeCoulombSource(options));
  return ReadAllRows(*source);
}

}  // namespace invariant::train
