// csv.h: numeric CSV / TSV files with a header row, as a RowSource.
//
// Text is read by core/io/delimited.h, the reader invariant-client uses too,
// with its one field rule: unquoted fields are trimmed of blanks, quoted
// fields keep them ("" is a quote, a quoted field may hold the delimiter);
// blank lines and '#' comment lines are skipped but counted; gzip input is
// decompressed (by its magic bytes); the path "-" reads stdin (read once and
// kept in memory, since the source reads its input twice). The delimiter is
// options.delimiter, or when that is 0 the file name's (".tsv"/".tab": tab,
// ".csv": comma), else the first data line's.
//
// The first record is always the header and names the columns; when its
// first name is empty that column is pandas' DataFrame.to_csv() index and is
// not an input. Every other record is one example with as many fields as the
// header. All columns are numeric inputs except the optional label column
// (classification: any strings; the class names are the distinct strings,
// sorted numerically when all are integers and lexicographically otherwise)
// and the optional target column (regression: numeric, becomes y with one
// column). Numbers must be finite (delimited.h's ParseNumber).
//
// Errors name the file and the 1-based line number: ragged rows ("ragged
// row: expected 5 fields as on line 1, got 4"), non-numeric or non-finite
// cells (with the column name and field number), unknown label / target
// column names (with the header). Opening reads the file once to check it
// and to collect the class names; rows are then streamed, so files larger
// than memory work. A source is not thread-safe.
#ifndef INVARIANT_TRAIN_DATA_CSV_H_
#define INVARIANT_TRAIN_DATA_CSV_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

struct CsvOptions {
  char delimiter = 0;         // 0: detected (see above); '\t' for TSV
  std::string label_column;   // empty: no labels
  std::string target_column;  // empty: no regression target
  std::string name;           // data set name; default: the path
};

absl::StatusOr<std::unique_ptr<RowSource>> OpenCsvSource(const std::string& path,
                                                         const CsvOptions& options = {});

absl::StatusOr<Dataset> LoadCsv(const std::string& path, const CsvOptions& options = {});

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_CSV_H_
