#include "core/groups/permutation_distributions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace invariant {

std::string UniformPermutations::name() const {
  return absl::StrCat("uniform(", action_->name(), ")");
}

std::vector<GroupElement> UniformPermutations::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) draws.push_back(RandomPermutation(action_->degree(), rng));
  return draws;
}

std::vector<GroupElement> UniformPermutations::Enumerate() const {
  if (!enumerable()) return {};
  return AllPermutations(action_->degree());
}

std::string NoisySort::name() const {
  return absl::StrCat("noisy_sort(", action_->name(), ", sigma=", sigma_, ")");
}

std::vector<GroupElement> NoisySort::Sample(int64_t r, Rng& rng) const {
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) draws.push_back(RandomPermutation(action_->n(), rng));
  return draws;
}

std::vector<GroupElement> NoisySort::SampleFor(const float* x, int64_t r, Rng& rng) const {
  const int64_t n = action_->n();
  std::vector<double> norms(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += static_cast<double>(x[i * n + j]) * x[i * n + j];
    norms[static_cast<size_t>(i)] = std::sqrt(s);
  }
  std::vector<double> keys(norms.size());
  std::vector<int64_t> order(norms.size());
  std::vector<int64_t> ranks(norms.size());
  std::vector<GroupElement> draws;
  draws.reserve(static_cast<size_t>(std::max<int64_t>(r, 0)));
  for (int64_t k = 0; k < r; ++k) {
    for (size_t i = 0; i < keys.size(); ++i) {
      keys[i] = sigma_ > 0.0 ? norms[i] + sigma_ * rng.Normal() : norms[i];
      // A NaN key would break the sort's strict weak ordering: rank it last.
      if (std::isnan(keys[i])) keys[i] = -std::numeric_limits<double>::infinity();
    }
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&keys](int64_t a, int64_t b) {
      return keys[static_cast<size_t>(a)] > keys[static_cast<size_t>(b)];
    });
    for (size_t pos = 0; pos < order.size(); ++pos) {
      ranks[static_cast<size_t>(order[pos])] = static_cast<int64_t>(pos);
    }
    draws.push_back(PermutationElement(ranks));
  }
  return draws;
}

}  // namespace invariant
