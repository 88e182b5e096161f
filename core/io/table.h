// table.h: a whole input of rows as one float table, the format detected:
// what invariant-client and invariant-loadgen read (client/cli/rows.h is
// their name for it).
//
// The input is a file, stdin (path "-") or bytes in memory, CSV / TSV
// (core/io/delimited.h: the field rule, comments, header, pandas' index
// column) or IDX (core/io/idx.h), either possibly gzip-compressed (detected
// by the gzip magic bytes, core/io/byte_stream.h).
//
// Format (InputFormat::kAuto): IDX when the (decompressed) data starts with
// an IDX magic number or the name (without ".gz") ends in ".idx" or contains
// "-idx"; delimited text otherwise, its delimiter chosen as delimited.h says
// unless given.
//
// Delimited text: columns are named by header name or by 1-BASED number
// (1 = the first column, as in cut/awk): ignore_columns are skipped (e.g. a
// label column of a training CSV); id_column is carried to the output as
// text (Table::ids) and not a value; pandas' index column is skipped. Every
// other field must be a number (delimited.h's ParseNumber).
//
// IDX: row i is the i-th slice along the first dimension, flattened;
// unsigned bytes are scaled by 1/255, other types are taken as is.
//
// Errors are INVALID_ARGUMENT (NOT_FOUND for a missing file, DATA_LOSS for
// corrupt gzip) with a message "NAME:LINE: reason" for text, "NAME: reason"
// for IDX, where NAME is the path or "<stdin>"; e.g.
//   rows.csv:3: ragged row: expected 16 fields as on line 2, got 15
//   rows.csv:4: field 2 ('x1'): expected a number, got 'abc'
// Thread-compatible (stdin is read by one caller at a time).
#ifndef INVARIANT_CORE_IO_TABLE_H_
#define INVARIANT_CORE_IO_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/delimited.h"

namespace invariant::io {

// A batch of rows, row-major.
struct Table {
  int64_t num_rows = 0;
  int64_t dim = 0;
  std::vector<float> values;              // num_rows · dim
  std::vector<std::string> column_names;  // kept columns, from the header; empty without one
  std::vector<std::string> ids;           // the id column's field per row (with id_column)
  std::string id_name;                    // the id column's header name, or "id"
};

enum class InputFormat { kAuto, kDelimited, kIdx };

struct TableOptions {
  InputFormat format = InputFormat::kAuto;
  char delimiter = 0;  // 0 = detected (delimited.h)
  HeaderMode header = HeaderMode::kAuto;
  // Header names or 1-based column numbers of delimited columns to skip.
  std::vector<std::string> ignore_columns;
  // Header name or 1-based number of a delimited column carried to the
  // output (Table::ids); empty = none. An error for IDX input.
  std::string id_column;
};

// Reads `path` ("-" = stdin).
absl::StatusOr<Table> ReadTable(const std::string& path, const TableOptions& options = {});

// Parses `data` (gzip-compressed or not) named `name` in messages.
absl::StatusOr<Table> ParseTable(std::string data, const std::string& name,
                                 const TableOptions& options = {});

}  // namespace invariant::io

#endif  // INVARIANT_CORE_IO_TABLE_H_
