// csv_fuzz.cc: libFuzzer target for the CSV/TSV reader (train/data/csv.h).
//
// Input: one control byte, then the file. Control bit 0 reads it as TSV,
// bit 1 names "label" the label column, bit 2 names "y" the target column
// (the seeds use those names). The file lives in a memfd
// (tests/fuzz/fuzz_util.h). Every load must return a status with a message
// (never crash); a data set that loads must satisfy ValidateDataset, and
// streaming the same file must give the same number of rows.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "train/data/csv.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using invariant::fuzz::Check;
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string path = invariant::fuzz::WriteMemFile(
      0, std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  invariant::train::CsvOptions options;
  options.delimiter = (control & 1) ? '\t' : ',';
  if (control & 2) options.label_column = "label";
  if (control & 4) options.target_column = "y";
  options.name = "fuzz";
  const auto loaded = invariant::train::LoadCsv(path, options);
  if (!loaded.ok()) {
    Check(!loaded.status().message().empty(), "a refused file has an error message");
    return 0;
  }
  Check(invariant::train::ValidateDataset(*loaded).ok(), "a loaded CSV is a valid Dataset");
  Check(loaded->has_labels() == !options.label_column.empty() || loaded->rows() == 0,
        "labels exactly when a label column is named");
  // Stream it again in small blocks: the same rows, then the end.
  auto source = invariant::train::OpenCsvSource(path, options);
  Check(source.ok(), "a file that loads opens as a stream");
  const int64_t dim = (*source)->schema().dim;
  Check(dim == loaded->dim(), "the stream has the loaded dim");
  std::vector<float> x(static_cast<size_t>(3 * dim));
  std::vector<int32_t> labels(3);
  std::vector<float> targets(3);
  int64_t rows = 0;
  while (true) {
    const auto got = (*source)->Next(3, x.data(), labels.data(), targets.data());
    Check(got.ok(), "a file that loads streams without errors");
    if (*got == 0) break;
    rows += *got;
  }
  Check(rows == loaded->rows(), "streaming gives as many rows as loading");
  return 0;
}
