// front_end.h: the image front end, an encoded JPEG or PNG file of any size
// → one row of height · width · channels floats.
//
// The steps and every parameter are those of v1::ImageFrontEnd
// (proto/invariant/v1/bundle.proto; docs/math.md §11): decode
// (image_file.h), EXIF orientation (orientation.h), alpha on the background
// and colour to the model's channels, the fit (crop, pad or stretch) by
// Pillow's resampling (resample.h), then b · (1/255) (core/base/unit_byte.h).
// The row is channels last, row-major: the layout the image groups and the
// patch encoder act on, and the layout IDX and CIFAR rows have. A file whose
// decoded, upright, converted image is already height × width is not
// resampled, so a lossless file of the model's size gives the row its
// pixels give through the binary readers, bit for bit.
//
// Determinism: the row depends only on the file's bytes and the spec (all
// integer arithmetic after decoding, and libjpeg-turbo's integer DCT), so
// the trainer and the server give the same bits for the same file on any
// CPU.
//
// Errors: Complete / Create refuse an inconsistent spec with
// INVALID_ARGUMENT naming the field ("image.channels: expected 1 or 3,
// received 4"); Apply refuses a file with image_file.h's errors, starting
// with `what`, and refuses an image declaring more than `max_pixels` before
// decoding it.
//
// Thread-safety: a created ImageFrontEnd is immutable; Apply may be called
// from any number of threads at once.
#ifndef INVARIANT_CORE_IMAGE_FRONT_END_H_
#define INVARIANT_CORE_IMAGE_FRONT_END_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/image/image_file.h"
#include "core/image/pixels.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant::image {

class ImageFrontEnd {
 public:
  static constexpr int64_t kDefaultMaxPixels = 50'000'000;  // max_pixels = 0
  static constexpr int64_t kMaxRowValues = 1 << 22;         // height · width · channels

  // `spec` checked: height and width in [1, kMaxSide] with height · width ·
  // channels ≤ kMaxRowValues, channels 1 or 3, a known fit and filter,
  // background in [0, 255], max_pixels in [0, kMaxSide²]. Nothing to fill
  // in: every 0 is a meaning of its own (max_pixels 0: kDefaultMaxPixels).
  static absl::StatusOr<v1::ImageFrontEnd> Complete(v1::ImageFrontEnd spec);
  static absl::StatusOr<std::unique_ptr<const ImageFrontEnd>> Create(const v1::ImageFrontEnd& spec);

  const v1::ImageFrontEnd& spec() const { return spec_; }
  int64_t output_dim() const { return int64_t{spec_.height()} * spec_.width() * spec_.channels(); }
  // The model's limit on declared pixels (max_pixels, or kDefaultMaxPixels).
  int64_t max_pixels() const;

  // file → row[0, output_dim()), refusing more than `max_pixels` declared
  // pixels before decoding.
  absl::Status Apply(std::string_view file, int64_t max_pixels, float* row,
                     const std::string& what) const;

  // The upright, converted, fitted image Apply scales into a row (for tests
  // and tools that compare pixels).
  absl::StatusOr<Pixels> Prepare(std::string_view file, int64_t max_pixels,
                                 const std::string& what) const;

 private:
  explicit ImageFrontEnd(v1::ImageFrontEnd spec) : spec_(std::move(spec)) {}
  // What one call holds: the decoded image and each later step's result.
  struct Workspace;
  // The steps into `ws`; the fitted image (in `ws`).
  absl::StatusOr<const Pixels*> Run(std::string_view file, int64_t max_pixels,
                                    const std::string& what, Workspace& ws) const;
  v1::ImageFrontEnd spec_;
};

// Alpha on `background` and colour to `channels` (1 or 3), as the front end
// does (bundle.proto ImageFrontEnd, step 3).
Pixels ToChannels(const Pixels& in, int channels, uint8_t background);

}  // namespace invariant::image

#endif  // INVARIANT_CORE_IMAGE_FRONT_END_H_
