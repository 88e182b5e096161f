// idx.h: MNIST-format (IDX) image and label files, plain or gzip.
//
// The IDX format (LeCun et al., the MNIST page) is a big-endian header and
// raw elements: a magic number 0x0000TTDD (TT the element type, DD the number
// of dims), the dims, then the elements row-major. Image files are
//   0x00000803  unsigned bytes, n x rows x cols (grey images, MNIST),
//   0x00000804  unsigned bytes, n x rows x cols x channels (colour images,
//               channels last: value (r, c, ch) at (r·cols + c)·channels + ch,
//               the layout of core/groups/image_transform.h),
//   0x00000D03 / 0x00000D04  the same with float32 elements;
// label files are 0x00000801 (unsigned bytes, 1 dim: n). Files may be
// gzip-compressed (detected by the gzip magic). The format is read and
// written by core/io/idx.h, the reader invariant-client uses too; this is the
// training-set view of it.
//
// Pixel scaling: an image byte b becomes the float b / 255, so pixels lie in
// [0, 1] (schema unit_byte_scaled); float32 images are taken as they are and
// must be finite. Rows are the images flattened row-major: input_shape
// {rows, cols} for a rank-3 file, {rows, cols, channels} for a rank-4 one.
// Labels are class indices; the classes are named by the caller (Fashion-MNIST
// names, say) or default to "0", "1", ... up to the largest label found.
//
// Errors name the file and the problem: wrong magic (the accepted ones and
// the one got), truncated header or data (expected and got byte counts, and
// the image index), a rank-4 file whose last dim is not a channel count in
// [1, kMaxIdxChannels] (saying when it looks channels-first, n x C x H x W),
// image and label counts that disagree, labels outside the classes,
// non-finite float pixels. Whether the image size agrees with a config's
// data.image is checked by data_config.h. Sources are not thread-safe.
#ifndef INVARIANT_TRAIN_DATA_IDX_H_
#define INVARIANT_TRAIN_DATA_IDX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/io/idx.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

using io::kIdxColorImageMagic;  // 0x00000804
using io::kIdxImageMagic;       // 0x00000803
using io::kIdxLabelMagic;       // 0x00000801

// The largest channel count of a rank-4 image file (grey, grey + alpha, RGB,
// RGBA); a larger last dim is refused as not channels-last.
inline constexpr int64_t kMaxIdxChannels = 4;

struct IdxOptions {
  std::string name;                      // data set name; default: the images path
  std::vector<std::string> class_names;  // empty: "0".."9" while streaming;
                                         // "0".."max label" for LoadIdx
};

// Streams (image, label) rows from an image file and a label file, reading
// only the headers at open time (counts must agree). When class_names is
// empty the source names 10 classes "0".."9" and a label ≥ 10 is an error.
absl::StatusOr<std::unique_ptr<RowSource>> OpenIdxSource(const std::string& images_path,
                                                         const std::string& labels_path,
                                                         const IdxOptions& options = {});

// Reads both files into memory (through OpenIdxSource). Without class_names
// the classes are "0".."max label".
absl::StatusOr<Dataset> LoadIdx(const std::string& images_path, const std::string& labels_path,
                                const IdxOptions& options = {});

// Writes an IDX image file (0x00000803, n × rows × cols bytes); gzip when
// `gzip`. `pixels` holds n·rows·cols bytes.
absl::Status WriteIdxImages(const std::string& path, int64_t n, int64_t rows, int64_t cols,
                            absl::Span<const uint8_t> pixels, bool gzip);
// Writes a colour IDX image file (0x00000804, n × rows × cols × channels
// bytes, channels last); `pixels` holds n·rows·cols·channels bytes.
absl::Status WriteIdxColorImages(const std::string& path, int64_t n, int64_t rows, int64_t cols,
                                 int64_t channels, absl::Span<const uint8_t> pixels, bool gzip);
// Writes an IDX label file (0x00000801, n bytes).
absl::Status WriteIdxLabels(const std::string& path, absl::Span<const uint8_t> labels, bool gzip);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_IDX_H_
