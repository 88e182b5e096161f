// pixels.h: a decoded image, 8 bits per sample, row-major, channels last.
//
// channels is 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGB + alpha);
// data holds height · width · channels bytes, sample (r, c, ch) at
// (r · width + c) · channels + ch. Plain data: copy or move it freely.
#ifndef INVARIANT_CORE_IMAGE_PIXELS_H_
#define INVARIANT_CORE_IMAGE_PIXELS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace invariant::image {

struct Pixels {
  int64_t width = 0;
  int64_t height = 0;
  int channels = 0;
  std::vector<uint8_t> data;

  // height · width · channels zero bytes.
  static Pixels Zeros(int64_t width, int64_t height, int channels) {
    Pixels p;
    p.width = width;
    p.height = height;
    p.channels = channels;
    p.data.assign(static_cast<size_t>(width * height * channels), 0);
    return p;
  }
  // Resizes this image to width × height × channels, keeping the buffer's
  // capacity (for reuse); the bytes are left as they were, not zeroed.
  void Reshape(int64_t w, int64_t h, int c) {
    width = w;
    height = h;
    channels = c;
    data.resize(static_cast<size_t>(w * h * c));
  }
  uint8_t* row(int64_t r) { return data.data() + r * width * channels; }
  const uint8_t* row(int64_t r) const { return data.data() + r * width * channels; }
};

}  // namespace invariant::image

#endif  // INVARIANT_CORE_IMAGE_PIXELS_H_
