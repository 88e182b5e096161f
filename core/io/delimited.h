// delimited.h: CSV / TSV text, read a record at a time. The one field rule
// of invariant-serve: invariant-train (train/data/csv.h) and invariant-client
// (client/cli/rows.h, through core/io/table.h) both read text through here.
//
// Lines: one record per line ('\n', an optional '\r' before it is dropped).
// Blank lines and comment lines (the first non-blank character is '#') are
// skipped but counted, so line numbers in messages are physical, 1-based.
// A quoted field that starts with '#' is data, not a comment.
//
// Fields (RFC 4180 quoting within a line, as pandas reads it):
//   - Unquoted fields are trimmed of surrounding blanks (spaces and tabs,
//     except the delimiter): ` 2.5 ` is "2.5", ` petal ` is "petal".
//   - A field whose first non-blank character is '"' is quoted: its text is
//     everything up to the closing quote, blanks included (`" a b "` is
//     " a b "), a doubled quote "" stands for one ", and a quoted field may
//     hold the delimiter. Blanks around the quotes are dropped; any other
//     text after the closing quote is an error, as is a missing closing
//     quote (a quoted field cannot span lines).
//   - A '"' inside an unquoted field is kept as is.
// Numbers (ParseNumber): the field's text without surrounding blanks is a
// decimal float (optional sign, exponent, "inf"/"nan" refused) that is
// finite within float range; so the quoted `" 2.5 "` is the number 2.5.
//
// Delimiter (options.delimiter == 0): '\t' when the name (without ".gz")
// ends in ".tsv" or ".tab", ',' when it ends in ".csv"; otherwise (stdin,
// other names) the first line that is not blank or a comment (the header,
// when there is one) decides: '\t' when it holds a tab and no comma, ','
// otherwise.
//
// Header (HeaderMode::kAuto): the first record is a header when EVERY field
// is non-numeric, except that the first may be empty; a lone empty field is
// not a header. kPresent / kAbsent say so explicitly (invariant-train always
// uses kPresent: it names its label and target columns by header name).
// Index column: when a header's first name is empty and it has more than one
// field, the first column is the index pandas' DataFrame.to_csv() writes and
// is not data (index_column() is true; the caller skips field 0).
//
// Every record has as many fields as the first record (header or data).
//
// Errors are INVALID_ARGUMENT "NAME:LINE: reason" (NAME the path or
// "<stdin>"), e.g. "rows.csv:3: ragged row: expected 16 fields as on line 2,
// got 15", "rows.csv:4: field 2: unterminated quoted field"; reading errors
// come from ByteReader. Not thread-safe; use one reader per thread.
#ifndef INVARIANT_CORE_IO_DELIMITED_H_
#define INVARIANT_CORE_IO_DELIMITED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/io/byte_stream.h"

namespace invariant::io {

enum class HeaderMode { kAuto, kPresent, kAbsent };

struct DelimitedOptions {
  char delimiter = 0;  // 0: by name, then by the first record's line (see above)
  HeaderMode header = HeaderMode::kAuto;
};

// One data record: its physical line number and its fields (all of them,
// the index column included, so field i is column i + 1 in messages).
struct Record {
  int64_t line = 0;
  std::vector<std::string> fields;
};

// Splits `line` by the field rule. On a malformed quote returns false and
// sets `*error` to "field N: reason".
bool SplitFields(absl::string_view line, char delimiter, std::vector<std::string>* fields,
                 std::string* error);

// Parses one field as a number (see above); false with `*error` set to
// "expected a number, got 'x'" or "expected a finite number within float
// range, got 'x'".
bool ParseNumber(absl::string_view field, float* value, std::string* error);

// The delimiter for a file named `name` whose first record's line is
// `first_line` (see above).
char DetectDelimiter(const std::string& name, absl::string_view first_line);

class DelimitedReader {
 public:
  // Reads up to the first record (to settle the delimiter and the header).
  // An input without any record opens with num_fields() == 0.
  static absl::StatusOr<std::unique_ptr<DelimitedReader>> Open(std::unique_ptr<ByteReader> bytes,
                                                               const DelimitedOptions& options);

  const std::string& name() const { return bytes_->path(); }
  char delimiter() const { return delimiter_; }
  // The header's fields (index column included), or empty without one.
  const std::vector<std::string>& header() const { return header_; }
  bool has_header() const { return has_header_; }
  int64_t header_line() const { return header_line_; }
  // Fields per record, and the line of the first record.
  int64_t num_fields() const { return num_fields_; }
  int64_t first_line() const { return first_line_; }
  // True when field 0 is pandas' index column.
  bool index_column() const { return index_column_; }

  // The next data record; false at the end.
  absl::StatusOr<bool> Next(Record* record);

  // "NAME:LINE: reason" as INVALID_ARGUMENT.
  absl::Status Error(int64_t line, absl::string_view reason) const;

 private:
  DelimitedReader() = default;
  // The next non-blank, non-comment line (without '\r'); false at the end.
  absl::StatusOr<bool> NextLine(std::string* line, int64_t* line_number);
  absl::StatusOr<bool> ReadRecord(Record* record);

  std::unique_ptr<ByteReader> bytes_;
  std::string buffer_;  // read ahead, from pos_
  size_t pos_ = 0;
  bool eof_ = false;
  int64_t line_number_ = 0;
  char delimiter_ = ',';
  std::vector<std::string> header_;
  bool has_header_ = false;
  int64_t header_line_ = 0;
  int64_t num_fields_ = 0;
  int64_t first_line_ = 0;
  bool index_column_ = false;
  bool pending_ = false;  // first_ holds the first data record
  Record first_;
};

}  // namespace invariant::io

#endif  // INVARIANT_CORE_IO_DELIMITED_H_
