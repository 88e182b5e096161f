// dataset.h: a data set held in memory, and row selection over it.
//
// A Dataset is n examples of d floats (`x`, row-major n × d) with, for
// classification, one class index per row (`labels`, values in
// [0, class_names.size())) and, for regression, T targets per row (`y`,
// n × T). Either, both or neither of labels and y may be present; an absent
// one is empty. `input_shape` is the shape one row is a flattening of
// (e.g. {28, 28} for an image, {5, 8} for an Xperm sequence, {23, 23} for a
// Coulomb matrix); its product equals d. Arrays share storage on copy and are
// treated as immutable once built.
//
// Larger-than-memory sets are read through a RowSource (row_source.h)
// instead; ReadAllRows() turns a source into a Dataset.
#ifndef INVARIANT_TRAIN_DATA_DATASET_H_
#define INVARIANT_TRAIN_DATA_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/tensor.h"

namespace invariant::train {

struct Dataset {
  std::string name;                      // e.g. "fashion-mnist/train", "xperm"
  FloatMatrix x;                         // n × d inputs
  std::vector<int32_t> labels;           // n class indices, or empty
  FloatMatrix y;                         // n × T regression targets, or empty
  std::vector<std::string> class_names;  // one per class when labels are present
  std::vector<int64_t> input_shape;      // product == dim(); {dim()} when flat
  std::vector<std::string> groups;       // one per row, or empty

  int64_t rows() const { return x.rows(); }
  int64_t dim() const { return x.cols(); }
  bool has_labels() const { return !labels.empty(); }
  bool has_targets() const { return !y.empty(); }
  bool has_groups() const { return !groups.empty(); }
  int64_t num_targets() const { return y.cols(); }
  int32_t num_classes() const { return static_cast<int32_t>(class_names.size()); }
};

// Checks the invariants above: label count and range, target row count,
// group count, input_shape product. Errors name the data set, the field, expected and got.
absl::Status ValidateDataset(const Dataset& data);

// A new Dataset holding rows `indices` of `data` in that order (repeats are
// allowed). OUT_OF_RANGE names the first index outside [0, rows()).
absl::StatusOr<Dataset> SelectRows(const Dataset& data, absl::Span<const int64_t> indices);

// Rows of `a` followed by rows of `b`; dims, target counts, class names,
// label presence and group presence must agree (INVALID_ARGUMENT naming the mismatch).
absl::StatusOr<Dataset> ConcatRows(const Dataset& a, const Dataset& b);

// Number of rows of each class: counts[c] for c in [0, num_classes()).
std::vector<int64_t> ClassCounts(const Dataset& data);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_DATASET_H_
