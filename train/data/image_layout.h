// image_layout.h: checking that a data source's rows are images in the
// layout the image group assumes: height × width × channels, row-major,
// channels last (core/groups/image_transform.h).
//
// CheckImageLayout(schema, shape, field) checks a source's schema against an
// expected shape (a config's data.image) and refuses, naming `field`:
//   * a row size other than height·width·channels ("data.image is 32 x 32 x 3
//     = 3072 values per row but 'f.csv' has rows of 3000");
//   * an input_shape of rank 2 or 3 (IDX: {rows, cols} or {rows, cols,
//     channels}) whose height, width or channels differ ("data.image.width
//     is 32 but 'x.idx' has images of width 28");
//   * column names (a CSV header) that show an order other than channels
//     last, when channels > 1 (CheckChannelsLastColumns).
// An input_shape of rank 1 (CSV, generators) says nothing beyond the size.
//
// CheckChannelsLastColumns: the rule for a header. A name tells the layout
// when it is
//   (a) a channel word and a pixel number: r, g, b, a, red, green, blue or
//       alpha (any case), an optional '_', '-' or '.', then digits: "r0",
//       "G_12", "blue.7"; or
//   (b) any prefix and three numbers at the end, each after a '_', '-' or '.'
//       separator: "pixel_0_1_2", "x-3-4-0".
// If every column name has form (a), or every one has form (b), the header
// must list the values channels last, numbered from 0 or 1:
//   (a) column k is pixel k / channels (+ base), and the channel words
//       repeat with period `channels` in the order of the first pixel (any
//       order of the channels, e.g. b, g, r, as long as it is the same for
//       every pixel);
//   (b) column k's numbers are (row, col, channel) of position k in the
//       channels-last order, or (channel, row, col) of that same position.
// A header that instead lists the values channels first (all of channel 0,
// then channel 1, ...) is refused, naming the first column out of place and
// saying how to fix it; so is a header whose names follow neither order.
// Names of other forms, or a mix of forms ("pixel0".."pixel3071", "f1"...),
// give no information: the header is accepted and the values are assumed to
// be channels last (documented in docs/command-line.md).
//
// Thread-safety: pure functions.
#ifndef INVARIANT_TRAIN_DATA_IMAGE_LAYOUT_H_
#define INVARIANT_TRAIN_DATA_IMAGE_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "invariant/v1/train_config.pb.h"
#include "train/data/row_source.h"

namespace invariant::train {

struct ImageShape {
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 1;
  int64_t size() const { return height * width * channels; }
};

// The shape a config's image layout gives (channels 0 means 1).
// INVALID_ARGUMENT naming `field` ("data.image.height must be > 0, got 0")
// when a side is not positive or a channel count negative.
absl::StatusOr<ImageShape> ImageShapeFromConfig(const v1::ImageLayout& layout,
                                                absl::string_view field);

// The checks above; `field` names the config field in errors ("data.image").
absl::Status CheckImageLayout(const RowSchema& schema, const ImageShape& shape,
                              absl::string_view field);

// The header rule above for the input column names of `source` (a name used
// in errors, the file). OK when shape.channels == 1.
absl::Status CheckChannelsLastColumns(const std::vector<std::string>& names,
                                      const ImageShape& shape, absl::string_view field,
                                      absl::string_view source);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_IMAGE_LAYOUT_H_
