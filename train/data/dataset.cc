#include "train/data/dataset.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace invariant::train {

absl::Status ValidateDataset(const Dataset& data) {
  const std::string who = data.name.empty() ? "dataset" : data.name;
  if (data.has_labels()) {
    if (static_cast<int64_t>(data.labels.size()) != data.rows()) {
      return absl::InvalidArgumentError(absl::StrCat(who, ": labels has ", data.labels.size(),
                                                     " entries, expected one per row (",
                                                     data.rows(), ")"));
    }
    for (size_t i = 0; i < data.labels.size(); ++i) {
      if (data.labels[i] < 0 || data.labels[i] >= data.num_classes()) {
        return absl::InvalidArgumentError(absl::StrCat(who, ": label of row ", i, " is ",
                                                       data.labels[i], ", expected [0, ",
                                                       data.num_classes(), ")"));
      }
    }
  }
  if (data.has_targets() && data.y.rows() != data.rows()) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": y has ", data.y.rows(), " rows, expected ", data.rows()));
  }
  if (data.has_groups() && static_cast<int64_t>(data.groups.size()) != data.rows()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": groups has ", data.groups.size(),
                                                   " entries, expected one per row (", data.rows(),
                                                   ")"));
  }
  int64_t product = 1;
  for (int64_t s : data.input_shape) product *= s;
  if (!data.input_shape.empty() && product != data.dim()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": input_shape [",
                                                   absl::StrJoin(data.input_shape, ", "), "] has ",
                                                   product, " elements, rows have ", data.dim()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Dataset> SelectRows(const Dataset& data, absl::Span<const int64_t> indices) {
  const int64_t n = static_cast<int64_t>(indices.size());
  Dataset out;
  out.name = data.name;
  out.class_names = data.class_names;
  out.input_shape = data.input_shape;
  out.x = FloatMatrix::Zeros(n, data.dim());
  if (data.has_targets()) out.y = FloatMatrix::Zeros(n, data.num_targets());
  if (data.has_labels()) out.labels.resize(n);
  if (data.has_groups()) out.groups.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = indices[k];
    if (i < 0 || i >= data.rows()) {
      return absl::OutOfRangeError(absl::StrCat(data.name, ": row index ", i, " (position ", k,
                                                ") outside [0, ", data.rows(), ")"));
    }
    std::memcpy(out.x.mutable_row(k), data.x.row(i), sizeof(float) * data.dim());
    if (data.has_targets()) {
      std::memcpy(out.y.mutable_row(k), data.y.row(i), sizeof(float) * data.num_targets());
    }
    if (data.has_labels()) out.labels[k] = data.labels[i];
    if (data.has_groups()) out.groups[k] = data.groups[i];
  }
  return out;
}

absl::StatusOr<Dataset> ConcatRows(const Dataset& a, const Dataset& b) {
  auto mismatch = [&](const std::string& what, const std::string& va, const std::string& vb) {
    return absl::InvalidArgumentError(absl::StrCat("cannot concatenate ", a.name, " and ", b.name,
                                                   ": ", what, " differ (", va, " vs ", vb, ")"));
  };
  if (a.dim() != b.dim()) return mismatch("dims", absl::StrCat(a.dim()), absl::StrCat(b.dim()));
  if (a.has_labels() != b.has_labels()) {
    return mismatch("label presence", a.has_labels() ? "labels" : "none",
                    b.has_labels() ? "labels" : "none");
  }
  if (a.class_names != b.class_names) {
    return mismatch("class names", absl::StrJoin(a.class_names, ","),
                    absl::StrJoin(b.class_names, ","));
  }
  if (a.num_targets() != b.num_targets()) {
    return mismatch("target counts", absl::StrCat(a.num_targets()), absl::StrCat(b.num_targets()));
  }
  if (a.has_groups() != b.has_groups()) {
    return mismatch("group presence", a.has_groups() ? "groups" : "none",
                    b.has_groups() ? "groups" : "none");
  }
  Dataset out;
  out.name = a.name;
  out.class_names = a.class_names;
  out.input_shape = a.input_shape;
  const int64_t n = a.rows() + b.rows();
  out.x = FloatMatrix::Zeros(n, a.dim());
  std::memcpy(out.x.mutable_data(), a.x.data(), a.x.bytes());
  std::memcpy(out.x.mutable_row(a.rows()), b.x.data(), b.x.bytes());
  if (a.has_targets()) {
    out.y = FloatMatrix::Zeros(n, a.num_targets());
    std::memcpy(out.y.mutable_data(), a.y.data(), a.y.bytes());
    std::memcpy(out.y.mutable_row(a.rows()), b.y.data(), b.y.bytes());
  }
  out.labels = a.labels;
  out.labels.insert(out.labels.end(), b.labels.begin(), b.labels.end());
  out.groups = a.groups;
  out.groups.insert(out.groups.end(), b.groups.begin(), b.groups.end());
  return out;
}

std::vector<int64_t> ClassCounts(const Dataset& data) {
  std::vector<int64_t> counts(data.class_names.size(), 0);
  for (int32_t l : data.labels) {
    if (l >= 0 && l < data.num_classes()) ++counts[l];
  }
  return counts;
}

}  // namespace invariant::train
