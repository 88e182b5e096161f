// rows.h: input rows for invariant-client (and invariant-loadgen --input),
// the CLI's names for core/io/table.h, where the rules live: CSV / TSV with
// the one field rule of core/io/delimited.h (quoted fields keep their
// blanks, unquoted fields are trimmed, '#' lines are comments, a header is
// detected, pandas' index column is skipped), IDX (core/io/idx.h), gzip by
// magic bytes and stdin (path "-", core/io/byte_stream.h). invariant-train
// reads its CSV and IDX files through the same module, so a file that
// trains is read the same way at prediction time.
//
// Errors are INVALID_ARGUMENT (NOT_FOUND for a missing file, DATA_LOSS for
// corrupt or truncated gzip) with a message "NAME:LINE: reason" for text,
// "NAME: reason" for IDX, where NAME is the path or "<stdin>"; e.g.
//   rows.csv:3: ragged row: expected 16 fields as on line 2, got 15
//   rows.csv:4: field 2: expected a number, got 'abc'
#ifndef INVARIANT_CLIENT_CLI_ROWS_H_
#define INVARIANT_CLIENT_CLI_ROWS_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/io/delimited.h"
#include "core/io/table.h"

namespace invariant::cli {

// A batch of rows, row-major (num_rows, dim, values, column_names, ids,
// id_name).
using RowTable = io::Table;
using InputFormat = io::InputFormat;  // kAuto, kDelimited, kIdx
using HeaderMode = io::HeaderMode;    // kAuto, kPresent, kAbsent
// format, delimiter (0 = detected), header, ignore_columns and id_column
// (header names or 1-based column numbers).
using RowReadOptions = io::TableOptions;

// Reads `path` ("-" = stdin).
inline absl::StatusOr<RowTable> ReadRows(const std::string& path,
                                         const RowReadOptions& options = {}) {
  return io::ReadTable(path, options);
}

// Parses `data` (gzip-compressed or not) named `name` in messages.
inline absl::StatusOr<RowTable> ParseRows(const std::string& data, const std::string& name,
                                          const RowReadOptions& options = {}) {
  return io::ParseTable(data, name, options);
}

// Parses one numeric field; false (and `*error` set) when it is not a
// finite float ("expected a number, got 'x'" / "expected a finite number ...").
inline bool ParseNumber(const std::string& field, float* value, std::string* error) {
  return io::ParseNumber(field, value, error);
}

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_ROWS_H_
