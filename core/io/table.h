// table.h: a whole input of rows as one float table: what invariant-client
// and invariant-loadgen --input read (client/cli/rows.h names it for them).
//
// Rows come from a delimited text file (CSV or TSV) or an IDX file, either
// possibly gzip-compressed (detected by the gzip magic bytes), or from stdin
// (path "-"). Format choice (InputFormat::kAuto): IDX when the data starts
// with an IDX magic number (0x00 0x00, a type byte 0x08/0x09/0x0B/0x0C/0x0D/
// 0x0E, then 1..4 dims) or the name ends in ".idx" / contains "-idx"; TSV when
// the name ends in ".tsv" or ".tab", CSV when it ends in ".csv" (".gz"
// ignored); otherwise (stdin, other names) the first data line decides: TSV
// when it holds a tab and no comma, CSV otherwise. An explicit delimiter
// overrides all of this.
//
// Delimited text: one row per line; blank lines and lines starting with '#'
// are skipped but still counted, so line numbers are physical (1-based) line
// numbers. Fields are trimmed of blanks and of one pair of surrounding double
// quotes; quoted delimiters are not supported. A header line is recognised
// (HeaderMode::kAuto) when EVERY field of the first row is non-numeric,
// except that the first may be empty: a header whose first name is empty is
// the index column pandas' DataFrame.to_csv() writes, and that column is
// skipped. Columns are named by header name or by 1-BASED number (1 = the
// first column, as in cut/awk): ignore_columns are skipped (e.g. a label
// column of a training CSV); id_column is carried to the output as text
// (Table::ids) and not sent. Every other field must be a finite number
// that fits a float, and every row must have as many fields as the first one.
//
// IDX: the big-endian header and data of the MNIST format; row i is the i-th
// slice along the first dimension, flattened. Unsigned-byte data is scaled
// by 1/255 (core/base/unit_byte.h, the same bits as invariant-train's IDX
// reader: INPUT_SCALING_UNIT_BYTE in a model's metadata); other types, and
// text, are taken as is (INPUT_SCALING_NONE).
//
// Errors are InvalidArgument (NotFound for a missing file) with a message
// "NAME:LINE: reason" for text, "NAME: reason" for IDX, where NAME is the
// path or "<stdin>"; e.g.
//   rows.csv:3: ragged row: expected 16 fields as on line 2, got 15
//   rows.csv:4: field 2: expected a number, got 'abc'
#ifndef INVARIANT_CORE_IO_TABLE_H_
#define INVARIANT_CORE_IO_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

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
enum class HeaderMode { kAuto, kPresent, kAbsent };

struct TableOptions {
  InputFormat format = InputFormat::kAuto;
  char delimiter = 0;  // 0 = by extension (',' or '\t')
  HeaderMode header = HeaderMode::kAuto;
  // Header names or 1-based column numbers of delimited columns to skip.
  std::vector<std::string> ignore_columns;
  // Header name or 1-based number of a delimited column carried to the
  // output (Table::ids); empty = none. An error for IDX input.
  std::string id_column;
};

// Reads `path` ("-" = stdin).
absl::StatusOr<Table> ReadTable(const std::string& path, const TableOptions& options = {});

// Parses `data` (already decompressed or not) named `name` in messages.
absl::StatusOr<Table> ParseTable(const std::string& data, const std::string& name,
                                 const TableOptions& options = {});

// Parses one trimmed numeric field; false (and `*error` set) when it is not a
// finite float ("expected a number, got 'x'" / "expected a finite number ...").
bool ParseNumber(const std::string& field, float* value, std::string* error);

}  // namespace invariant::io

#endif  // INVARIANT_CORE_IO_TABLE_H_
