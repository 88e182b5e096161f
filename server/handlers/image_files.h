// image_files.h: the image files of a request to a model of images → its rows.
//
// A model of images sent as files (Model::image_front_end() set) takes
// InferRequest.images (encoded JPEG or PNG files), never rows.
// PlanImageBatch checks every file from its header alone (image_file.h's
// ReadImageHeader: no pixel decoded, nothing the image's size allocated)
// and prices the batch; DecodeImageBatch decodes each file and applies the
// model's front end on the calling thread (the handler calls it from its
// decoding workers, never a transport thread), so the batcher sees ordinary
// rows. The front end depends on nothing but the file, so a file gives the
// same row alone or among others, in any request, and the row the trainer
// gave it.
//
// Limits: at most `max_rows` images; each declaring at most `max_pixels`
// (width · height), EffectiveMaxImagePixels: the smaller of the model's
// max_pixels and the server's --max_image_pixels. A file declaring more is
// refused from its header, before a byte of pixel data is decoded.
//
// Errors: INVALID_ARGUMENT naming the field as the caller's protocol calls
// it: "inputs.images: ..." for the count, "inputs.images[3]: expected a JPEG
// or PNG file, received ...", "inputs.images[3]: the PNG declares 30000 x
// 30000 = 900000000 pixels, above the limit of 50000000 pixels", a corrupt
// or truncated file (the decoder's message). Thread-safe (pure functions).
#ifndef INVARIANT_SERVER_HANDLERS_IMAGE_FILES_H_
#define INVARIANT_SERVER_HANDLERS_IMAGE_FILES_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "core/image/front_end.h"
#include "server/handlers/infer_request.h"
#include "server/handlers/validation.h"

namespace invariant::server {

// The server's default limit on an image's declared pixels (--max_image_pixels).
inline constexpr int64_t kDefaultMaxImagePixels = 50'000'000;

// min(the model's max_pixels, server_limit); server_limit <= 0: no server limit.
int64_t EffectiveMaxImagePixels(const image::ImageFrontEnd& front_end, int64_t server_limit);

// What decoding a batch costs, from the headers: every image's declared
// pixels, and the most bytes decoding one of them holds (image_file.h's
// DecodedBytes, times the copies the front end makes: decoded, converted,
// resampled).
struct ImageBatchCost {
  int64_t pixels = 0;
  int64_t peak_bytes = 0;
};

// The checks of `request`'s images that need no decoding (count, headers,
// declared sizes), and their cost.
absl::StatusOr<ImageBatchCost> PlanImageBatch(const InferRequest& request,
                                              const image::ImageFrontEnd& front_end,
                                              int64_t max_rows, int64_t max_pixels);

// `request`'s images (declared_rows 0 or the image count) → one row of
// front_end.output_dim() floats per image, each file's header checked as
// PlanImageBatch checks it just before that file is decoded. `keep_going` (may be empty) is
// asked before each image; its first error (the call was cancelled or its
// deadline passed) ends the decoding with that status.
absl::StatusOr<DecodedRows> DecodeImageBatch(const InferRequest& request,
                                             const image::ImageFrontEnd& front_end,
                                             int64_t max_rows, int64_t max_pixels,
                                             const std::function<absl::Status()>& keep_going = {});

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_IMAGE_FILES_H_
