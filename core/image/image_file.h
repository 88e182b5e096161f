// image_file.h: encoded image files (JPEG, PNG) → 8-bit pixels, with their
// declared size read from the header first.
//
// ReadImageHeader reads only the header (a PNG's IHDR; a JPEG's markers up
// to its frame header, through TurboJPEG's tjDecompressHeader3): format,
// declared width and height, colour model. No pixel is decoded and nothing
// the size of the image is allocated, so a caller can price or refuse an
// image (a decompression bomb: a small file declaring 60,000 × 60,000) in
// microseconds.
//
// DecodeImage checks the header the same way and refuses an image declaring
// more than `max_pixels` (width · height) before decoding, then decodes:
//   * JPEG through libjpeg-turbo's TurboJPEG API (baseline, progressive,
//     arithmetic; greyscale → 1 channel, YCbCr / RGB → 3), the accurate
//     integer DCT and smooth upsampling (libjpeg's defaults, as Pillow
//     decodes), at most 500 progressive scans (TJFLAG_LIMITSCANS). CMYK and
//     YCCK JPEGs are refused by name. A file that ends before its last scan
//     ("Premature end of JPEG file") is refused; other libjpeg warnings
//     (stray bytes between markers) are not, as in Pillow;
//   * PNG through libspng (every colour type, bit depth 1–16, palette,
//     tRNS transparency, Adam7 interlacing; 16-bit samples taken to 8 bits
//     by libspng; gamma and colour profiles ignored, as Pillow does):
//     opaque images → 3 channels (grey ones have R = G = B), images with
//     alpha or tRNS → 4; every chunk CRC checked.
// Neither library longjmps across our frames: TurboJPEG catches libjpeg's
// longjmp inside its own C code and returns a code, and libspng returns
// codes. `orientation` receives the EXIF orientation (1..8; orientation.h)
// of a JPEG's APP1 or a PNG's eXIf chunk, not applied here.
//
// Errors: INVALID_ARGUMENT starting with `what`: an empty file, a file that
// is neither JPEG nor PNG ("expected a JPEG or PNG file, received bytes
// starting ff 00 ..."), a corrupt or truncated header or image (the
// library's message), a CMYK JPEG, an image declaring more than max_pixels
// ("declares 60000 x 60000 = 3600000000 pixels, above the limit of
// 50000000"), a zero or over-kMaxSide side. Thread-safety: reentrant.
#ifndef INVARIANT_CORE_IMAGE_IMAGE_FILE_H_
#define INVARIANT_CORE_IMAGE_IMAGE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/image/pixels.h"

namespace invariant::image {

enum class ImageFormat { kJpeg, kPng };

// The longest side either decoder is asked to handle (a JPEG's limit).
inline constexpr int64_t kMaxSide = 65500;

struct ImageHeader {
  ImageFormat format = ImageFormat::kJpeg;
  int64_t width = 0;
  int64_t height = 0;
  // As stored: 1 grey, 2 grey + alpha, 3 colour, 4 colour + alpha (for a
  // JPEG: 1 or 3; CMYK / YCCK ones are refused before this is returned).
  int channels = 0;
  int64_t pixels() const { return width * height; }
};

// "JPEG" / "PNG".
const char* FormatName(ImageFormat format);

absl::StatusOr<ImageHeader> ReadImageHeader(std::string_view file, const std::string& what);

// INVALID_ARGUMENT starting with `what` when `header` declares more than
// `max_pixels` pixels (the message above).
absl::Status CheckImagePixels(const ImageHeader& header, int64_t max_pixels,
                              const std::string& what);

// The bytes one step of decoding an image with `header` holds at most: 4
// a pixel (RGBA, the widest any step makes: DecodeImage's output and the
// front end's conversions).
int64_t DecodedBytes(const ImageHeader& header);

absl::StatusOr<Pixels> DecodeImage(std::string_view file, int64_t max_pixels,
                                   const std::string& what, int* orientation = nullptr);

// DecodeImage into `*out`, reusing its buffer (nothing is allocated when it
// is large enough; on an error `*out` is unspecified).
absl::Status DecodeImageInto(std::string_view file, int64_t max_pixels, const std::string& what,
                             Pixels* out, int* orientation = nullptr);

}  // namespace invariant::image

#endif  // INVARIANT_CORE_IMAGE_IMAGE_FILE_H_
