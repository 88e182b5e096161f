#include "core/image/resample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace invariant::image {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS for 8-bit images

double Triangle(double x) {
  if (x < 0) x = -x;
  return x < 1 ? 1 - x : 0;
}

double KeysCubic(double x) {
  constexpr double a = -0.5;
  if (x < 0) x = -x;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

// The weights of one axis: output i reads source [first[i], first[i] + count[i])
// with weights[i · size + k].
struct AxisWeights {
  int64_t size = 0;  // weights per output pixel
  std::vector<int64_t> first, count;
  std::vector<int32_t> weights;
};

// libImaging's precompute_coeffs + normalize_coeffs_8bpc. Pillow passes the
// box as C floats and subtracts its ends in float: so do we, for its bits.
AxisWeights Precompute(int64_t in_size, float in0, float in1, int64_t out_size, Filter filter) {
  const double support_1 = filter == Filter::kBilinear ? 1.0 : 2.0;
  double (*kernel)(double) = filter == Filter::kBilinear ? Triangle : KeysCubic;
  const double scale = static_cast<double>(in1 - in0) / static_cast<double>(out_size);
  const double filter_scale = std::max(scale, 1.0);
  const double support = support_1 * filter_scale;
  AxisWeights w;
  w.size = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  w.first.resize(out_size);
  w.count.resize(out_size);
  w.weights.assign(static_cast<size_t>(out_size * w.size), 0);
  std::vector<double> k(static_cast<size_t>(w.size));
  for (int64_t i = 0; i < out_size; ++i) {
    const double centre = in0 + (static_cast<double>(i) + 0.5) * scale;
    const double inv = 1.0 / filter_scale;
    // C's (int) truncates toward zero, as Pillow's code does.
    int64_t lo = static_cast<int64_t>(centre - support + 0.5);
    if (lo < 0) lo = 0;
    int64_t hi = static_cast<int64_t>(centre + support + 0.5);
    if (hi > in_size) hi = in_size;
    const int64_t n = std::min<int64_t>(std::max<int64_t>(hi - lo, 0), w.size);
    double sum = 0;
    for (int64_t x = 0; x < n; ++x) {
      k[x] = kernel((static_cast<double>(x + lo) - centre + 0.5) * inv);
      sum += k[x];
    }
    for (int64_t x = 0; x < n; ++x) {
      const double v = sum != 0.0 ? k[x] / sum : k[x];
      const double fixed = v * static_cast<double>(1 << kPrecisionBits);
      w.weights[i * w.size + x] = static_cast<int32_t>(v < 0 ? -0.5 + fixed : 0.5 + fixed);
    }
    w.first[i] = lo;
    w.count[i] = n;
  }
  return w;
}

// Pillow sums in int: 255 · 2^22 · (the weights' positive part, under 2)
// stays below 2^31.
inline uint8_t Clip8(int32_t sum) {
  const int32_t v = sum >> kPrecisionBits;  // arithmetic: floor
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// One row resampled along x, C channels a pixel (the channels of a tap
// summed together, as Pillow does).
template <int C>
void HorizontalRow(const uint8_t* src, uint8_t* dst, const AxisWeights& w) {
  const int64_t out_w = static_cast<int64_t>(w.first.size());
  for (int64_t x = 0; x < out_w; ++x) {
    const int32_t* k = &w.weights[x * w.size];
    const uint8_t* s = src + w.first[x] * C;
    int32_t acc[C];
    for (int ch = 0; ch < C; ++ch) acc[ch] = int32_t{1} << (kPrecisionBits - 1);
    for (int64_t j = 0; j < w.count[x]; ++j) {
      const int32_t kj = k[j];
      for (int ch = 0; ch < C; ++ch) acc[ch] += int32_t{s[j * C + ch]} * kj;
    }
    for (int ch = 0; ch < C; ++ch) dst[x * C + ch] = Clip8(acc[ch]);
  }
}

// Rows [row0, row0 + rows) of `in`, resampled along x by `w`.
Pixels Horizontal(const Pixels& in, int64_t row0, int64_t rows, const AxisWeights& w) {
  const int64_t out_w = static_cast<int64_t>(w.first.size());
  Pixels out = Pixels::Zeros(out_w, rows, in.channels);
  for (int64_t y = 0; y < rows; ++y) {
    const uint8_t* src = in.row(row0 + y);
    uint8_t* dst = out.row(y);
    switch (in.channels) {
      case 1:
        HorizontalRow<1>(src, dst, w);
        break;
      case 2:
        HorizontalRow<2>(src, dst, w);
        break;
      case 3:
        HorizontalRow<3>(src, dst, w);
        break;
      default:
        HorizontalRow<4>(src, dst, w);
        break;
    }
  }
  return out;
}

// `in` resampled along y by `w`, whose source rows start at row `offset` of
// the original image (in's row 0).
Pixels Vertical(const Pixels& in, int64_t offset, const AxisWeights& w) {
  const int64_t out_h = static_cast<int64_t>(w.first.size());
  const int64_t stride = in.width * in.channels;
  Pixels out = Pixels::Zeros(in.width, out_h, in.channels);
  std::vector<int32_t> sums(static_cast<size_t>(stride));
  for (int64_t y = 0; y < out_h; ++y) {
    std::fill(sums.begin(), sums.end(), int32_t{1} << (kPrecisionBits - 1));
    const int32_t* k = &w.weights[y * w.size];
    for (int64_t j = 0; j < w.count[y]; ++j) {
      const uint8_t* src = in.row(w.first[y] - offset + j);
      const int32_t kj = k[j];
      for (int64_t i = 0; i < stride; ++i) sums[i] += int32_t{src[i]} * kj;
    }
    uint8_t* dst = out.row(y);
    for (int64_t i = 0; i < stride; ++i) dst[i] = Clip8(sums[i]);
  }
  return out;
}

}  // namespace

Pixels Resample(const Pixels& in, const Box& box, int64_t width, int64_t height, Filter filter) {
  const float x0 = static_cast<float>(box.x0), x1 = static_cast<float>(box.x1);
  const float y0 = static_cast<float>(box.y0), y1 = static_cast<float>(box.y1);
  const bool horizontal = width != in.width || x0 != 0 || x1 != static_cast<float>(width);
  const bool vertical = height != in.height || y0 != 0 || y1 != static_cast<float>(height);
  if (!horizontal && !vertical) return in;
  const AxisWeights wy = Precompute(in.height, y0, y1, height, filter);
  if (!horizontal) return Vertical(in, 0, wy);
  const AxisWeights wx = Precompute(in.width, x0, x1, width, filter);
  if (!vertical) return Horizontal(in, 0, in.height, wx);
  // Only the source rows the vertical pass reads.
  const int64_t first = wy.first.front();
  const int64_t last = wy.first.back() + wy.count.back();
  const Pixels rows = Horizontal(in, first, last - first, wx);
  return Vertical(rows, first, wy);
}

}  // namespace invariant::image
