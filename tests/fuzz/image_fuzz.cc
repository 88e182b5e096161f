// image_fuzz.cc: libFuzzer target for image decoding and the image front end
// (core/image/image_file.h, front_end.h), through both decoders' paths in
// our code: TurboJPEG for JPEG, libspng for PNG.
//
// Input: the bytes of an image file (the seeds in corpus/image_fuzz/ are
// tiny JPEGs (baseline, progressive, grey, EXIF-rotated, CMYK, truncated)
// and PNGs (every colour type, 1/2/4/16-bit, palette with tRNS, interlaced,
// a header declaring 30,000 × 30,000, a bad CRC), made by
// tests/fuzz/make_image_corpus.py). ReadImageHeader and DecodeImage (at most
// kMaxPixels declared pixels) must return an image or an INVALID_ARGUMENT
// naming the input, never crash; a decoded image has the header's sides, 3
// or 4 channels (1 or 3 for a JPEG) and exactly its bytes; and three front
// ends (grey crop, RGB pad bicubic, RGB stretch) turn every decodable image
// into rows of values in [0, 1].
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/image/front_end.h"
#include "core/image/image_file.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using invariant::fuzz::Check;
namespace image = invariant::image;

constexpr int64_t kMaxPixels = 1 << 20;

std::unique_ptr<const image::ImageFrontEnd> MakeFrontEnd(int variant) {
  invariant::v1::ImageFrontEnd spec;
  spec.set_height(variant == 0 ? 9 : 16);
  spec.set_width(variant == 0 ? 7 : 12);
  spec.set_channels(variant == 0 ? 1 : 3);
  spec.set_fit(variant == 0   ? invariant::v1::ImageFrontEnd::FIT_CROP
               : variant == 1 ? invariant::v1::ImageFrontEnd::FIT_PAD
                              : invariant::v1::ImageFrontEnd::FIT_STRETCH);
  if (variant == 1) spec.set_filter(invariant::v1::ImageFrontEnd::FILTER_BICUBIC);
  spec.set_background(variant * 100);
  auto front = image::ImageFrontEnd::Create(spec);
  Check(front.ok(), "the fuzz front ends are valid");
  return std::move(*front);
}

bool NamesInput(const absl::Status& s) { return s.message().rfind("fuzz.img: ", 0) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<const image::ImageFrontEnd> fronts[3] = {
      MakeFrontEnd(0), MakeFrontEnd(1), MakeFrontEnd(2)};
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto header = image::ReadImageHeader(bytes, "fuzz.img");
  const auto decoded = image::DecodeImage(bytes, kMaxPixels, "fuzz.img");
  if (!header.ok()) {
    Check(
        header.status().code() == absl::StatusCode::kInvalidArgument && NamesInput(header.status()),
        "a refused header is INVALID_ARGUMENT naming the input");
    Check(!decoded.ok(), "an image whose header is refused is not decoded");
  }
  if (!decoded.ok()) {
    Check(decoded.status().code() == absl::StatusCode::kInvalidArgument &&
              NamesInput(decoded.status()),
          "a refused image is INVALID_ARGUMENT naming the input");
    Check(!header.ok() || header->pixels() > kMaxPixels ||
              decoded.status().message().find("corrupt") != std::string_view::npos,
          "an image with a readable header within the limit is refused only as corrupt");
    return 0;
  }
  Check(header.ok(), "a decoded image has a readable header");
  Check(decoded->width == header->width && decoded->height == header->height,
        "the decoded image has the header's sides");
  const bool jpeg = header->format == image::ImageFormat::kJpeg;
  Check(jpeg ? (decoded->channels == 1 || decoded->channels == 3)
             : (decoded->channels == 3 || decoded->channels == 4),
        "a decoded image has 1 or 3 (JPEG) or 3 or 4 (PNG) channels");
  Check(decoded->data.size() ==
            static_cast<size_t>(decoded->width * decoded->height * decoded->channels),
        "a decoded image holds exactly its bytes");
  Check(static_cast<int64_t>(decoded->data.size()) <= image::DecodedBytes(*header),
        "decoding holds at most what the header prices");
  for (const auto& front : fronts) {
    std::vector<float> row(static_cast<size_t>(front->output_dim()));
    const absl::Status status = front->Apply(bytes, kMaxPixels, row.data(), "fuzz.img");
    Check(status.ok(), "the front end takes every image that decodes");
    for (const float v : row) Check(v >= 0.0f && v <= 1.0f, "front-end values are in [0, 1]");
  }
  return 0;
}
