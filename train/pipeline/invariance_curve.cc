#include "train/pipeline/invariance_curve.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/groups/group_factory.h"
#include "core/spectral/spectral_proto.h"
#include "core/spectral/torus_group.h"
#include "train/pipeline/discrepancy.h"

namespace invariant::train {
namespace {

constexpr double kPi = 3.14159265358979323846;

// g·x through `action` (kept alive by the shared distribution).
VectorMap Acting(std::shared_ptr<const GroupDistribution> q, GroupElement g) {
  return [q = std::move(q), g = std::move(g)](int64_t n, const float* x, float* out) {
    q->action().Apply(g, n, x, out);
  };
}

// `count` sizes evenly from 0 to `reach`.
std::vector<double> Evenly(double reach, int count) {
  std::vector<double> s(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) s[static_cast<size_t>(i)] = reach * i / (count - 1);
  return s;
}

// The integers 0 … top, at most kDiscreteSizes of them, evenly subsampled.
std::vector<int64_t> IntegerSizes(int64_t top) {
  std::vector<int64_t> s;
  const int64_t count = std::min<int64_t>(top + 1, kDiscreteSizes);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = count > 1 ? (i * top + (count - 1) / 2) / (count - 1) : 0;
    if (s.empty() || s.back() != v) s.push_back(v);
  }
  return s;
}

// A parametrised factor (image, audio): `make(size)` is the element of that
// size along the factor; nothing when the law is unset or has no reach.
void AddFactor(std::vector<GeneratorPath>& paths, const std::shared_ptr<const GroupDistribution>& q,
               const char* name, const char* unit, double reach, bool log_factor,
               double display_scale, const std::function<GroupElement(double)>& make) {
  if (!(reach > 0) || !std::isfinite(reach)) return;
  GeneratorPath p{name, unit, {}, {}};
  for (double s : Evenly(reach, kContinuousSizes)) {
    const double value = log_factor ? std::exp(s) : s;
    p.sizes.push_back(value * display_scale);
    p.elements.push_back({Acting(q, make(value))});
  }
  paths.push_back(std::move(p));
}

// The product of k random transpositions of `degree` items.
GroupElement RandomWord(int64_t degree, int64_t k, Rng& rng) {
  std::vector<int64_t> images(static_cast<size_t>(degree));
  std::iota(images.begin(), images.end(), 0);
  for (int64_t t = 0; t < k; ++t) {
    const uint64_t a = rng.UniformInt(static_cast<uint64_t>(degree));
    uint64_t b = rng.UniformInt(static_cast<uint64_t>(degree - 1));
    if (b >= a) ++b;
    std::swap(images[a], images[b]);
  }
  GroupElement g;
  for (int64_t v : images) g.params.push_back(static_cast<double>(v));
  return g;
}

// k of `dim` signs flipped, chosen at random.
GroupElement RandomFlips(int64_t dim, int64_t k, Rng& rng) {
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), 0);
  GroupElement g;
  g.params.assign(static_cast<size_t>(dim), 1.0);
  for (int64_t i = 0; i < k; ++i) {  // a partial Fisher–Yates draw
    const uint64_t j = i + rng.UniformInt(static_cast<uint64_t>(dim - i));
    std::swap(order[static_cast<size_t>(i)], order[j]);
    g.params[static_cast<size_t>(order[static_cast<size_t>(i)])] = -1.0;
  }
  return g;
}

// Sizes 0 … top of a random word (`draw`), kDrawsPerSize draws per size > 0.
GeneratorPath RandomWords(const std::shared_ptr<const GroupDistribution>& q, const char* name,
                          int64_t top, uint64_t seed,
                          const std::function<GroupElement(int64_t, Rng&)>& draw) {
  GeneratorPath p{name, "count", {}, {}};
  Rng rng = Rng::ForStream(seed, 0xc0 + static_cast<uint64_t>(top));
  for (int64_t k : IntegerSizes(top)) {
    p.sizes.push_back(static_cast<double>(k));
    std::vector<VectorMap> at;
    for (int d = 0; d < (k == 0 ? 1 : kDrawsPerSize); ++d) at.push_back(Acting(q, draw(k, rng)));
    p.elements.push_back(std::move(at));
  }
  return p;
}

}  // namespace

double LawReach(const v1::ScalarDistribution& law, bool log_factor) {
  auto log_abs = [](double a) { return a > 0 ? std::fabs(std::log(a)) : 0.0; };
  switch (law.kind_case()) {
    case v1::ScalarDistribution::kFixed:
      return log_factor ? log_abs(law.fixed().value()) : std::fabs(law.fixed().value());
    case v1::ScalarDistribution::kUniform: {
      const auto& u = law.uniform();
      return log_factor ? std::max(log_abs(u.low()), log_abs(u.high()))
                        : std::max(std::fabs(u.low()), std::fabs(u.high()));
    }
    case v1::ScalarDistribution::kNormal: {
      const auto& g = law.normal();
      return log_factor ? log_abs(g.mean() + 2 * g.stddev()) : std::fabs(g.mean()) + 2 * g.stddev();
    }
    case v1::ScalarDistribution::kVonMises: {
      const auto& v = law.von_mises();
      return v.kappa() > 0 ? std::min(kPi, std::fabs(v.mean()) + 2 / std::sqrt(v.kappa())) : kPi;
    }
    case v1::ScalarDistribution::kLogNormal:
      return std::fabs(law.log_normal().log_mean()) + 2 * law.log_normal().log_stddev();
    default:
      return 0;
  }
}

absl::StatusOr<std::vector<GeneratorPath>> GroupPaths(const v1::GroupSpec& group, uint64_t seed) {
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> made, MakeGroupDistribution(group));
  const std::shared_ptr<const GroupDistribution> q(std::move(made));
  std::vector<GeneratorPath> paths;
  const int64_t degree = static_cast<int64_t>(q->action().Identity().params.size());
  if (group.has_image()) {
    const v1::ImageTransformGroup& m = group.image();
    auto sim = [](double t, double x, double y, double a) { return GroupElement{{t, x, y, a}}; };
    AddFactor(paths, q, "rotation", "degrees", LawReach(m.rotation(), false), false, 180 / kPi,
              [&](double v) { return sim(v, 0, 0, 1); });
    AddFactor(paths, q, "translation_x", "pixels", LawReach(m.translation_x(), false), false, 1,
              [&](double v) { return sim(0, v, 0, 1); });
    AddFactor(paths, q, "translation_y", "pixels", LawReach(m.translation_y(), false), false, 1,
              [&](double v) { return sim(0, 0, v, 1); });
    AddFactor(paths, q, "scale", "factor", LawReach(m.scale(), true), true, 1,
              [&](double v) { return sim(0, 0, 0, v); });
  } else if (group.has_audio()) {
    const v1::AudioTransformGroup& a = group.audio();
    auto el = [](double c, double t, double s) { return GroupElement{{c, t, s}}; };
    AddFactor(paths, q, "pitch", "cents", LawReach(a.pitch_cents(), false), false, 1,
              [&](double v) { return el(v, 1, 0); });
    AddFactor(paths, q, "tempo", "factor", LawReach(a.tempo(), true), true, 1,
              [&](double v) { return el(0, v, 0); });
    AddFactor(paths, q, "time_shift", "frames", LawReach(a.time_shift(), false), false, 1,
              [&](double v) { return el(0, 1, v); });
  } else if (group.has_cyclic_shift()) {
    const auto& c = group.cyclic_shift();
    const int64_t top = c.max_shift() > 0 ? c.max_shift() : c.length() / 2;
    GeneratorPath p{"shift", "samples", {}, {}};
    for (int64_t s : IntegerSizes(top)) {
      p.sizes.push_back(static_cast<double>(s));
      p.elements.push_back({Acting(q, GroupElement{{static_cast<double>(s)}})});
    }
    paths.push_back(std::move(p));
  } else if (group.has_sign_flip()) {
    paths.push_back(RandomWords(q, "flips", degree, seed, [degree](int64_t k, Rng& rng) {
      return RandomFlips(degree, k, rng);
    }));
  } else if (group.has_permutation() || group.has_block_permutation() ||
             group.has_matrix_permutation()) {
    if (degree >= 2) {
      const int64_t top = std::min<int64_t>(degree - 1, kMaxWordLength);
      paths.push_back(RandomWords(q, "transpositions", top, seed, [degree](int64_t k, Rng& rng) {
        return RandomWord(degree, k, rng);
      }));
    }
  } else if (group.has_dihedral()) {
    auto add = [&](const char* name, int64_t top, bool turns) {
      GeneratorPath p{name, "count", {}, {}};
      for (int64_t k = 0; k <= top; ++k) {
        p.sizes.push_back(static_cast<double>(k));
        const GroupElement g{{turns ? static_cast<double>(k) : 0.0, turns ? 0.0 : double(k)}};
        p.elements.push_back({Acting(q, g)});
      }
      paths.push_back(std::move(p));
    };
    if (group.dihedral().turns()) add("quarter_turns", 3, true);
    if (group.dihedral().flips()) add("mirror", 1, false);
  }
  return paths;
}

absl::StatusOr<std::vector<GeneratorPath>> SpectralPaths(const v1::SpectralParams& params) {
  std::vector<GeneratorPath> paths;
  for (int i = 0; i < params.generators_size(); ++i) {
    ASSIGN_OR_RETURN(TorusGeneratorSpec spec, TorusGeneratorFromProto(params.generators(i), i));
    const TorusIsometry one = IsometryFromGenerator(spec, params.dim());
    const TorusIsometry identity = IdentityIsometry(params.dim());
    const char* kind = spec.kind == TorusGeneratorKind::kSignFlip ? "sign flip"
                       : spec.kind == TorusGeneratorKind::kShift  ? "shift"
                                                                  : "permutation";
    GeneratorPath p{absl::StrCat("generator ", i + 1, ": ", kind), "power", {}, {}};
    TorusIsometry power = identity;
    for (int k = 0; k <= kMaxWordLength; ++k) {
      bool is_identity = k > 0 && power.source == identity.source && power.sign == identity.sign;
      for (double s : power.shift) is_identity &= std::fabs(std::remainder(s, 2.0)) < 1e-9;
      if (is_identity) break;
      p.sizes.push_back(k);
      p.elements.push_back(
          {[power](int64_t n, const float* x, float* out) { ApplyIsometry(power, n, x, out); }});
      power = ComposeIsometries(one, power);
    }
    paths.push_back(std::move(p));
  }
  return paths;
}

std::vector<v1::InvarianceCurvePoint> CurveAlong(const std::vector<GeneratorPath>& paths,
                                                 const VectorMap& f, int64_t num_outputs, int64_t n,
                                                 const float* x, int64_t dim, const float* base,
                                                 double spread) {
  std::vector<v1::InvarianceCurvePoint> curve;
  std::vector<float> gx(static_cast<size_t>(n * dim));
  std::vector<float> moved(static_cast<size_t>(n * num_outputs));
  for (const GeneratorPath& p : paths) {
    for (size_t i = 0; i < p.sizes.size(); ++i) {
      Discrepancy d;
      for (const VectorMap& g : p.elements[i]) {
        g(n, x, gx.data());
        f(n, gx.data(), moved.data());
        d.Add(moved.data(), base, n * num_outputs);
      }
      v1::InvarianceCurvePoint& point = curve.emplace_back();
      point.set_generator(p.generator);
      point.set_unit(p.unit);
      point.set_magnitude(p.sizes[i]);
      point.set_mean_discrepancy(d.mean());
      point.set_relative_mean_discrepancy(spread > 0 ? d.mean() / spread : 0);
    }
  }
  return curve;
}

}  // namespace invariant::train
