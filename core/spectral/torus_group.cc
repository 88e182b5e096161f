#include "core/spectral/torus_group.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"

namespace invariant {
namespace {

// Shift in [0, 2).
double WrapShift(double b) {
  double w = std::fmod(b, 2.0);
  if (w < 0) w += 2.0;
  if (w >= 2.0) w -= 2.0;
  return w;
}

// A key identifying an element; shifts are multiples of 2/p, so rounding to
// 1e-9 separates distinct ones.
std::vector<int64_t> Key(const TorusIsometry& g) {
  std::vector<int64_t> key;
  key.reserve(3 * g.source.size());
  for (size_t i = 0; i < g.source.size(); ++i) {
    key.push_back(g.source[i]);
    key.push_back(g.sign[i]);
    int64_t q = std::llround(g.shift[i] * 1e9);
    if (q >= 2000000000) q -= 2000000000;
    key.push_back(q);
  }
  return key;
}

}  // namespace

TorusGeneratorSpec SignFlipGenerator(std::vector<int32_t> coords) {
  TorusGeneratorSpec g;
  g.kind = TorusGeneratorKind::kSignFlip;
  g.coords = std::move(coords);
  return g;
}

TorusGeneratorSpec PermutationGenerator(std::vector<int32_t> images) {
  TorusGeneratorSpec g;
  g.kind = TorusGeneratorKind::kPermutation;
  g.permutation = std::move(images);
  return g;
}

TorusGeneratorSpec ShiftGenerator(std::vector<int32_t> coords, int32_t p) {
  TorusGeneratorSpec g;
  g.kind = TorusGeneratorKind::kShift;
  g.coords = std::move(coords);
  g.p = p;
  return g;
}

std::vector<TorusGeneratorSpec> AllSignFlipGenerators(int32_t dim) {
  std::vector<TorusGeneratorSpec> gens;
  for (int32_t i = 0; i < dim; ++i) gens.push_back(SignFlipGenerator({i}));
  return gens;
}

std::vector<TorusGeneratorSpec> SymmetricGroupGenerators(int32_t dim) {
  std::vector<TorusGeneratorSpec> gens;
  if (dim < 2) return gens;
  std::vector<int32_t> swap(dim);
  std::iota(swap.begin(), swap.end(), 0);
  std::swap(swap[0], swap[1]);
  gens.push_back(PermutationGenerator(swap));
  if (dim > 2) {
    std::vector<int32_t> cycle(dim);
    for (int32_t i = 0; i < dim; ++i) cycle[i] = (i + 1) % dim;
    gens.push_back(PermutationGenerator(cycle));
  }
  return gens;
}

absl::Status ValidateTorusGenerator(const TorusGeneratorSpec& g, int32_t dim, int index) {
  const std::string where = absl::StrCat("generators[", index, "]");
  if (g.kind == TorusGeneratorKind::kPermutation) {
    if (static_cast<int32_t>(g.permutation.size()) != dim) {
      return absl::InvalidArgumentError(absl::StrCat(where, ".permutation: expected ", dim,
                                                     " images, got ", g.permutation.size()));
    }
    std::vector<bool> seen(dim, false);
    for (int32_t v : g.permutation) {
      if (v < 0 || v >= dim || seen[v]) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".permutation: expected a permutation of 0..", dim - 1,
                         ", got image ", v, (v >= 0 && v < dim) ? " twice" : " out of range"));
      }
      seen[v] = true;
    }
    return absl::OkStatus();
  }
  if (g.coords.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".coords: expected at least one coordinate, got none"));
  }
  std::vector<bool> seen(dim, false);
  for (int32_t c : g.coords) {
    if (c < 0 || c >= dim || seen[c]) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".coords: expected distinct values in [0, ", dim, "), got ", c));
    }
    seen[c] = true;
  }
  if (g.kind == TorusGeneratorKind::kShift && g.p < 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".p: expected >= 1, got ", g.p));
  }
  return absl::OkStatus();
}

TorusIsometry IdentityIsometry(int32_t dim) {
  TorusIsometry g;
  g.source.resize(dim);
  std::iota(g.source.begin(), g.source.end(), 0);
  g.sign.assign(dim, 1);
  g.shift.assign(dim, 0.0);
  return g;
}

TorusIsometry IsometryFromGenerator(const TorusGeneratorSpec& spec, int32_t dim) {
  TorusIsometry g = IdentityIsometry(dim);
  switch (spec.kind) {
    case TorusGeneratorKind::kSignFlip:
      for (int32_t c : spec.coords) g.sign[c] = -1;
      break;
    case TorusGeneratorKind::kPermutation:
      g.source = spec.permutation;
      break;
    case TorusGeneratorKind::kShift:
      for (int32_t c : spec.coords) g.shift[c] = WrapShift(2.0 / spec.p);
      break;
  }
  return g;
}

TorusIsometry ComposeIsometries(const TorusIsometry& a, const TorusIsometry& b) {
  // (b·x)_j = s^b_j x_{σb(j)} + t^b_j;  (a·y)_i = s^a_i y_{σa(i)} + t^a_i.
  const int32_t dim = a.dim();
  TorusIsometry c;
  c.source.resize(dim);
  c.sign.resize(dim);
  c.shift.resize(dim);
  for (int32_t i = 0; i < dim; ++i) {
    const int32_t j = a.source[i];
    c.source[i] = b.source[j];
    c.sign[i] = static_cast<int8_t>(a.sign[i] * b.sign[j]);
    c.shift[i] = WrapShift(a.sign[i] * b.shift[j] + a.shift[i]);
  }
  return c;
}

void ApplyIsometry(const TorusIsometry& g, int64_t n, const float* x, float* out) {
  const int32_t dim = g.dim();
  for (int64_t r = 0; r < n; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    for (int32_t i = 0; i < dim; ++i) {
      const float v = g.sign[i] > 0 ? xr[g.source[i]] : -xr[g.source[i]];
      if (g.shift[i] == 0.0) {
        // −(−1) = 1 lies outside [-1, 1); 1 and −1 are the same torus point.
        o[i] = v >= 1.0f ? v - 2.0f : v;
        continue;
      }
      double w = static_cast<double>(v) + g.shift[i];
      w -= 2.0 * std::floor((w + 1.0) / 2.0);
      float f = static_cast<float>(w);
      if (f >= 1.0f) f -= 2.0f;
      o[i] = f;
    }
  }
}

absl::StatusOr<TorusGroupElements> EnumerateOrSampleTorusGroup(
    const std::vector<TorusGeneratorSpec>& generators, int32_t dim, int64_t max_elements,
    int64_t num_random, int32_t word_length, uint64_t seed) {
  if (max_elements < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("group enumeration: max_elements must be >= 1, got ", max_elements));
  }
  std::vector<TorusIsometry> gens;
  for (size_t k = 0; k < generators.size(); ++k) {
    const absl::Status st = ValidateTorusGenerator(generators[k], dim, static_cast<int>(k));
    if (!st.ok()) return st;
    gens.push_back(IsometryFromGenerator(generators[k], dim));
  }
  TorusGroupElements result;
  // Breadth-first closure: every element is a word in the generators.
  std::set<std::vector<int64_t>> seen;
  std::deque<size_t> frontier;
  result.elements.push_back(IdentityIsometry(dim));
  seen.insert(Key(result.elements.back()));
  frontier.push_back(0);
  bool complete = true;
  while (!frontier.empty() && complete) {
    const size_t at = frontier.front();
    frontier.pop_front();
    for (const TorusIsometry& g : gens) {
      TorusIsometry next = ComposeIsometries(g, result.elements[at]);
      if (!seen.insert(Key(next)).second) continue;
      if (static_cast<int64_t>(result.elements.size()) >= max_elements) {
        complete = false;
        break;
      }
      result.elements.push_back(std::move(next));
      frontier.push_back(result.elements.size() - 1);
    }
  }
  if (complete) {
    result.exhaustive = true;
    result.method = absl::StrCat("closure(", result.elements.size(), ")");
    return result;
  }
  result.elements.clear();
  result.elements.push_back(IdentityIsometry(dim));
  for (const TorusIsometry& g : gens) result.elements.push_back(g);
  Rng rng(seed);
  for (int64_t w = 0; w < num_random && !gens.empty(); ++w) {
    TorusIsometry e = IdentityIsometry(dim);
    for (int32_t l = 0; l < word_length; ++l) {
      e = ComposeIsometries(gens[rng.UniformInt(gens.size())], e);
    }
    result.elements.push_back(std::move(e));
  }
  result.exhaustive = false;
  result.method = absl::StrCat("random_words(", num_random, ", length ", word_length,
                               ") + identity + generators");
  return result;
}

}  // namespace invariant
