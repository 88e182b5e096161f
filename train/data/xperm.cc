#include "train/data/xperm.h"

#include <algorithm>

#include "core/base/random.h"

namespace invariant::train {

std::array<int, 2> XpermTargetSymbols(uint64_t seed) {
  Rng rng(seed);
  const int c1 = static_cast<int>(rng.UniformInt(kXpermAlphabet));
  int c2 = static_cast<int>(rng.UniformInt(kXpermAlphabet - 1));
  if (c2 >= c1) ++c2;  // uniform over the 7 symbols other than c1
  return {c1, c2};
}

std::array<int, kXpermLength> XpermSequence(int64_t index) {
  std::array<int, kXpermLength> seq;
  for (int p = kXpermLength - 1; p >= 0; --p) {
    seq[p] = static_cast<int>(index % kXpermAlphabet);
    index /= kXpermAlphabet;
  }
  return seq;
}

int32_t XpermLabel(const std::array<int, kXpermLength>& sequence,
                   const std::array<int, 2>& targets) {
  const bool has0 = std::find(sequence.begin(), sequence.end(), targets[0]) != sequence.end();
  const bool has1 = std::find(sequence.begin(), sequence.end(), targets[1]) != sequence.end();
  return has0 && has1 ? 1 : 0;
}

void XpermBagOfWords(int64_t n, const float* one_hot, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float* row = one_hot + i * kXpermDim;
    float* counts = out + i * kXpermAlphabet;
    std::fill(counts, counts + kXpermAlphabet, 0.0f);
    for (int p = 0; p < kXpermLength; ++p) {
      for (int c = 0; c < kXpermAlphabet; ++c) counts[c] += row[p * kXpermAlphabet + c];
    }
  }
}

std::unique_ptr<RowSource> MakeXpermSource(const XpermOptions& options) {
  RowSchema schema;
  schema.name = options.bag_of_words ? "xperm/bag_of_words" : "xperm";
  schema.dim = options.bag_of_words ? kXpermAlphabet : kXpermDim;
  schema.input_shape = options.bag_of_words ? std::vector<int64_t>{kXpermAlphabet}
                                            : std::vector<int64_t>{kXpermLength, kXpermAlphabet};
  schema.has_labels = true;
  schema.class_names = {"negative", "positive"};
  schema.num_rows = kXpermSize;
  const std::array<int, 2> targets = XpermTargetSymbols(options.seed);
  const bool bag = options.bag_of_words;
  return MakeGeneratedSource(std::move(schema),
                             [targets, bag](int64_t index, float* x, int32_t* label, float*) {
                               const std::array<int, kXpermLength> seq = XpermSequence(index);
                               if (bag) {
                                 std::fill(x, x + kXpermAlphabet, 0.0f);
                                 for (int p = 0; p < kXpermLength; ++p) x[seq[p]] += 1.0f;
                               } else {
                                 std::fill(x, x + kXpermDim, 0.0f);
                                 for (int p = 0; p < kXpermLength; ++p)
                                   x[p * kXpermAlphabet + seq[p]] = 1.0f;
                               }
                               *label = XpermLabel(seq, targets);
                             });
}

Dataset MakeXperm(const XpermOptions& options) {
  std::unique_ptr<RowSource> source = MakeXpermSource(options);
  return *ReadAllRows(*source);  // a generated source of known size cannot fail
}

}  // namespace invariant::train
