#include "train/data/splits.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace invariant::train {

void ShuffleInPlace(std::vector<int64_t>& v, Rng& rng) {
  for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(i + 1)));
    std::swap(v[i], v[j]);
  }
}

std::vector<int64_t> ShuffledIndices(int64_t n, uint64_t seed) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  Rng rng(seed);
  ShuffleInPlace(v, rng);
  return v;
}

absl::StatusOr<SplitIndices> SplitByCounts(int64_t n, int64_t train, int64_t validation,
                                           int64_t test, uint64_t seed) {
  int64_t counts[3] = {train, validation, test};
  const char* names[3] = {"train", "validation", "test"};
  int rest = -1;
  int64_t used = 0;
  for (int k = 0; k < 3; ++k) {
    if (counts[k] == kRest) {
      if (rest >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("split: both ", names[rest], " and ", names[k], " ask for the rest"));
      }
      rest = k;
    } else if (counts[k] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("split: ", names[k], " count must be >= 0 or kRest, got ", counts[k]));
    } else {
      used += counts[k];
    }
  }
  if (used > n) {
    return absl::InvalidArgumentError(absl::StrCat("split: train ", train, " + validation ",
                                                   validation, " + test ", test,
                                                   " needs more than the ", n, " rows"));
  }
  if (rest >= 0) counts[rest] = n - used;
  const std::vector<int64_t> order = ShuffledIndices(n, seed);
  SplitIndices out;
  std::vector<int64_t>* parts[3] = {&out.train, &out.validation, &out.test};
  int64_t start = 0;
  for (int k = 0; k < 3; ++k) {
    parts[k]->assign(order.begin() + start, order.begin() + start + counts[k]);
    start += counts[k];
  }
  return out;
}

absl::StatusOr<SplitIndices> SplitByFractions(int64_t n, double train_fraction,
                                              double validation_fraction, uint64_t seed) {
  if (!(train_fraction >= 0.0 && validation_fraction >= 0.0 &&
        train_fraction + validation_fraction <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("split: fractions must be >= 0 with sum <= 1, got train ", train_fraction,
                     " and validation ", validation_fraction));
  }
  const int64_t train = static_cast<int64_t>(std::llround(train_fraction * n));
  const int64_t validation = std::min<int64_t>(n - train, std::llround(validation_fraction * n));
  return SplitByCounts(n, train, validation, kRest, seed);
}

absl::StatusOr<std::vector<Fold>> KFoldSplits(int64_t n, int k, uint64_t seed) {
  if (k < 2 || k > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("k-fold: need 2 <= k <= n = ", n, ", got k = ", k));
  }
  const std::vector<int64_t> order = ShuffledIndices(n, seed);
  std::vector<Fold> folds(k);
  for (int f = 0; f < k; ++f) {
    const int64_t begin = n * f / k;
    const int64_t end = n * (f + 1) / k;
    folds[f].test.assign(order.begin() + begin, order.begin() + end);
    folds[f].train.reserve(n - (end - begin));
    folds[f].train.insert(folds[f].train.end(), order.begin(), order.begin() + begin);
    folds[f].train.insert(folds[f].train.end(), order.begin() + end, order.end());
  }
  return folds;
}

namespace {

// Row indices of each class, each list shuffled.
absl::StatusOr<std::vector<std::vector<int64_t>>> ShuffledByClass(absl::Span<const int32_t> labels,
                                                                  int32_t num_classes,
                                                                  int64_t needed, uint64_t seed) {
  std::vector<std::vector<int64_t>> by_class(num_classes);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= num_classes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "per-class split: label ", labels[i], " of row ", i, " outside [0, ", num_classes, ")"));
    }
    by_class[labels[i]].push_back(static_cast<int64_t>(i));
  }
  Rng rng(seed);
  for (int32_t c = 0; c < num_classes; ++c) {
    if (static_cast<int64_t>(by_class[c].size()) < needed) {
      return absl::InvalidArgumentError(absl::StrCat("per-class split: class ", c, " has ",
                                                     by_class[c].size(), " rows, need ", needed));
    }
    ShuffleInPlace(by_class[c], rng);
  }
  return by_class;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> SamplePerClass(absl::Span<const int32_t> labels,
                                                    int32_t num_classes, int64_t per_class,
                                                    uint64_t seed) {
  ASSIGN_OR_RETURN(SplitIndices split, SplitPerClass(labels, num_classes, per_class, 0, seed));
  return std::move(split.train);
}

absl::StatusOr<SplitIndices> SplitPerClass(absl::Span<const int32_t> labels, int32_t num_classes,
                                           int64_t per_class_train, int64_t per_class_validation,
                                           uint64_t seed) {
  if (per_class_train < 0 || per_class_validation < 0) {
    return absl::InvalidArgumentError(absl::StrCat("per-class split: counts must be >= 0, got ",
                                                   per_class_train, " and ", per_class_validation));
  }
  ASSIGN_OR_RETURN(
      const std::vector<std::vector<int64_t>> by_class,
      ShuffledByClass(labels, num_classes, per_class_train + per_class_validation, seed));
  SplitIndices out;
  for (const std::vector<int64_t>& rows : by_class) {
    out.train.insert(out.train.end(), rows.begin(), rows.begin() + per_class_train);
    out.validation.insert(out.validation.end(), rows.begin() + per_class_train,
                          rows.begin() + per_class_train + per_class_validation);
  }
  // Interleave the classes: shuffle each part (stream distinct from the above).
  Rng rng = Rng::ForStream(seed, 1);
  ShuffleInPlace(out.train, rng);
  ShuffleInPlace(out.validation, rng);
  std::vector<int64_t> used = out.train;
  used.insert(used.end(), out.validation.begin(), out.validation.end());
  out.test = Complement(static_cast<int64_t>(labels.size()), used);
  return out;
}

std::vector<int64_t> Complement(int64_t n, absl::Span<const int64_t> used) {
  std::vector<bool> taken(n, false);
  for (int64_t i : used) {
    if (i >= 0 && i < n) taken[i] = true;
  }
  std::vector<int64_t> rest;
  for (int64_t i = 0; i < n; ++i) {
    if (!taken[i]) rest.push_back(i);
  }
  return rest;
}

}  // namespace invariant::train
