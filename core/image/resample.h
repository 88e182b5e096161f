// resample.h: Pillow's resampling of 8-bit images (Image.resize with a box),
// reproduced to the byte.
//
// Resample(in, box, width, height, filter) maps the source rectangle
// box = [x0, x1) × [y0, y1) (source pixel units, fractional allowed; taken
// as C floats, x1 − x0 computed in float, as Pillow takes its box) onto a
// width × height image, one axis at a time (horizontal first, only over the
// source rows the vertical pass reads), as libImaging/Resample.c does:
//   * output pixel i along an axis has centre u = x0 + (i + ½) · s, with
//     s = (x1 − x0) / out; the filter is stretched by f = max(s, 1) (so a
//     reduction averages, antialiased), its support is support · f, and the
//     source pixels j in [⌊u − support·f + ½⌋, ⌊u + support·f + ½⌋) ∩ [0, n)
//     get the weights filter((j − u + ½) / f), normalised to unit sum;
//   * the weights become 22-bit fixed point (round half away from zero),
//     each pass sums byte · weight from 2^21 and keeps the clamped top bits:
//     every pass rounds to bytes, as Pillow's 8-bit path does.
// An axis whose box is the whole axis at the same size is not resampled.
//
// Filters: kBilinear, the triangle 1 − |x| on [−1, 1]; kBicubic, Keys'
// cubic with a = −0.5 on [−2, 2] (Pillow's BILINEAR and BICUBIC).
//
// Preconditions (checked by the callers, core/image/front_end.cc): width,
// height ≥ 1, 0 ≤ x0 < x1 ≤ in.width, 0 ≤ y0 < y1 ≤ in.height.
// Thread-safety: a pure function.
#ifndef INVARIANT_CORE_IMAGE_RESAMPLE_H_
#define INVARIANT_CORE_IMAGE_RESAMPLE_H_

#include <cstdint>

#include "core/image/pixels.h"

namespace invariant::image {

enum class Filter { kBilinear, kBicubic };

struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

Pixels Resample(const Pixels& in, const Box& box, int64_t width, int64_t height, Filter filter);

}  // namespace invariant::image

#endif  // INVARIANT_CORE_IMAGE_RESAMPLE_H_
