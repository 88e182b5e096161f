#include "train/data/row_source.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace invariant::train {
namespace {

class DatasetSource : public RowSource {
 public:
  explicit DatasetSource(Dataset data) : data_(std::move(data)), schema_(SchemaOf(data_)) {}

  const RowSchema& schema() const override { return schema_; }

  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    if (max_rows <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("max_rows must be > 0, got ", max_rows));
    }
    const int64_t n = std::min(max_rows, data_.rows() - cursor_);
    if (n <= 0) return 0;
    std::memcpy(x, data_.x.row(cursor_), sizeof(float) * n * data_.dim());
    if (labels != nullptr && data_.has_labels()) {
      std::copy_n(data_.labels.begin() + cursor_, n, labels);
    }
    if (targets != nullptr && data_.has_targets()) {
      std::memcpy(targets, data_.y.row(cursor_), sizeof(float) * n * data_.num_targets());
    }
    cursor_ += n;
    return n;
  }

  absl::Status Reset() override {
    cursor_ = 0;
    return absl::OkStatus();
  }

 private:
  Dataset data_;
  RowSchema schema_;
  int64_t cursor_ = 0;
};

class GeneratedSource : public RowSource {
 public:
  GeneratedSource(RowSchema schema, RowGenerator generate)
      : schema_(std::move(schema)), generate_(std::move(generate)) {}

  const RowSchema& schema() const override { return schema_; }

  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    if (max_rows <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("max_rows must be > 0, got ", max_rows));
    }
    const int64_t n = std::min(max_rows, schema_.num_rows - cursor_);
    if (n <= 0) return 0;
    target_scratch_.resize(static_cast<size_t>(schema_.num_targets));
    for (int64_t k = 0; k < n; ++k) {
      int32_t label = 0;
      float* row_targets =
          targets != nullptr ? targets + k * schema_.num_targets : target_scratch_.data();
      generate_(cursor_ + k, x + k * schema_.dim, &label, row_targets);
      if (labels != nullptr && schema_.has_labels) labels[k] = label;
    }
    cursor_ += n;
    return n;
  }

  absl::Status Reset() override {
    cursor_ = 0;
    return absl::OkStatus();
  }

 private:
  RowSchema schema_;
  RowGenerator generate_;
  std::vector<float> target_scratch_;
  int64_t cursor_ = 0;
};

}  // namespace

std::unique_ptr<RowSource> MakeGeneratedSource(RowSchema schema, RowGenerator generate) {
  return std::make_unique<GeneratedSource>(std::move(schema), std::move(generate));
}

RowSchema SchemaOf(const Dataset& data) {
  RowSchema s;
  s.name = data.name;
  s.dim = data.dim();
  s.has_labels = data.has_labels();
  s.class_names = data.class_names;
  s.num_targets = data.num_targets();
  s.input_shape = data.input_shape;
  s.num_rows = data.rows();
  s.groups = data.groups;
  return s;
}

std::unique_ptr<RowSource> MakeDatasetSource(Dataset data) {
  return std::make_unique<DatasetSource>(std::move(data));
}

// ReadAllRows allocates with the rows actually read: a schema promising up to
// this many floats is allocated up front, a larger one (a corrupt header,
// say) only as its rows arrive, in blocks of at most this many floats; fewer
// rows than promised is DATA_LOSS.
constexpr int64_t kMaxPreallocatedValues = int64_t{1} << 26;  // 256 MiB of floats

absl::StatusOr<Dataset> ReadAllRows(RowSource& source, int64_t block_rows) {
  if (block_rows <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("block_rows must be > 0, got ", block_rows));
  }
  const RowSchema& s = source.schema();
  Dataset data;
  data.name = s.name;
  data.class_names = s.class_names;
  data.input_shape = s.input_shape;
  const auto promised_too_few = [&s](int64_t rows) {
    return absl::DataLossError(
        absl::StrCat(s.name, ": ended after ", rows, " rows, its schema promised ", s.num_rows));
  };
  const int64_t row_values = std::max<int64_t>(1, s.dim + s.num_targets);
  if (s.num_rows >= 0 && s.num_rows <= kMaxPreallocatedValues / row_values) {
    // Known, modest size: read straight into the final arrays.
    data.x = FloatMatrix::Zeros(s.num_rows, s.dim);
    if (s.has_labels) data.labels.resize(s.num_rows);
    if (s.num_targets > 0) data.y = FloatMatrix::Zeros(s.num_rows, s.num_targets);
    int64_t rows = 0;
    while (rows < s.num_rows) {
      ASSIGN_OR_RETURN(
          const int64_t got,
          source.Next(std::min(block_rows, s.num_rows - rows), data.x.mutable_row(rows),
                      s.has_labels ? data.labels.data() + rows : nullptr,
                      s.num_targets > 0 ? data.y.mutable_row(rows) : nullptr));
      if (got == 0) return promised_too_few(rows);
      rows += got;
    }
    if (static_cast<int64_t>(s.groups.size()) == rows) data.groups = s.groups;
    return data;
  }
  // Unknown or very large size: grow with the rows read, in blocks doubling
  // from 16 rows up to block_rows and at most kMaxPreallocatedValues floats.
  const int64_t max_block =
      std::min(block_rows, std::max<int64_t>(1, kMaxPreallocatedValues / row_values));
  int64_t block = std::min<int64_t>(max_block, 16);
  std::vector<float> x;
  std::vector<int32_t> labels;
  std::vector<float> targets;
  int64_t rows = 0;
  while (true) {
    x.resize(static_cast<size_t>((rows + block) * s.dim));
    if (s.has_labels) labels.resize(rows + block);
    targets.resize(static_cast<size_t>((rows + block) * s.num_targets));
    ASSIGN_OR_RETURN(
        const int64_t got,
        source.Next(block, x.data() + rows * s.dim, s.has_labels ? labels.data() + rows : nullptr,
                    s.num_targets > 0 ? targets.data() + rows * s.num_targets : nullptr));
    rows += got;
    if (got == 0) break;
    block = std::min(2 * block, max_block);
  }
  if (s.num_rows >= 0 && rows != s.num_rows) return promised_too_few(rows);
  data.x = FloatMatrix::Zeros(rows, s.dim);
  std::memcpy(data.x.mutable_data(), x.data(), sizeof(float) * rows * s.dim);
  if (s.has_labels) {
    labels.resize(rows);
    data.labels = std::move(labels);
  }
  if (s.num_targets > 0) {
    data.y = FloatMatrix::Zeros(rows, s.num_targets);
    std::memcpy(data.y.mutable_data(), targets.data(), sizeof(float) * rows * s.num_targets);
  }
  if (static_cast<int64_t>(s.groups.size()) == rows) data.groups = s.groups;
  return data;
}

}  // namespace invariant::train
