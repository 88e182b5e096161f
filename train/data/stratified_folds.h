// stratified_folds.h: k-fold assignments stratified by the target, so that
// every fold sees the whole range of targets (regression) or every class in
// its proportion (classification), as QM7's published folds are.
//
// Both return the fold (0 … k−1) of each row; fold sizes differ by at most
// one and the folds cover every row. Seeded (invariant::Rng), so the same
// arguments give the same folds on every platform.
//
//   * By target: the rows are sorted by target, largest first (equal targets
//     in a seeded random order), then dealt in rounds of k: each round gives
//     one row to every fold, the order of the folds within a round seeded.
//     So the k largest targets land in k different folds, and so on down.
//   * By class: the rows of each class, in a seeded random order, are dealt
//     round-robin through one seeded cyclic order of the folds, class after
//     class without restarting, so a class of n_c rows gives ⌊n_c/k⌋ or
//     ⌈n_c/k⌉ rows to every fold.
//
// Errors: INVALID_ARGUMENT for k < 2 or k > n, a target that is not finite
// (names the row), or a label outside [0, num_classes). Thread-safe (pure).
#ifndef INVARIANT_TRAIN_DATA_STRATIFIED_FOLDS_H_
#define INVARIANT_TRAIN_DATA_STRATIFIED_FOLDS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace invariant::train {

absl::StatusOr<std::vector<int32_t>> FoldsStratifiedByTarget(absl::Span<const double> targets,
                                                             int k, uint64_t seed);

absl::StatusOr<std::vector<int32_t>> FoldsStratifiedByClass(absl::Span<const int32_t> labels,
                                                            int32_t num_classes, int k,
                                                            uint64_t seed);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_STRATIFIED_FOLDS_H_
