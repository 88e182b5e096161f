// synthetic_images.h: small colour images whose class a local pattern
// decides, for the patch encoder's training and serving tests.
//
// BarImages(n, seed): n images of 8 × 8 × 3 values (row-major, channels
// last), background noise uniform in [0, 0.3); class 0 ("horizontal") holds
// a bar 1 pixel high and 4 wide, class 1 ("vertical") one 4 high and 1 wide,
// at a uniform position, in a colour with every channel in [0.6, 1). Mirror
// images keep a bar's class (the left–right flip is a symmetry of the task),
// a quarter turn swaps them. Seeded: the same (n, seed) gives the same bits.
#ifndef INVARIANT_TESTS_UNIT_TRAIN_SYNTHETIC_IMAGES_H_
#define INVARIANT_TESTS_UNIT_TRAIN_SYNTHETIC_IMAGES_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"

namespace invariant::testing {

inline constexpr int64_t kBarSide = 8;
inline constexpr int64_t kBarChannels = 3;
inline constexpr int64_t kBarImageDim = kBarSide * kBarSide * kBarChannels;

struct BarImageSet {
  std::vector<float> x;    // n × kBarImageDim
  std::vector<int> label;  // 0 horizontal, 1 vertical
};

inline BarImageSet BarImages(int64_t n, uint64_t seed) {
  Rng rng(seed);
  BarImageSet s;
  s.x.resize(static_cast<size_t>(n * kBarImageDim));
  for (int64_t i = 0; i < n; ++i) {
    float* img = s.x.data() + i * kBarImageDim;
    for (int64_t k = 0; k < kBarImageDim; ++k) img[k] = static_cast<float>(0.3 * rng.Uniform());
    const int label = static_cast<int>(rng.UniformInt(2));
    const int64_t long_side = 4;
    const int64_t h = label == 0 ? 1 : long_side, w = label == 0 ? long_side : 1;
    const int64_t top =
        static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(kBarSide - h + 1)));
    const int64_t left =
        static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(kBarSide - w + 1)));
    float colour[kBarChannels];
    for (float& c : colour) c = static_cast<float>(0.6 + 0.4 * rng.Uniform());
    for (int64_t y = top; y < top + h; ++y) {
      for (int64_t x = left; x < left + w; ++x) {
        for (int64_t c = 0; c < kBarChannels; ++c)
          img[(y * kBarSide + x) * kBarChannels + c] = colour[c];
      }
    }
    s.label.push_back(label);
  }
  return s;
}

// Writes BarImages(n, seed) as a CSV file: columns p0 .. p191 (the values
// channels last) and "label" ("horizontal" or "vertical").
inline void WriteBarImagesCsv(const std::string& path, int64_t n, uint64_t seed) {
  const BarImageSet s = BarImages(n, seed);
  std::ofstream out(path);
  for (int64_t k = 0; k < kBarImageDim; ++k) out << "p" << k << ",";
  out << "label\n";
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < kBarImageDim; ++k) {
      out << absl::StrCat(s.x[static_cast<size_t>(i * kBarImageDim + k)]) << ",";
    }
    out << (s.label[static_cast<size_t>(i)] == 0 ? "horizontal" : "vertical") << "\n";
  }
}

}  // namespace invariant::testing

#endif  // INVARIANT_TESTS_UNIT_TRAIN_SYNTHETIC_IMAGES_H_
