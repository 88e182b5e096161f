#include "server/handlers/image_files.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/image/image_file.h"

namespace invariant::server {
int64_t EffectiveMaxImagePixels(const image::ImageFrontEnd& front_end, int64_t server_limit) {
  if (server_limit <= 0) return front_end.max_pixels();
  return std::min(front_end.max_pixels(), server_limit);
}

namespace {

// Decoded, then converted to the model's channels, then resampled: at most
// three images of the decoded size at once.
constexpr int64_t kCopiesWhileDecoding = 3;

// The count checks of a batch of images.
absl::Status CheckImageCount(const InferRequest& request, int64_t max_rows) {
  const InferFieldNames& names = request.fields;
  const int64_t n = static_cast<int64_t>(request.images.size());
  if (n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(names.images, ": empty batch: expected at least one image, received 0"));
  }
  if (request.declared_rows != 0 && request.declared_rows != n) {
    return absl::InvalidArgumentError(absl::StrCat(names.num_rows, ": expected ", n,
                                                   " (one row per image), received ",
                                                   request.declared_rows));
  }
  if (n > max_rows) {
    return absl::InvalidArgumentError(absl::StrCat(names.images, ": expected at most ", max_rows,
                                                   " images per request, received ", n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ImageBatchCost> PlanImageBatch(const InferRequest& request,
                                              const image::ImageFrontEnd& front_end,
                                              int64_t max_rows, int64_t max_pixels) {
  if (absl::Status s = CheckImageCount(request, max_rows); !s.ok()) return s;
  const InferFieldNames& names = request.fields;
  const int64_t n = static_cast<int64_t>(request.images.size());
  ImageBatchCost cost;
  const int64_t row_bytes = front_end.output_dim();  // the resampled image, a byte a value
  for (int64_t i = 0; i < n; ++i) {
    const std::string field = names.Image(i);
    absl::StatusOr<image::ImageHeader> header = image::ReadImageHeader(request.images[i], field);
    if (!header.ok()) return header.status();
    if (absl::Status s = image::CheckImagePixels(*header, max_pixels, field); !s.ok()) return s;
    cost.pixels += header->pixels();
    cost.peak_bytes =
        std::max(cost.peak_bytes, kCopiesWhileDecoding * image::DecodedBytes(*header) + row_bytes);
  }
  return cost;
}

absl::StatusOr<DecodedRows> DecodeImageBatch(const InferRequest& request,
                                             const image::ImageFrontEnd& front_end,
                                             int64_t max_rows, int64_t max_pixels,
                                             const std::function<absl::Status()>& keep_going) {
  // Each file's header is checked again as it is decoded (DecodeImage holds
  // it to max_pixels first), so the headers are not read twice here.
  if (absl::Status s = CheckImageCount(request, max_rows); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(request.images.size());
  const int64_t dim = front_end.output_dim();
  std::vector<float> rows(static_cast<size_t>(n * dim));
  for (int64_t i = 0; i < n; ++i) {
    if (keep_going) {
      if (absl::Status s = keep_going(); !s.ok()) return s;
    }
    if (absl::Status s = front_end.Apply(request.images[i], max_pixels, rows.data() + i * dim,
                                         request.fields.Image(i));
        !s.ok()) {
      return s;
    }
  }
  return DecodedRows(n, std::move(rows));
}

}  // namespace invariant::server
