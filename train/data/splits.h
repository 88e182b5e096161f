// splits.h: seeded shuffles, train / validation / test splits, k-fold
// cross-validation and per-class subsampling, all as row indices.
//
// Every function draws from invariant::Rng with the given seed (Fisher–Yates
// with Rng::UniformInt), so the same arguments give the same indices on every
// platform. Splits are disjoint; SplitByCounts with kRest and the fraction
// and k-fold splits cover all rows. Apply indices with SelectRows (dataset.h).
#ifndef INVARIANT_TRAIN_DATA_SPLITS_H_
#define INVARIANT_TRAIN_DATA_SPLITS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/random.h"

namespace invariant::train {

// Shuffles `v` in place (Fisher–Yates).
void ShuffleInPlace(std::vector<int64_t>& v, Rng& rng);

// A uniformly random permutation of 0..n-1.
std::vector<int64_t> ShuffledIndices(int64_t n, uint64_t seed);

struct SplitIndices {
  std::vector<int64_t> train;
  std::vector<int64_t> validation;
  std::vector<int64_t> test;
};

// A count meaning "every row not used by the other parts".
inline constexpr int64_t kRest = -1;

// Shuffles 0..n-1 and cuts train, then validation, then test rows. At most
// one count may be kRest. INVALID_ARGUMENT when the counts exceed n (message
// gives the counts and n) or are negative (other than kRest).
absl::StatusOr<SplitIndices> SplitByCounts(int64_t n, int64_t train, int64_t validation,
                                           int64_t test, uint64_t seed);

// train = round(train_fraction·n), validation = round(validation_fraction·n),
// test = the rest. Fractions must be in [0, 1] with sum <= 1.
absl::StatusOr<SplitIndices> SplitByFractions(int64_t n, double train_fraction,
                                              double validation_fraction, uint64_t seed);

struct Fold {
  std::vector<int64_t> train;
  std::vector<int64_t> test;
};

// k folds of a shuffled 0..n-1: fold f tests on its own rows (sizes differ by
// at most one) and trains on the others. Needs 2 <= k <= n.
absl::StatusOr<std::vector<Fold>> KFoldSplits(int64_t n, int k, uint64_t seed);

// `per_class` random rows of every class c in [0, num_classes), in shuffled
// order. INVALID_ARGUMENT names a class with fewer rows (and its count), or a
// label outside [0, num_classes).
absl::StatusOr<std::vector<int64_t>> SamplePerClass(absl::Span<const int32_t> labels,
                                                    int32_t num_classes, int64_t per_class,
                                                    uint64_t seed);

// Train: per_class_train rows of every class; validation: the next
// per_class_validation rows of every class; test: every other row (sorted).
// E.g. Xperm (Mroueh D.1): 2,000 per class for training, the other 28,768 test.
absl::StatusOr<SplitIndices> SplitPerClass(absl::Span<const int32_t> labels, int32_t num_classes,
                                           int64_t per_class_train, int64_t per_class_validation,
                                           uint64_t seed);

// The indices in [0, n) not in `used`, ascending.
std::vector<int64_t> Complement(int64_t n, absl::Span<const int64_t> used);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_SPLITS_H_
