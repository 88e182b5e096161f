#include "core/io/delimited.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace invariant::io {
namespace {

constexpr int64_t kChunkBytes = int64_t{1} << 16;

bool IsBlank(char c, char delimiter) { return (c == ' ' || c == '\t') && c != delimiter; }

absl::string_view TrimBlanks(absl::string_view s, char delimiter) {
  while (!s.empty() && IsBlank(s.front(), delimiter)) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back(), delimiter)) s.remove_suffix(1);
  return s;
}

// Blank or comment: skipped, but counted.
bool Skipped(absl::string_view line) {
  const absl::string_view s = absl::StripLeadingAsciiWhitespace(line);
  return s.empty() || s.front() == '#';
}

bool IsNumber(const std::string& field) {
  float unused_value;
  std::string unused_error;
  return ParseNumber(field, &unused_value, &unused_error);
}

}  // namespace

bool SplitFields(absl::string_view line, char delimiter, std::vector<std::string>* fields,
                 std::string* error) {
  fields->clear();
  size_t i = 0;
  while (true) {
    const size_t number = fields->size() + 1;
    while (i < line.size() && IsBlank(line[i], delimiter)) ++i;
    if (i < line.size() && line[i] == '"') {
      std::string text;
      ++i;
      while (true) {
        if (i >= line.size()) {
          *error = absl::StrCat("field ", number, ": unterminated quoted field");
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            text.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        text.push_back(line[i++]);
      }
      while (i < line.size() && IsBlank(line[i], delimiter)) ++i;
      if (i < line.size() && line[i] != delimiter) {
        *error = absl::StrCat("field ", number, ": text after the closing quote");
        return false;
      }
      fields->push_back(std::move(text));
    } else {
      const size_t end = std::min(line.find(delimiter, i), line.size());
      fields->emplace_back(TrimBlanks(line.substr(i, end - i), delimiter));
      i = end;
    }
    if (i >= line.size()) return true;
    ++i;  // the delimiter
  }
}

bool ParseNumber(absl::string_view field, float* value, std::string* error) {
  absl::string_view s = absl::StripAsciiWhitespace(field);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  float v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || end != s.data() + s.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    *error = absl::StrCat("expected a number, got '", field, "'");
    return false;
  }
  if (ec == std::errc::result_out_of_range || !std::isfinite(v)) {
    *error = absl::StrCat("expected a finite number within float range, got '", field, "'");
    return false;
  }
  *value = v;
  return true;
}

char DetectDelimiter(const std::string& name, absl::string_view first_line) {
  const absl::string_view base =
      absl::EndsWith(name, ".gz") ? absl::string_view(name).substr(0, name.size() - 3) : name;
  if (absl::EndsWith(base, ".tsv") || absl::EndsWith(base, ".tab")) return '\t';
  if (absl::EndsWith(base, ".csv")) return ',';
  return absl::StrContains(first_line, '\t') && !absl::StrContains(first_line, ',') ? '\t' : ',';
}

absl::StatusOr<std::unique_ptr<DelimitedReader>> DelimitedReader::Open(
    std::unique_ptr<ByteReader> bytes, const DelimitedOptions& options) {
  std::unique_ptr<DelimitedReader> reader(new DelimitedReader());
  reader->bytes_ = std::move(bytes);
  std::string line;
  int64_t line_number = 0;
  ASSIGN_OR_RETURN(const bool any, reader->NextLine(&line, &line_number));
  if (!any) return reader;
  reader->delimiter_ =
      options.delimiter != 0 ? options.delimiter : DetectDelimiter(reader->name(), line);
  std::vector<std::string> fields;
  std::string error;
  if (!SplitFields(line, reader->delimiter_, &fields, &error)) {
    return reader->Error(line_number, error);
  }
  reader->num_fields_ = static_cast<int64_t>(fields.size());
  reader->first_line_ = line_number;
  bool header = options.header == HeaderMode::kPresent;
  if (options.header == HeaderMode::kAuto) {
    header = !(fields.size() == 1 && fields[0].empty());
    for (size_t i = 0; i < fields.size(); ++i) {
      // An empty first name is pandas' index column; any other empty field is data.
      if (IsNumber(fields[i]) || (fields[i].empty() && i > 0)) header = false;
    }
  }
  if (header) {
    reader->has_header_ = true;
    reader->header_line_ = line_number;
    reader->index_column_ = fields.size() > 1 && fields[0].empty();
    reader->header_ = std::move(fields);
  } else {
    reader->pending_ = true;
    reader->first_.line = line_number;
    reader->first_.fields = std::move(fields);
  }
  return reader;
}

absl::Status DelimitedReader::Error(int64_t line, absl::string_view reason) const {
  return absl::InvalidArgumentError(absl::StrCat(name(), ":", line, ": ", reason));
}

absl::StatusOr<bool> DelimitedReader::NextLine(std::string* line, int64_t* line_number) {
  while (true) {
    size_t end = buffer_.find('\n', pos_);
    while (end == std::string::npos && !eof_) {
      buffer_.erase(0, pos_);
      pos_ = 0;
      const size_t old = buffer_.size();
      buffer_.resize(old + static_cast<size_t>(kChunkBytes));
      ASSIGN_OR_RETURN(const int64_t got, bytes_->Read(buffer_.data() + old, kChunkBytes));
      buffer_.resize(old + static_cast<size_t>(got));
      if (got < kChunkBytes) eof_ = true;
      end = buffer_.find('\n', old);
    }
    if (end == std::string::npos) {
      if (pos_ >= buffer_.size()) return false;
      end = buffer_.size();  // the last line has no '\n'
    }
    absl::string_view text(buffer_.data() + pos_, end - pos_);
    pos_ = std::min(end + 1, buffer_.size());
    ++line_number_;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (Skipped(text)) continue;
    *line = std::string(text);
    *line_number = line_number_;
    return true;
  }
}

absl::StatusOr<bool> DelimitedReader::ReadRecord(Record* record) {
  std::string line;
  ASSIGN_OR_RETURN(const bool any, NextLine(&line, &record->line));
  if (!any) return false;
  std::string error;
  if (!SplitFields(line, delimiter_, &record->fields, &error)) return Error(record->line, error);
  return true;
}

absl::StatusOr<bool> DelimitedReader::Next(Record* record) {
  if (pending_) {
    pending_ = false;
    *record = std::move(first_);
  } else {
    ASSIGN_OR_RETURN(const bool any, ReadRecord(record));
    if (!any) return false;
  }
  if (static_cast<int64_t>(record->fields.size()) != num_fields_) {
    return Error(record->line,
                 absl::StrCat("ragged row: expected ", num_fields_, " fields as on line ",
                              first_line_, ", got ", record->fields.size()));
  }
  return true;
}

}  // namespace invariant::io
