// csv.h: numeric CSV / TSV files with a header row.
//
// The first non-blank line names the columns. Every other non-blank line is
// one example with exactly as many fields as the header. All columns are
// numeric inputs except the optional label column (classification: any
// strings; the class names are the distinct strings, sorted numerically when
// all are integers and lexicographically otherwise) and the optional target
// column (regression: numeric, becomes y with one column). Fields are trimmed
// of blanks and of one pair of surrounding double quotes; quoted delimiters
// are not supported. Numbers must be finite.
//
// Errors name the file and the 1-based line number: ragged rows ("expected 5
// fields as in the header, got 4"), non-numeric or non-finite cells (with the
// column name), unknown label / target column names (with the header).
// Opening reads the file once to check it and to collect the class names;
// rows are then streamed, so files larger than memory work.
#ifndef INVARIANT_TRAIN_DATA_CSV_H_
#define INVARIANT_TRAIN_DATA_CSV_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

struct CsvOptions {
  char delimiter = ',';       // '\t' for TSV
  std::string label_column;   // empty: no labels
  std::string target_column;  // empty: no regression target
  std::string name;           // data set name; default: the path
};

absl::StatusOr<std::unique_ptr<RowSource>> OpenCsvSource(const std::string& path,
                                                         const CsvOptions& options = {});

absl::StatusOr<Dataset> LoadCsv(const std::string& path, const CsvOptions& options = {});

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_CSV_H_
