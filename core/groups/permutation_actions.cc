#include "core/groups/permutation_actions.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

inline int64_t Image(const GroupElement& g, int64_t i) {
  return static_cast<int64_t>(g.params[static_cast<size_t>(i)]);
}

}  // namespace

GroupElement PermutationElement(const std::vector<int64_t>& images) {
  GroupElement g;
  g.params.assign(images.begin(), images.end());
  return g;
}

bool IsPermutation(const GroupElement& g, int64_t degree) {
  if (degree < 0 || static_cast<int64_t>(g.params.size()) != degree) return false;
  std::vector<char> seen(static_cast<size_t>(degree), 0);
  for (double v : g.params) {
    if (!(v >= 0 && v < static_cast<double>(degree)) || v != std::floor(v)) return false;
    char& s = seen[static_cast<size_t>(v)];
    if (s) return false;
    s = 1;
  }
  return true;
}

GroupElement RandomPermutation(int64_t degree, Rng& rng) {
  std::vector<int64_t> images(static_cast<size_t>(degree));
  std::iota(images.begin(), images.end(), int64_t{0});
  for (int64_t i = degree - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(i + 1)));
    std::swap(images[static_cast<size_t>(i)], images[static_cast<size_t>(j)]);
  }
  return PermutationElement(images);
}

std::vector<GroupElement> AllPermutations(int64_t degree) {
  std::vector<int64_t> images(static_cast<size_t>(degree));
  std::iota(images.begin(), images.end(), int64_t{0});
  std::vector<GroupElement> all;
  do {
    all.push_back(PermutationElement(images));
  } while (std::next_permutation(images.begin(), images.end()));
  return all;
}

GroupElement PermutationAction::Identity() const {
  std::vector<int64_t> images(static_cast<size_t>(degree_));
  std::iota(images.begin(), images.end(), int64_t{0});
  return PermutationElement(images);
}

GroupElement PermutationAction::Inverse(const GroupElement& g) const {
  GroupElement inv;
  inv.params.resize(static_cast<size_t>(degree_));
  for (int64_t i = 0; i < degree_; ++i) {
    inv.params[static_cast<size_t>(Image(g, i))] = static_cast<double>(i);
  }
  return inv;
}

GroupElement PermutationAction::Compose(const GroupElement& a, const GroupElement& b) const {
  GroupElement ab;
  ab.params.resize(static_cast<size_t>(degree_));
  for (int64_t i = 0; i < degree_; ++i) {
    ab.params[static_cast<size_t>(i)] = a.params[static_cast<size_t>(Image(b, i))];
  }
  return ab;
}

std::string CoordinatePermutation::name() const {
  return absl::StrCat("coordinate_permutation(", dim(), ")");
}

void CoordinatePermutation::Apply(const GroupElement& g, int64_t n, const float* x,
                                  float* out) const {
  const int64_t d = dim();
  for (int64_t row = 0; row < n; ++row) {
    const float* xr = x + row * d;
    float* orow = out + row * d;
    for (int64_t i = 0; i < d; ++i) orow[Image(g, i)] = xr[i];
  }
}

std::string BlockPermutation::name() const {
  return absl::StrCat("block_permutation(", num_blocks(), "x", block_size_, ")");
}

void BlockPermutation::Apply(const GroupElement& g, int64_t n, const float* x, float* out) const {
  const int64_t d = dim();
  const size_t block_bytes = static_cast<size_t>(block_size_) * sizeof(float);
  for (int64_t row = 0; row < n; ++row) {
    const float* xr = x + row * d;
    float* orow = out + row * d;
    for (int64_t b = 0; b < num_blocks(); ++b) {
      std::memcpy(orow + Image(g, b) * block_size_, xr + b * block_size_, block_bytes);
    }
  }
}

std::string MatrixPermutation::name() const {
  return absl::StrCat("matrix_permutation(", n(), "x", n(), ")");
}

void MatrixPermutation::Apply(const GroupElement& g, int64_t n, const float* x, float* out) const {
  const int64_t k = degree();
  const int64_t d = dim();
  for (int64_t row = 0; row < n; ++row) {
    const float* m = x + row * d;
    float* o = out + row * d;
    for (int64_t i = 0; i < k; ++i) {
      float* orow = o + Image(g, i) * k;
      const float* mrow = m + i * k;
      for (int64_t j = 0; j < k; ++j) orow[Image(g, j)] = mrow[j];
    }
  }
}

}  // namespace invariant
