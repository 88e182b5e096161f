#include "train/data/stratified_folds.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "train/data/splits.h"

namespace invariant::train {
namespace {

absl::Status CheckK(int64_t n, int k) {
  if (k < 2 || k > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("stratified k-fold: need 2 <= k <= n = ", n, ", got k = ", k));
  }
  return absl::OkStatus();
}

// A seeded permutation of 0 … k−1.
std::vector<int64_t> FoldOrder(int k, Rng& rng) {
  std::vector<int64_t> order(static_cast<size_t>(k));
  std::iota(order.begin(), order.end(), 0);
  ShuffleInPlace(order, rng);
  return order;
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> FoldsStratifiedByTarget(absl::Span<const double> targets,
                                                             int k, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(targets.size());
  if (absl::Status s = CheckK(n, k); !s.ok()) return s;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(targets[static_cast<size_t>(i)])) {
      return absl::InvalidArgumentError(absl::StrCat("stratified k-fold: the target of row ", i,
                                                     " is ", targets[static_cast<size_t>(i)]));
    }
  }
  // A seeded shuffle first, then a stable sort: ties keep the shuffled order.
  std::vector<int64_t> order = ShuffledIndices(n, seed);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return targets[static_cast<size_t>(a)] > targets[static_cast<size_t>(b)];
  });
  Rng rng = Rng::ForStream(seed, 1);
  std::vector<int32_t> fold(static_cast<size_t>(n));
  std::vector<int64_t> deal;
  for (int64_t i = 0; i < n; ++i) {
    if (i % k == 0) deal = FoldOrder(k, rng);
    fold[static_cast<size_t>(order[static_cast<size_t>(i)])] =
        static_cast<int32_t>(deal[static_cast<size_t>(i % k)]);
  }
  return fold;
}

absl::StatusOr<std::vector<int32_t>> FoldsStratifiedByClass(absl::Span<const int32_t> labels,
                                                            int32_t num_classes, int k,
                                                            uint64_t seed) {
  const int64_t n = static_cast<int64_t>(labels.size());
  if (absl::Status s = CheckK(n, k); !s.ok()) return s;
  std::vector<std::vector<int64_t>> by_class(static_cast<size_t>(std::max(0, num_classes)));
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = labels[static_cast<size_t>(i)];
    if (c < 0 || c >= num_classes) {
      return absl::InvalidArgumentError(absl::StrCat("stratified k-fold: label ", c, " of row ", i,
                                                     " outside [0, ", num_classes, ")"));
    }
    by_class[static_cast<size_t>(c)].push_back(i);
  }
  Rng rng(seed);
  const std::vector<int64_t> cycle = FoldOrder(k, rng);
  std::vector<int32_t> fold(static_cast<size_t>(n));
  int64_t dealt = 0;
  for (std::vector<int64_t>& rows : by_class) {
    ShuffleInPlace(rows, rng);
    for (int64_t i : rows) {
      fold[static_cast<size_t>(i)] = static_cast<int32_t>(cycle[static_cast<size_t>(dealt++ % k)]);
    }
  }
  return fold;
}

}  // namespace invariant::train
