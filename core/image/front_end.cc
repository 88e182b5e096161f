#include "core/image/front_end.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/base/unit_byte.h"
#include "core/image/orientation.h"
#include "core/image/resample.h"

namespace invariant::image {
namespace {

absl::Status Refuse(const char* field, const std::string& expected, int64_t received) {
  return absl::InvalidArgumentError(
      absl::StrCat("image.", field, ": expected ", expected, ", received ", received));
}

uint8_t Luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >> 16);
}

uint8_t Over(uint8_t c, uint8_t a, uint8_t background) {
  return static_cast<uint8_t>((c * a + background * (255u - a) + 127u) / 255u);
}

Filter FilterOf(const v1::ImageFrontEnd& spec) {
  return spec.filter() == v1::ImageFrontEnd::FILTER_BICUBIC ? Filter::kBicubic : Filter::kBilinear;
}

// Each fit returns `in` itself when nothing is resampled, else `*out`.

// Pillow's ImageOps.fit: the largest centred box of the output's aspect.
const Pixels* FitCrop(const Pixels& in, int64_t width, int64_t height, Filter filter, Pixels* out) {
  const double w = static_cast<double>(in.width), h = static_cast<double>(in.height);
  const double live = w / h, aspect = static_cast<double>(width) / static_cast<double>(height);
  double cw = w, ch = h;
  if (live == aspect) {
  } else if (live >= aspect) {
    cw = aspect * h;
  } else {
    ch = w / aspect;
  }
  const double left = (w - cw) * 0.5, top = (h - ch) * 0.5;
  if (width == in.width && height == in.height && cw == w && ch == h) return &in;
  *out = Resample(in, Box{left, top, left + cw, top + ch}, width, height, filter);
  return out;
}

const Pixels* ResizeWhole(const Pixels& in, int64_t width, int64_t height, Filter filter,
                          Pixels* out) {
  if (width == in.width && height == in.height) return &in;
  *out = Resample(in, Box{0, 0, static_cast<double>(in.width), static_cast<double>(in.height)},
                  width, height, filter);
  return out;
}

// Pillow's ImageOps.pad (contain, then centred on the background); Python's
// round is half to even, as nearbyint is.
const Pixels* FitPad(const Pixels& in, int64_t width, int64_t height, Filter filter,
                     uint8_t background, Pixels* out) {
  const double w = static_cast<double>(in.width), h = static_cast<double>(in.height);
  const double ratio = w / h, dest = static_cast<double>(width) / static_cast<double>(height);
  int64_t rw = width, rh = height;
  if (ratio > dest) {
    rh = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(h / w * width)));
  } else if (ratio < dest) {
    rw = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(w / h * height)));
  }
  Pixels resized;
  const Pixels* fitted = ResizeWhole(in, rw, rh, filter, &resized);
  if (rw == width && rh == height) {
    if (fitted == &in) return &in;
    *out = std::move(resized);
    return out;
  }
  out->Reshape(width, height, in.channels);
  std::fill(out->data.begin(), out->data.end(), background);
  const int64_t x = rw != width ? static_cast<int64_t>(std::nearbyint((width - rw) * 0.5)) : 0;
  const int64_t y = rw != width ? 0 : static_cast<int64_t>(std::nearbyint((height - rh) * 0.5));
  for (int64_t r = 0; r < rh; ++r) {
    std::copy(fitted->row(r), fitted->row(r) + rw * in.channels, out->row(y + r) + x * in.channels);
  }
  return out;
}

}  // namespace

Pixels ToChannels(const Pixels& in, int channels, uint8_t background) {
  if (in.channels == channels) return in;
  Pixels out = Pixels::Zeros(in.width, in.height, channels);
  const int64_t n = in.width * in.height;
  const uint8_t* s = in.data.data();
  uint8_t* d = out.data.data();
  for (int64_t i = 0; i < n; ++i, s += in.channels, d += channels) {
    uint8_t rgb[3];
    switch (in.channels) {
      case 1:
        rgb[0] = rgb[1] = rgb[2] = s[0];
        break;
      case 2:
        rgb[0] = rgb[1] = rgb[2] = Over(s[0], s[1], background);
        break;
      case 3:
        rgb[0] = s[0];
        rgb[1] = s[1];
        rgb[2] = s[2];
        break;
      default:
        for (int c = 0; c < 3; ++c) rgb[c] = Over(s[c], s[3], background);
        break;
    }
    if (channels == 1) {
      d[0] = in.channels <= 2 ? rgb[0] : Luma(rgb);
    } else {
      d[0] = rgb[0];
      d[1] = rgb[1];
      d[2] = rgb[2];
    }
  }
  return out;
}

absl::StatusOr<v1::ImageFrontEnd> ImageFrontEnd::Complete(v1::ImageFrontEnd spec) {
  const std::string side = absl::StrCat("1 to ", kMaxSide);
  if (spec.height() < 1 || spec.height() > kMaxSide) return Refuse("height", side, spec.height());
  if (spec.width() < 1 || spec.width() > kMaxSide) return Refuse("width", side, spec.width());
  if (spec.channels() != 1 && spec.channels() != 3) {
    return Refuse("channels", "1 (grey) or 3 (RGB)", spec.channels());
  }
  const int64_t values = int64_t{spec.height()} * spec.width() * spec.channels();
  if (values > kMaxRowValues) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image: expected height · width · channels ≤ ", kMaxRowValues, " values, received ",
        spec.height(), " x ", spec.width(), " x ", spec.channels(), " = ", values));
  }
  if (!v1::ImageFrontEnd::Fit_IsValid(spec.fit())) {
    return Refuse("fit", "FIT_CROP, FIT_PAD or FIT_STRETCH", spec.fit());
  }
  if (!v1::ImageFrontEnd::Filter_IsValid(spec.filter())) {
    return Refuse("filter", "FILTER_BILINEAR or FILTER_BICUBIC", spec.filter());
  }
  if (spec.background() < 0 || spec.background() > 255) {
    return Refuse("background", "a grey level in [0, 255]", spec.background());
  }
  if (spec.max_pixels() < 0 || spec.max_pixels() > kMaxSide * kMaxSide) {
    return Refuse("max_pixels",
                  absl::StrCat("0 (", kDefaultMaxPixels, ") to ", kMaxSide * kMaxSide),
                  spec.max_pixels());
  }
  return spec;
}

absl::StatusOr<std::unique_ptr<const ImageFrontEnd>> ImageFrontEnd::Create(
    const v1::ImageFrontEnd& spec) {
  ASSIGN_OR_RETURN(v1::ImageFrontEnd completed, Complete(spec));
  return std::unique_ptr<const ImageFrontEnd>(new ImageFrontEnd(std::move(completed)));
}

int64_t ImageFrontEnd::max_pixels() const {
  return spec_.max_pixels() > 0 ? spec_.max_pixels() : kDefaultMaxPixels;
}

// What one Apply holds: the decoded image and each later step's result.
// Apply keeps one per thread, so warm calls allocate only what resampling
// makes; a workspace that grew past kKeptBytes is given back after its call.
struct ImageFrontEnd::Workspace {
  static constexpr size_t kKeptBytes = size_t{8} << 20;
  Pixels decoded, upright, converted, fitted;
  void Trim() {
    for (Pixels* p : {&decoded, &upright, &converted, &fitted}) {
      if (p->data.capacity() > kKeptBytes) *p = Pixels();
    }
  }
};

absl::StatusOr<const Pixels*> ImageFrontEnd::Run(std::string_view file, int64_t max_pixels,
                                                 const std::string& what, Workspace& ws) const {
  int orientation = 1;
  RETURN_IF_ERROR(DecodeImageInto(file, max_pixels, what, &ws.decoded, &orientation));
  const Pixels* p = &ws.decoded;
  if (!spec_.ignore_orientation() && orientation != 1) {
    ws.upright = ApplyOrientation(*p, orientation);
    p = &ws.upright;
  }
  const auto background = static_cast<uint8_t>(spec_.background());
  if (p->channels != spec_.channels()) {
    ws.converted = ToChannels(*p, spec_.channels(), background);
    p = &ws.converted;
  }
  const Filter filter = FilterOf(spec_);
  switch (spec_.fit()) {
    case v1::ImageFrontEnd::FIT_PAD:
      return FitPad(*p, spec_.width(), spec_.height(), filter, background, &ws.fitted);
    case v1::ImageFrontEnd::FIT_STRETCH:
      return ResizeWhole(*p, spec_.width(), spec_.height(), filter, &ws.fitted);
    default:
      return FitCrop(*p, spec_.width(), spec_.height(), filter, &ws.fitted);
  }
}

absl::StatusOr<Pixels> ImageFrontEnd::Prepare(std::string_view file, int64_t max_pixels,
                                              const std::string& what) const {
  Workspace ws;
  ASSIGN_OR_RETURN(const Pixels* pixels, Run(file, max_pixels, what, ws));
  return *pixels;
}

absl::Status ImageFrontEnd::Apply(std::string_view file, int64_t max_pixels, float* row,
                                  const std::string& what) const {
  thread_local Workspace ws;
  absl::StatusOr<const Pixels*> pixels = Run(file, max_pixels, what, ws);
  if (pixels.ok()) {
    const std::vector<uint8_t>& bytes = (*pixels)->data;
    for (size_t i = 0; i < bytes.size(); ++i) row[i] = UnitByteToFloat(bytes[i]);
  }
  ws.Trim();
  return pixels.status();
}

}  // namespace invariant::image
