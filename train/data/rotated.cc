#include "train/data/rotated.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/groups/image_transform.h"

namespace invariant::train {
namespace {

constexpr double kTwoPi = 6.283185307179586476925;

class RotatedSource : public RowSource {
 public:
  RotatedSource(std::unique_ptr<RowSource> images, uint64_t seed)
      : images_(std::move(images)), seed_(seed), schema_(images_->schema()) {
    schema_.name += "/rotated";
  }

  const RowSchema& schema() const override { return schema_; }

  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    buffer_.resize(static_cast<size_t>(std::max<int64_t>(max_rows, 0) * schema_.dim));
    ASSIGN_OR_RETURN(const int64_t got, images_->Next(max_rows, buffer_.data(), labels, targets));
    const int64_t h = schema_.input_shape[0], w = schema_.input_shape[1];
    const int64_t c = schema_.input_shape.size() == 3 ? schema_.input_shape[2] : 1;
    for (int64_t k = 0; k < got; ++k) {
      RotateImages(h, w, c, RotationAngle(seed_, cursor_ + k), 1, buffer_.data() + k * schema_.dim,
                   x + k * schema_.dim);
    }
    cursor_ += got;
    return got;
  }

  absl::Status Reset() override {
    cursor_ = 0;
    return images_->Reset();
  }

 private:
  std::unique_ptr<RowSource> images_;
  uint64_t seed_;
  RowSchema schema_;
  std::vector<float> buffer_;
  int64_t cursor_ = 0;
};

absl::Status CheckImageShape(const std::string& name, const std::vector<int64_t>& shape,
                             int64_t dim) {
  int64_t size = 1;
  for (const int64_t s : shape) size *= s;
  if (shape.size() < 2 || shape.size() > 3 || size != dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        ": the rotated protocol needs images with input_shape {height, width} or {height, width, "
        "channels} (channels last), got [",
        absl::StrJoin(shape, ", "), "] for rows of ", dim,
        "; for CSV rows set data.image { height width channels }"));
  }
  return absl::OkStatus();
}

}  // namespace

double RotationAngle(uint64_t seed, int64_t index) {
  return kTwoPi * Rng::ForStream(seed, static_cast<uint64_t>(index)).Uniform();
}

void RotateImages(int64_t height, int64_t width, double angle, int64_t n, const float* in,
                  float* out) {
  RotateImages(height, width, 1, angle, n, in, out);
}

void RotateImages(int64_t height, int64_t width, int64_t channels, double angle, int64_t n,
                  const float* in, float* out) {
  const ImageTransform transform(height, width, channels);
  transform.Apply(ImageTransform::Similarity(angle, 0.0, 0.0, 1.0), n, in, out);
}

absl::StatusOr<std::unique_ptr<RowSource>> MakeRotatedSource(std::unique_ptr<RowSource> images,
                                                             uint64_t seed) {
  RETURN_IF_ERROR(
      CheckImageShape(images->schema().name, images->schema().input_shape, images->schema().dim));
  return std::unique_ptr<RowSource>(new RotatedSource(std::move(images), seed));
}

absl::StatusOr<Dataset> RotateEachImage(const Dataset& images, uint64_t seed,
                                        std::vector<double>* angles) {
  ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source,
                   MakeRotatedSource(MakeDatasetSource(images), seed));
  ASSIGN_OR_RETURN(Dataset rotated, ReadAllRows(*source));
  if (angles != nullptr) {
    angles->resize(images.rows());
    for (int64_t i = 0; i < images.rows(); ++i) (*angles)[i] = RotationAngle(seed, i);
  }
  return rotated;
}

absl::StatusOr<RotatedSplit> MakeRotatedProtocol(const Dataset& source_train,
                                                 const Dataset& source_test,
                                                 const RotatedOptions& options) {
  RETURN_IF_ERROR(CheckImageShape(source_train.name, source_train.input_shape, source_train.dim()));
  if (options.num_train < 0 || options.num_train > source_train.rows()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rotated protocol: num_train ", options.num_train, " not in [0, ",
                     source_train.rows(), "] (rows of ", source_train.name, ")"));
  }
  RotatedSplit out;
  std::vector<int64_t> order = ShuffledIndices(source_train.rows(), options.seed);
  out.train_rows.assign(order.begin(), order.begin() + options.num_train);
  out.pool_train_rows.assign(order.begin() + options.num_train, order.end());

  if (source_test.dim() != source_train.dim() ||
      source_test.class_names != source_train.class_names ||
      source_test.has_labels() != source_train.has_labels() ||
      source_test.num_targets() != source_train.num_targets()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rotated protocol: ", source_train.name, " and ", source_test.name, " differ in row size (",
        source_train.dim(), " vs ", source_test.dim(), ") or classes"));
  }
  const int64_t remaining = static_cast<int64_t>(out.pool_train_rows.size());
  const int64_t pool_size = remaining + source_test.rows();
  const int64_t num_test = options.num_test == kRest ? pool_size : options.num_test;
  if (num_test < 0 || num_test > pool_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rotated protocol: num_test ", options.num_test, " not in [0, ", pool_size, "] (the ",
        remaining, " unused train rows plus ", source_test.rows(), " test rows)"));
  }
  std::vector<int64_t> pool_order =
      ShuffledIndices(pool_size, Rng::ForStream(options.seed, 1).NextU64());
  out.test_pool_rows.assign(pool_order.begin(), pool_order.begin() + num_test);
  Dataset test;
  test.name = source_train.name;
  test.class_names = source_train.class_names;
  test.input_shape = source_train.input_shape;
  test.x = FloatMatrix::Zeros(num_test, source_train.dim());
  if (source_train.has_labels()) test.labels.resize(num_test);
  if (source_train.has_targets()) test.y = FloatMatrix::Zeros(num_test, source_train.num_targets());
  for (int64_t k = 0; k < num_test; ++k) {
    const int64_t p = out.test_pool_rows[k];
    const Dataset& from = p < remaining ? source_train : source_test;
    const int64_t row = p < remaining ? out.pool_train_rows[p] : p - remaining;
    std::copy_n(from.x.row(row), from.dim(), test.x.mutable_row(k));
    if (from.has_labels()) test.labels[k] = from.labels[row];
    if (from.has_targets()) std::copy_n(from.y.row(row), from.num_targets(), test.y.mutable_row(k));
  }
  ASSIGN_OR_RETURN(Dataset train, SelectRows(source_train, out.train_rows));
  const uint64_t train_seed = Rng::ForStream(options.seed, 2).NextU64();
  const uint64_t test_seed = Rng::ForStream(options.seed, 3).NextU64();
  ASSIGN_OR_RETURN(out.train, RotateEachImage(train, train_seed, &out.train_angles));
  ASSIGN_OR_RETURN(out.test, RotateEachImage(test, test_seed, &out.test_angles));
  out.train.name = source_train.name + "/rotated-train";
  out.test.name = source_train.name + "/rotated-test";
  return out;
}

}  // namespace invariant::train
