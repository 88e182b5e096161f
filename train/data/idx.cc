#include "train/data/idx.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/io/byte_stream.h"
#include "core/io/idx.h"

namespace invariant::train {
namespace {

// The largest image side the readers accept (a header claiming more is
// INVALID_ARGUMENT), so that counts times pixels never overflow int64.
constexpr int64_t kMaxIdxImageSide = 4096;

// Image files: unsigned bytes or float32, n x rows x cols or n x rows x cols
// x channels.
constexpr uint32_t kIdxImageMagics[] = {io::kIdxImageMagic, io::kIdxColorImageMagic,
                                        io::IdxMagic(io::kIdxFloat32, 3),
                                        io::IdxMagic(io::kIdxFloat32, 4)};

class IdxSource : public RowSource {
 public:
  static absl::StatusOr<std::unique_ptr<IdxSource>> Open(const std::string& images_path,
                                                         const std::string& labels_path,
                                                         RowSchema schema) {
    // The source is read once per pass (Reset reopens the files): stdin,
    // which can be read only once, is refused.
    for (const std::string* path : {&images_path, &labels_path}) {
      if (*path == io::kStdinPath) {
        return absl::InvalidArgumentError(
            "IDX data is read once per training pass: give the images and labels as files, "
            "not '-' (stdin)");
      }
    }
    std::unique_ptr<IdxSource> source(new IdxSource());
    source->images_path_ = images_path;
    source->labels_path_ = labels_path;
    source->schema_ = std::move(schema);
    RETURN_IF_ERROR(source->Reset());
    return source;
  }

  const RowSchema& schema() const override { return schema_; }

  absl::Status Reset() override {
    ASSIGN_OR_RETURN(images_, io::ByteReader::Open(images_path_));
    ASSIGN_OR_RETURN(labels_, io::ByteReader::Open(labels_path_));
    ASSIGN_OR_RETURN(const io::IdxHeader image_header,
                     io::ReadIdxHeader(*images_, kIdxImageMagics, "image"));
    ASSIGN_OR_RETURN(const io::IdxHeader label_header,
                     io::ReadIdxHeader(*labels_, kIdxLabelMagic, "label"));
    const std::vector<int64_t>& image_dims = image_header.dims;
    const std::vector<int64_t>& label_dims = label_header.dims;
    if (image_dims[0] != label_dims[0]) {
      return absl::InvalidArgumentError(
          absl::StrCat("IDX count mismatch: ", images_path_, " holds ", image_dims[0],
                       " images but ", labels_path_, " holds ", label_dims[0], " labels"));
    }
    if (image_dims[1] == 0 || image_dims[2] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(images_path_, ": empty image size ", image_dims[1], "x", image_dims[2]));
    }
    if (image_dims[1] > kMaxIdxImageSide || image_dims[2] > kMaxIdxImageSide) {
      return absl::InvalidArgumentError(
          absl::StrCat(images_path_, ": image size ", image_dims[1], "x", image_dims[2],
                       " exceeds the largest supported side ", kMaxIdxImageSide));
    }
    const bool has_channels = image_dims.size() == 4;
    if (has_channels && (image_dims[3] < 1 || image_dims[3] > kMaxIdxChannels)) {
      const bool channels_first = image_dims[1] >= 1 && image_dims[1] <= kMaxIdxChannels;
      return absl::InvalidArgumentError(absl::StrCat(
          images_path_, ": IDX image dims ", absl::StrJoin(image_dims, " x "),
          ": the last dim (channels) is ", image_dims[3], ", not a channel count in [1, ",
          kMaxIdxChannels,
          "]; rank-4 image files are n x height x width x channels (channels last)",
          channels_first ? absl::StrCat("; this looks channels-first (n x channels x height x "
                                        "width): transpose it to channels last")
                         : ""));
    }
    type_ = image_header.type;
    element_bytes_ = image_header.element_bytes;
    num_rows_ = image_dims[0];
    rows_ = image_dims[1];
    cols_ = image_dims[2];
    channels_ = has_channels ? image_dims[3] : 1;
    schema_.dim = rows_ * cols_ * channels_;
    schema_.input_shape = {rows_, cols_};
    if (has_channels) schema_.input_shape.push_back(channels_);
    schema_.num_rows = num_rows_;
    schema_.unit_byte_scaled = type_ == io::kIdxUnsignedByte;
    cursor_ = 0;
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    if (max_rows <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("max_rows must be > 0, got ", max_rows));
    }
    const int64_t n = std::min(max_rows, num_rows_ - cursor_);
    if (n <= 0) return 0;
    const int64_t values = schema_.dim;  // per image
    const int64_t image_bytes = values * element_bytes_;
    bytes_.resize(static_cast<size_t>(std::max(n * image_bytes, n)));
    ASSIGN_OR_RETURN(const int64_t got_bytes, images_->Read(bytes_.data(), n * image_bytes));
    if (got_bytes < n * image_bytes) {
      const int64_t bad = cursor_ + got_bytes / image_bytes;
      return absl::DataLossError(absl::StrCat(
          images_path_, ": truncated IDX image data: header promises ", num_rows_, " images of ",
          ImageSize(), " (", num_rows_ * image_bytes, " bytes) but the data ends inside image ",
          bad, " (", cursor_ * image_bytes + got_bytes, " bytes)"));
    }
    io::DecodeIdx(type_, bytes_.data(), n * values, x);
    if (type_ != io::kIdxUnsignedByte) {
      for (int64_t k = 0; k < n * values; ++k) {
        if (!std::isfinite(x[k])) {
          return absl::InvalidArgumentError(
              absl::StrCat(images_path_, ": image ", cursor_ + k / values, " holds a non-finite ",
                           "value (", x[k], ") at element ", k % values));
        }
      }
    }
    ASSIGN_OR_RETURN(const int64_t got_labels, labels_->Read(bytes_.data(), n));
    if (got_labels < n) {
      return absl::DataLossError(
          absl::StrCat(labels_path_, ": truncated IDX label data: header promises ", num_rows_,
                       " labels but the data ends after ", cursor_ + got_labels));
    }
    const int64_t num_classes = static_cast<int64_t>(schema_.class_names.size());
    for (int64_t i = 0; i < n; ++i) {
      if (bytes_[i] >= num_classes) {
        return absl::InvalidArgumentError(
            absl::StrCat(labels_path_, ": label ", int{bytes_[i]}, " of example ", cursor_ + i,
                         " is outside the ", num_classes, " classes [0, ", num_classes, ")"));
      }
      if (labels != nullptr) labels[i] = bytes_[i];
    }
    cursor_ += n;
    return n;
  }

 private:
  IdxSource() = default;

  std::string images_path_;
  std::string labels_path_;
  RowSchema schema_;
  std::unique_ptr<io::ByteReader> images_;
  std::unique_ptr<io::ByteReader> labels_;
  // "rows x cols", or "rows x cols x channels" for a rank-4 file.
  std::string ImageSize() const {
    return schema_.input_shape.size() == 3 ? absl::StrCat(rows_, "x", cols_, "x", channels_)
                                           : absl::StrCat(rows_, "x", cols_);
  }

  std::vector<uint8_t> bytes_;
  int type_ = io::kIdxUnsignedByte;
  int element_bytes_ = 1;
  int64_t num_rows_ = 0;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  int64_t channels_ = 1;
  int64_t cursor_ = 0;
};

std::vector<std::string> NumberNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(absl::StrCat(i));
  return names;
}

absl::StatusOr<std::unique_ptr<RowSource>> OpenWithClasses(const std::string& images_path,
                                                           const std::string& labels_path,
                                                           const IdxOptions& options,
                                                           std::vector<std::string> names) {
  RowSchema schema;
  schema.name = options.name.empty() ? images_path : options.name;
  schema.has_labels = true;
  schema.class_names = std::move(names);
  ASSIGN_OR_RETURN(std::unique_ptr<IdxSource> source,
                   IdxSource::Open(images_path, labels_path, std::move(schema)));
  return std::unique_ptr<RowSource>(std::move(source));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RowSource>> OpenIdxSource(const std::string& images_path,
                                                         const std::string& labels_path,
                                                         const IdxOptions& options) {
  return OpenWithClasses(images_path, labels_path, options,
                         options.class_names.empty() ? NumberNames(10) : options.class_names);
}

absl::StatusOr<Dataset> LoadIdx(const std::string& images_path, const std::string& labels_path,
                                const IdxOptions& options) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<RowSource> source,
      OpenWithClasses(images_path, labels_path, options,
                      options.class_names.empty() ? NumberNames(256) : options.class_names));
  ASSIGN_OR_RETURN(Dataset data, ReadAllRows(*source));
  if (options.class_names.empty()) {
    int32_t max_label = -1;
    for (int32_t l : data.labels) max_label = std::max(max_label, l);
    data.class_names = NumberNames(max_label + 1);
  }
  return data;
}

absl::Status WriteIdxImages(const std::string& path, int64_t n, int64_t rows, int64_t cols,
                            absl::Span<const uint8_t> pixels, bool gzip) {
  return io::WriteIdx(path, {n, rows, cols}, pixels, gzip);
}

absl::Status WriteIdxColorImages(const std::string& path, int64_t n, int64_t rows, int64_t cols,
                                 int64_t channels, absl::Span<const uint8_t> pixels, bool gzip) {
  return io::WriteIdx(path, {n, rows, cols, channels}, pixels, gzip);
}

absl::Status WriteIdxLabels(const std::string& path, absl::Span<const uint8_t> labels, bool gzip) {
  return io::WriteIdx(path, {static_cast<int64_t>(labels.size())}, labels, gzip);
}

}  // namespace invariant::train
