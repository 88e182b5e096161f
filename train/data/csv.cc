#include "train/data/csv.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <unordered_map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/status_macros.h"

namespace invariant::train {
namespace {

std::vector<std::string> SplitFields(const std::string& line, char delimiter) {
  std::vector<std::string> fields = absl::StrSplit(line, delimiter);
  for (std::string& f : fields) {
    absl::StripAsciiWhitespace(&f);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
  }
  return fields;
}

// Reads the next non-blank line; false at the end. Counts lines in *line_no.
bool NextLine(std::ifstream& in, std::string& line, int64_t* line_no) {
  while (std::getline(in, line)) {
    ++*line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!absl::StripAsciiWhitespace(line).empty()) return true;
  }
  return false;
}

class CsvSource : public RowSource {
 public:
  static absl::StatusOr<std::unique_ptr<CsvSource>> Open(const std::string& path,
                                                         const CsvOptions& options) {
    std::unique_ptr<CsvSource> source(new CsvSource());
    source->path_ = path;
    source->options_ = options;
    RETURN_IF_ERROR(source->Scan());
    RETURN_IF_ERROR(source->Reset());
    return source;
  }

  const RowSchema& schema() const override { return schema_; }

  absl::Status Reset() override {
    in_ = std::ifstream(path_);
    if (!in_) return absl::NotFoundError(absl::StrCat(path_, ": cannot open: ", strerror(errno)));
    line_no_ = 0;
    std::string header;
    NextLine(in_, header, &line_no_);  // checked by Scan()
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    if (max_rows <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("max_rows must be > 0, got ", max_rows));
    }
    int64_t n = 0;
    std::string line;
    while (n < max_rows && NextLine(in_, line, &line_no_)) {
      int32_t label = 0;
      float target = 0.0f;
      RETURN_IF_ERROR(ParseRow(line, line_no_, x + n * schema_.dim, &label, &target));
      if (labels != nullptr && schema_.has_labels) labels[n] = label;
      if (targets != nullptr && schema_.num_targets > 0) targets[n] = target;
      ++n;
    }
    return n;
  }

 private:
  CsvSource() = default;

  // Reads the header, checks every row and collects the class names.
  absl::Status Scan() {
    std::ifstream in(path_);
    if (!in) return absl::NotFoundError(absl::StrCat(path_, ": cannot open: ", strerror(errno)));
    int64_t line_no = 0;
    std::string line;
    if (!NextLine(in, line, &line_no)) {
      return absl::InvalidArgumentError(absl::StrCat(path_, ": empty file, expected a header row"));
    }
    header_ = SplitFields(line, options_.delimiter);
    auto find_column = [&](const std::string& column, const char* role) -> absl::StatusOr<int> {
      if (column.empty()) return -1;
      auto it = std::find(header_.begin(), header_.end(), column);
      if (it == header_.end()) {
        return absl::InvalidArgumentError(absl::StrCat(path_, ":", line_no, ": ", role, " column '",
                                                       column, "' not in the header [",
                                                       absl::StrJoin(header_, ", "), "]"));
      }
      return static_cast<int>(it - header_.begin());
    };
    ASSIGN_OR_RETURN(label_index_, find_column(options_.label_column, "label"));
    ASSIGN_OR_RETURN(target_index_, find_column(options_.target_column, "target"));
    if (label_index_ >= 0 && label_index_ == target_index_) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": label and target column are both '", options_.label_column, "'"));
    }
    schema_.name = options_.name.empty() ? path_ : options_.name;
    schema_.dim = static_cast<int64_t>(header_.size()) - (label_index_ >= 0 ? 1 : 0) -
                  (target_index_ >= 0 ? 1 : 0);
    schema_.input_shape = {schema_.dim};
    schema_.column_names.clear();
    for (int i = 0; i < static_cast<int>(header_.size()); ++i) {
      if (i != label_index_ && i != target_index_) schema_.column_names.push_back(header_[i]);
    }
    if (target_index_ >= 0) schema_.target_names = {header_[target_index_]};
    schema_.has_labels = label_index_ >= 0;
    schema_.num_targets = target_index_ >= 0 ? 1 : 0;

    // First pass: label strings (needed before any row is parsed) and checks.
    std::vector<std::string> label_strings;
    std::unordered_map<std::string, int32_t> seen;
    std::vector<float> row(schema_.dim);
    int64_t rows = 0;
    while (NextLine(in, line, &line_no)) {
      const std::vector<std::string> fields = SplitFields(line, options_.delimiter);
      RETURN_IF_ERROR(ParseFields(fields, line_no, row.data(), nullptr, nullptr));
      if (label_index_ >= 0 && seen.emplace(fields[label_index_], 0).second) {
        label_strings.push_back(fields[label_index_]);
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

  absl::Status ParseRow(const std::string& line, int64_t line_no, float* x, int32_t* label,
                        float* target) {
    return ParseFields(SplitFields(line, options_.delimiter), line_no, x, label, target);
  }

  // Fills x (dim floats), *label (when label != nullptr) and *target.
  absl::Status ParseFields(const std::vector<std::string>& fields, int64_t line_no, float* x,
                           int32_t* label, float* target) const {
    if (fields.size() != header_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ":", line_no, ": expected ", header_.size(),
                       " fields as in the header, got ", fields.size()));
    }
    int64_t k = 0;
    for (int c = 0; c < static_cast<int>(fields.size()); ++c) {
      if (c == label_index_) {
        if (label != nullptr) {
          auto it = class_index_.find(fields[c]);
          if (it == class_index_.end()) {
            return absl::DataLossError(absl::StrCat(path_, ":", line_no, ": label '", fields[c],
                                                    "' was not in the file when it was opened"));
          }
          *label = it->second;
        }
        continue;
      }
      float v = 0.0f;
      if (!absl::SimpleAtof(fields[c], &v) || !std::isfinite(v)) {
        return absl::InvalidArgumentError(absl::StrCat(path_, ":", line_no, ": column '",
                                                       header_[c], "' (field ", c + 1, "): '",
                                                       fields[c], "' is not a finite number"));
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
  CsvOptions options_;
  RowSchema schema_;
  std::vector<std::string> header_;
  int label_index_ = -1;
  int target_index_ = -1;
  std::unordered_map<std::string, int32_t> class_index_;
  std::ifstream in_;
  int64_t line_no_ = 0;
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
