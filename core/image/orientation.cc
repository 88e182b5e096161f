#include "core/image/orientation.h"

#include <cstdint>
#include <string_view>
#include <utility>

namespace invariant::image {
namespace {

uint32_t Read(std::string_view s, size_t at, int bytes, bool big_endian) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    const uint32_t b = static_cast<uint8_t>(s[at + i]);
    v |= big_endian ? b << (8 * (bytes - 1 - i)) : b << (8 * i);
  }
  return v;
}

}  // namespace

int TiffOrientation(std::string_view tiff) {
  if (tiff.size() < 8) return 1;
  bool big;
  if (tiff.substr(0, 4) == std::string_view("II*\0", 4)) {
    big = false;
  } else if (tiff.substr(0, 4) == std::string_view("MM\0*", 4)) {
    big = true;
  } else {
    return 1;
  }
  const uint32_t ifd = Read(tiff, 4, 4, big);
  if (ifd > tiff.size() || tiff.size() - ifd < 2) return 1;
  const uint32_t entries = Read(tiff, ifd, 2, big);
  for (uint32_t e = 0; e < entries; ++e) {
    const size_t at = size_t{ifd} + 2 + size_t{e} * 12;
    if (at + 12 > tiff.size()) return 1;
    if (Read(tiff, at, 2, big) != 0x0112) continue;
    if (Read(tiff, at + 2, 2, big) != 3) return 1;  // SHORT
    const uint32_t value = Read(tiff, at + 8, 2, big);
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
  }
  return 1;
}

int JpegOrientation(std::string_view jpeg) {
  if (jpeg.size() < 4 || static_cast<uint8_t>(jpeg[0]) != 0xFF ||
      static_cast<uint8_t>(jpeg[1]) != 0xD8) {
    return 1;
  }
  size_t at = 2;
  while (at + 4 <= jpeg.size()) {
    if (static_cast<uint8_t>(jpeg[at]) != 0xFF) return 1;
    const uint8_t marker = static_cast<uint8_t>(jpeg[at + 1]);
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return 1;  // start of scan, end of image
    const size_t length = Read(jpeg, at + 2, 2, true);
    if (length < 2 || at + 2 + length > jpeg.size()) return 1;
    const std::string_view body = jpeg.substr(at + 4, length - 2);
    if (marker == 0xE1 && body.size() >= 6 &&
        body.substr(0, 6) == std::string_view("Exif\0\0", 6)) {
      return TiffOrientation(body.substr(6));
    }
    at += 2 + length;
  }
  return 1;
}

Pixels ApplyOrientation(Pixels in, int orientation) {
  if (orientation < 2 || orientation > 8) return in;
  const int64_t w = in.width, h = in.height;
  const bool swap = orientation >= 5;
  Pixels out = Pixels::Zeros(swap ? h : w, swap ? w : h, in.channels);
  const int c = in.channels;
  for (int64_t r = 0; r < out.height; ++r) {
    uint8_t* dst = out.row(r);
    for (int64_t col = 0; col < out.width; ++col) {
      int64_t sr = r, sc = col;
      switch (orientation) {
        case 2:
          sc = w - 1 - col;
          break;
        case 3:
          sr = h - 1 - r;
          sc = w - 1 - col;
          break;
        case 4:
          sr = h - 1 - r;
          break;
        case 5:
          sr = col;
          sc = r;
          break;
        case 6:
          sr = h - 1 - col;
          sc = r;
          break;
        case 7:
          sr = h - 1 - col;
          sc = w - 1 - r;
          break;
        case 8:
          sr = col;
          sc = w - 1 - r;
          break;
      }
      const uint8_t* src = in.row(sr) + sc * c;
      for (int ch = 0; ch < c; ++ch) dst[col * c + ch] = src[ch];
    }
  }
  return out;
}

}  // namespace invariant::image
