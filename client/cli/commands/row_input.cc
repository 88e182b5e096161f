#include "client/cli/commands/row_input.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/clips.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"
#include "core/base/random.h"

namespace invariant::cli {
namespace {

// The input rows: --random_rows (of the model's input_dim), else --input.
// Returns an exit code != 0 on failure.
int LoadRows(const RowSourceFlags& flags, const v1::GetModelMetadataResponse& m, RowTable* table) {
  const int64_t random_rows = flags.random_rows;
  if (random_rows < 0 || random_rows > 1000000) {
    return ReportUsageError(absl::StrCat("--random_rows: expected 0..1000000, got ", random_rows));
  }
  if (random_rows > 0) {
    if (!flags.id_column.empty()) {
      return ReportUsageError("--id_column needs --input rows, not --random_rows");
    }
    Rng rng(flags.seed);  // the same rows on every platform
    table->num_rows = random_rows;
    table->dim = m.input_dim();
    table->values.resize(static_cast<size_t>(random_rows * m.input_dim()));
    for (float& v : table->values) v = static_cast<float>(rng.Normal());
    return kExitOk;
  }
  RowReadOptions read;
  const std::string& input_format = flags.input_format;
  if (input_format == "idx") {
    read.format = InputFormat::kIdx;
  } else if (input_format == "text") {
    read.format = InputFormat::kDelimited;
  } else if (input_format != "auto") {
    return ReportUsageError("--input_format: expected auto, text or idx, got '" + input_format +
                            "'");
  }
  const std::string& delimiter = flags.delimiter;
  if (delimiter == "tab" || delimiter == "\\t") {
    read.delimiter = '\t';
  } else if (delimiter.size() == 1) {
    read.delimiter = delimiter[0];
  } else if (!delimiter.empty()) {
    return ReportUsageError("--delimiter: expected one character or 'tab', got '" + delimiter +
                            "'");
  }
  const std::string& header = flags.header;
  if (header == "yes") {
    read.header = HeaderMode::kPresent;
  } else if (header == "no") {
    read.header = HeaderMode::kAbsent;
  } else if (header != "auto") {
    return ReportUsageError("--header: expected auto, yes or no, got '" + header + "'");
  }
  read.ignore_columns = flags.ignore_columns;
  read.id_column = flags.id_column;
  const std::string& input = flags.input;
  if (input == "-" && isatty(STDIN_FILENO)) {
    return ReportUsageError(
        "no input rows: give --input=FILE, --random_rows=N, or pipe rows on stdin");
  }
  auto rows = ReadRows(input, read);
  if (!rows.ok()) {
    std::cerr << "invariant-client: " << rows.status().message() << std::endl;
    return kExitUsage;
  }
  *table = *std::move(rows);
  return kExitOk;
}

// Whether `rows` fit model `m`; the error names what differs.
absl::Status CheckRowsFitModel(const RowTable& rows, const v1::GetModelMetadataResponse& m) {
  const std::string model =
      absl::StrCat("model '", m.model_name(), "' version ", m.model_version());
  const std::vector<std::string> expected(m.input_columns().begin(), m.input_columns().end());
  if (!rows.column_names.empty() && !expected.empty() && rows.column_names != expected) {
    std::vector<std::string> missing, extra;
    for (const std::string& c : expected) {
      if (std::find(rows.column_names.begin(), rows.column_names.end(), c) ==
          rows.column_names.end()) {
        missing.push_back(c);
      }
    }
    for (const std::string& c : rows.column_names) {
      if (std::find(expected.begin(), expected.end(), c) == expected.end()) extra.push_back(c);
    }
    if (missing.empty() && extra.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input columns: the header has the columns of ", model, " in another order: expected ",
          absl::StrJoin(expected, ","), ", got ", absl::StrJoin(rows.column_names, ",")));
    }
    std::string message =
        absl::StrCat("input columns do not match the training columns of ", model);
    if (!missing.empty()) absl::StrAppend(&message, ": missing ", absl::StrJoin(missing, ","));
    if (!extra.empty()) {
      absl::StrAppend(&message, "; not inputs of the model: ", absl::StrJoin(extra, ","),
                      " (skip them with --ignore_columns=", absl::StrJoin(extra, ","), ")");
    }
    return absl::InvalidArgumentError(message);
  }
  if (rows.dim != m.input_dim()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input rows have ", rows.dim, " values each, but ", model,
        " takes input_dim=", m.input_dim(), " values per row",
        rows.column_names.empty()
            ? ""
            : absl::StrCat(" (columns sent: ", absl::StrJoin(rows.column_names, ","), ")")));
  }
  return absl::OkStatus();
}

}  // namespace

int PrepareRows(const CommandContext& context, const v1::GetModelMetadataResponse& m,
                RowTable* rows) {
  if (context.rows.random_rows == 0 && NamesClips(context.rows.input)) {
    std::cerr << "invariant-client: model '" << m.model_name() << "' version " << m.model_version()
              << " takes rows of input_dim=" << m.input_dim()
              << " values, not audio clips or image files: --input='" << context.rows.input
              << "' names WAV or image files or a folder (give a CSV, TSV or IDX file of rows)"
              << std::endl;
    return kExitUsage;
  }
  if (int rc = LoadRows(context.rows, m, rows); rc != kExitOk) return rc;
  if (absl::Status fit = CheckRowsFitModel(*rows, m); !fit.ok()) {
    std::cerr << "invariant-client: " << fit.message() << std::endl;
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace invariant::cli
