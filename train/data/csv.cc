#include "train/data/csv.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/io/byte_stream.h"
#include "core/io/delimited.h"

namespace invariant::train {
namespace {

class CsvSource : public RowSource {
 public:
  static absl::StatusOr<std::unique_ptr<CsvSource>> Open(const std::string& path,
                                                         const CsvOptions& options) {
    std::unique_ptr<CsvSource> source(new CsvSource());
    source->path_ = path;
    source->options_ = options;
    if (path == io::kStdinPath) {
      ASSIGN_OR_RETURN(std::unique_ptr<io::ByteReader> in, io::ByteReader::Open(path));
      ASSIGN_OR_RETURN(source->stdin_data_, io::ReadAll(*in));
    }
    RETURN_IF_ERROR(source->Scan());
    RETURN_IF_ERROR(source->Reset());
    return source;
  }

  const RowSchema& schema() const override { return schema_; }

  absl::Status Reset() override {
    ASSIGN_OR_RETURN(reader_, OpenReader());  // reads the header (checked by Scan)
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    if (max_rows <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("max_rows must be > 0, got ", max_rows));
    }
    int64_t n = 0;
    io::Record record;
    while (n < max_rows) {
      ASSIGN_OR_RETURN(const bool any, reader_->Next(&record));
      if (!any) break;
      int32_t label = 0;
      float target = 0.0f;
      RETURN_IF_ERROR(ParseFields(record, x + n * schema_.dim, &label, &target));
      if (labels != nullptr && schema_.has_labels) labels[n] = label;
      if (targets != nullptr && schema_.num_targets > 0) targets[n] = target;
      ++n;
    }
    return n;
  }

 private:
  CsvSource() = default;

  absl::StatusOr<std::unique_ptr<io::DelimitedReader>> OpenReader() const {
    std::unique_ptr<io::ByteReader> bytes;
    if (path_ == io::kStdinPath) {
      ASSIGN_OR_RETURN(bytes, io::ByteReader::FromString(stdin_data_, io::kStdinName));
    } else {
      ASSIGN_OR_RETURN(bytes, io::ByteReader::Open(path_));
    }
    return io::DelimitedReader::Open(std::move(bytes),
                                     {options_.delimiter, io::HeaderMode::kPresent});
  }

  // Reads the header, checks every row and collects the class names.
  absl::Status Scan() {
    ASSIGN_OR_RETURN(std::unique_ptr<io::DelimitedReader> reader, OpenReader());
    name_ = reader->name();
    if (reader->num_fields() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(name_, ": empty file, expected a header row"));
    }
    header_ = reader->header();
    // A header of numbers is a data row: the real header was most likely
    // written as a comment ("# a,b,c", numpy's savetxt), which is skipped.
    if (std::all_of(header_.begin(), header_.end(), [](const std::string& field) {
          float value = 0;
          std::string error;
          return io::ParseNumber(field, &value, &error);
        })) {
      return reader->Error(
          reader->header_line(),
          absl::StrCat("expected a header row of column names, got numbers only ('",
                       header_.empty() ? "" : header_[0],
                       "', ...): a header line starting with '#' is a comment (write it "
                       "without the '#', e.g. numpy.savetxt(..., comments='')), and "
                       "invariant-train needs one"));
    }
    index_column_ = reader->index_column() ? 0 : -1;
    auto find_column = [&](const std::string& column, const char* role) -> absl::StatusOr<int> {
      if (column.empty()) return -1;
      auto it = std::find(header_.begin(), header_.end(), column);
      if (it == header_.end()) {
        return reader->Error(reader->header_line(),
                             absl::StrCat(role, " column '", column, "' not in the header [",
                                          absl::StrJoin(header_, ", "), "]"));
      }
      return static_cast<int>(it - header_.begin());
    };
    ASSIGN_OR_RETURN(label_index_, find_column(options_.label_column, "label"));
    ASSIGN_OR_RETURN(target_index_, find_column(options_.target_column, "target"));
    if (label_index_ >= 0 && label_index_ == target_index_) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": label and target column are both '", options_.label_column, "'"));
    }
    schema_.name = options_.name.empty() ? path_ : options_.name;
    schema_.column_names.clear();
    for (int i = 0; i < static_cast<int>(header_.size()); ++i) {
      if (i != label_index_ && i != target_index_ && i != index_column_) {
        schema_.column_names.push_back(header_[i]);
      }
    }
    schema_.dim = static_cast<int64_t>(schema_.column_names.size());
    schema_.input_shape = {schema_.dim};
    if (target_index_ >= 0) schema_.target_names = {header_[target_index_]};
    schema_.has_labels = label_index_ >= 0;
    schema_.num_targets = target_index_ >= 0 ? 1 : 0;

    // First pass: label strings (needed before any row is parsed) and checks.
    std::vector<std::string> label_strings;
    std::unordered_map<std::string, int32_t> seen;
    std::vector<float> row(schema_.dim);
    int64_t rows = 0;
    io::Record record;
    while (true) {
      ASSIGN_OR_RETURN(const bool any, reader->Next(&record));
      if (!any) break;
      RETURN_IF_ERROR(ParseFields(record, row.data(), nullptr, nullptr));
      if (label_index_ >= 0 && seen.emplace(record.fields[label_index_], 0).second) {
        label_strings.push_back(record.fields[label_index_]);
      }
      ++rows;
    }
    bool all_integers = true;
    for (const std::string& s : label_strings) {
      int64_t v;
      if (!absl::SimpleAtoi(s, &v)) all_integers = false;
    }
    std::sort(label_strings.begin(), label_strings.end(),
              [all_integers](const std::string& a, const std::string& b) {
                if (!all_integers) return a < b;
                int64_t va = 0, vb = 0;
                (void)absl::SimpleAtoi(a, &va);
                (void)absl::SimpleAtoi(b, &vb);
                return va < vb;
              });
    for (size_t i = 0; i < label_strings.size(); ++i) {
      class_index_[label_strings[i]] = static_cast<int32_t>(i);
    }
    schema_.class_names = label_strings;
    schema_.num_rows = rows;
    return absl::OkStatus();
  }

  // Fills x (dim floats), *label (when label != nullptr) and *target. The
  // reader has checked the field count.
  absl::Status ParseFields(const io::Record& record, float* x, int32_t* label,
                           float* target) const {
    const std::vector<std::string>& fields = record.fields;
    int64_t k = 0;
    for (int c = 0; c < static_cast<int>(fields.size()); ++c) {
      if (c == index_column_) continue;
      if (c == label_index_) {
        if (label != nullptr) {
          auto it = class_index_.find(fields[c]);
          if (it == class_index_.end()) {
            return absl::DataLossError(absl::StrCat(name_, ":", record.line, ": label '", fields[c],
                                                    "' was not in the file when it was opened"));
          }
          *label = it->second;
        }
        continue;
      }
      float v = 0.0f;
      std::string reason;
      if (!io::ParseNumber(fields[c], &v, &reason)) {
        return absl::InvalidArgumentError(absl::StrCat(
            name_, ":", record.line, ": column '", header_[c], "' (field ", c + 1, "): ", reason));
      }
      if (c == target_index_) {
        if (target != nullptr) *target = v;
      } else {
        x[k++] = v;
      }
    }
    return absl::OkStatus();
  }

  std::string path_;
  std::string name_;        // path_, or "<stdin>"
  std::string stdin_data_;  // the input when path_ is "-"
  CsvOptions options_;
  RowSchema schema_;
  std::vector<std::string> header_;
  int label_index_ = -1;
  int target_index_ = -1;
  int index_column_ = -1;  // 0 for pandas' index column
  std::unordered_map<std::string, int32_t> class_index_;
  std::unique_ptr<io::DelimitedReader> reader_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RowSource>> OpenCsvSource(const std::string& path,
                                                         const CsvOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<CsvSource> source, CsvSource::Open(path, options));
  return std::unique_ptr<RowSource>(std::move(source));
}

absl::StatusOr<Dataset> LoadCsv(const std::string& path, const CsvOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source, OpenCsvSource(path, options));
  return ReadAllRows(*source);
}

}  // namespace invariant::train
