// xperm.h: the Xperm permutation-invariance data set (Mroueh, Voinea, Poggio
// 2015, Appendix D.1).
//
// All 8^5 = 32,768 sequences of length 5 over an alphabet of 8 symbols.
// Sequence i (0 ≤ i < 32768) has symbol (i / 8^(4-p)) mod 8 at position p,
// so position 0 is the most significant base-8 digit. Each symbol is one-hot
// in 8 dims and the 5 blocks are concatenated: a 40-dim 0/1 row (input_shape
// {5, 8}) with exactly five ones. Two distinct target symbols c1, c2 are drawn
// from the seed; a sequence is positive (label 1, "positive") iff it contains
// both, wherever they occur, else negative (label 0, "negative"). The label is
// invariant to permuting the 5 blocks.
//
// The bag-of-words baseline maps a one-hot row to the 8 symbol counts (which
// sum to 5): XpermBagOfWords.
#ifndef INVARIANT_TRAIN_DATA_XPERM_H_
#define INVARIANT_TRAIN_DATA_XPERM_H_

#include <array>
#include <cstdint>
#include <memory>

#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

inline constexpr int kXpermLength = 5;
inline constexpr int kXpermAlphabet = 8;
inline constexpr int64_t kXpermSize = 32768;  // 8^5
inline constexpr int kXpermDim = kXpermLength * kXpermAlphabet;

// The two distinct target symbols (each in [0, 8)) drawn from `seed`.
std::array<int, 2> XpermTargetSymbols(uint64_t seed);

// The symbols of sequence `index` in [0, 32768).
std::array<int, kXpermLength> XpermSequence(int64_t index);

// 1 when `sequence` contains both targets, else 0.
int32_t XpermLabel(const std::array<int, kXpermLength>& sequence,
                   const std::array<int, 2>& targets);

struct XpermOptions {
  uint64_t seed = 1;          // draws the target symbols
  bool bag_of_words = false;  // 8-count rows (input_shape {8}) instead of one-hot
};

// All 32,768 rows in index order, as a generated source (name "xperm" or
// "xperm/bag_of_words").
std::unique_ptr<RowSource> MakeXpermSource(const XpermOptions& options);
Dataset MakeXperm(const XpermOptions& options);

// out[i, c] = Σ_p x[i, 8p + c]: the symbol counts of n one-hot 40-dim rows
// (out is n × 8).
void XpermBagOfWords(int64_t n, const float* one_hot, float* out);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_XPERM_H_
