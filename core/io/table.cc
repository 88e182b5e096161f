#include "core/io/table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/base/status_macros.h"
#include "core/io/byte_stream.h"
#include "core/io/idx.h"

namespace invariant::io {
namespace {

// A whole IDX file (`data`, decompressed) as rows.
absl::StatusOr<Table> ParseIdx(const std::string& data, const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteReader> reader, ByteReader::FromString(data, name));
  auto header = ReadIdxHeader(*reader);
  if (!header.ok()) return absl::InvalidArgumentError(header.status().message());
  const std::vector<int64_t>& dims = header->dims;
  // The dims' product in bytes, checked: a product beyond 64 bits is a size
  // mismatch, never a wrapped count that a short file could match.
  uint64_t bytes = static_cast<uint64_t>(header->element_bytes);
  bool overflow = false;
  for (int64_t d : dims) {
    overflow = overflow || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
  }
  if (overflow || bytes > data.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": IDX dims [", absl::StrJoin(dims, ","),
                                                   "] need more than the ", data.size(),
                                                   " bytes the file holds"));
  }
  const uint64_t expected = static_cast<uint64_t>(header->header_bytes()) + bytes;
  if (data.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": IDX data size: expected ", expected,
                                                   " bytes for dims [", absl::StrJoin(dims, ","),
                                                   "], got ", data.size()));
  }
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": no rows"));
  }
  // No dimension is 0, so n · dim is at most the file's size: both fit.
  const int64_t n = dims[0];
  int64_t dim = 1;
  for (size_t i = 1; i < dims.size(); ++i) dim *= dims[i];
  Table table;
  table.num_rows = n;
  table.dim = dim;
  table.values.resize(static_cast<size_t>(n * dim));
  DecodeIdx(header->type,
            reinterpret_cast<const unsigned char*>(data.data()) + header->header_bytes(), n * dim,
            table.values.data());
  for (size_t i = 0; i < table.values.size(); ++i) {
    if (!std::isfinite(table.values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": row ", i / static_cast<size_t>(dim), ": non-finite value"));
    }
  }
  return table;
}

// The 0-based indices of `column` (a header name, or a 1-based number) among
// `fields`, or an error whose message starts with `role` ("ignored column").
absl::StatusOr<std::vector<size_t>> FindColumn(const std::string& column, const std::string& role,
                                               const std::vector<std::string>& fields,
                                               bool header) {
  std::vector<size_t> found;
  int64_t number = 0;
  if (absl::SimpleAtoi(column, &number)) {
    if (number < 1 || number > static_cast<int64_t>(fields.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          role, " ", number, " out of range: columns are numbered from 1 and the row has ",
          fields.size(), " fields"));
    }
    found.push_back(static_cast<size_t>(number - 1));
  } else if (header) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i] == column) found.push_back(i);
    }
  }
  if (found.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        role, " '", column, "' not in the header",
        header ? " (" + absl::StrJoin(fields, ",") + ")" : " (the file has no header line)"));
  }
  return found;
}

absl::StatusOr<Table> ParseDelimited(const std::string& data, const std::string& name,
                                     const TableOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteReader> bytes, ByteReader::FromString(data, name));
  ASSIGN_OR_RETURN(std::unique_ptr<DelimitedReader> reader,
                   DelimitedReader::Open(std::move(bytes), {options.delimiter, options.header}));
  if (reader->num_fields() == 0) return absl::InvalidArgumentError(absl::StrCat(name, ": no rows"));
  Table table;
  const bool header = reader->has_header();
  const int64_t first_line = reader->first_line();
  Record record;
  // The fields that name the columns: the header, or the first data row.
  std::vector<std::string> first_fields = reader->header();
  if (!header) {
    ASSIGN_OR_RETURN(const bool any, reader->Next(&record));
    (void)any;  // num_fields() > 0: the first record exists
    first_fields = record.fields;
  }
  std::vector<bool> ignored(first_fields.size(), false);
  if (reader->index_column()) ignored[0] = true;
  for (const std::string& column : options.ignore_columns) {
    auto found = FindColumn(column, "ignored column", first_fields, header);
    if (!found.ok()) return reader->Error(first_line, found.status().message());
    for (size_t i : *found) ignored[i] = true;
  }
  int64_t id_index = -1;
  if (!options.id_column.empty()) {
    auto found = FindColumn(options.id_column, "id column", first_fields, header);
    if (!found.ok()) return reader->Error(first_line, found.status().message());
    id_index = static_cast<int64_t>(found->front());
    ignored[static_cast<size_t>(id_index)] = true;
    const std::string& id_name = first_fields[static_cast<size_t>(id_index)];
    table.id_name = header && !id_name.empty() ? id_name : "id";
  }
  for (bool b : ignored) table.dim += b ? 0 : 1;
  if (table.dim == 0) {
    return reader->Error(first_line, "no columns left after --ignore_columns / --id_column");
  }
  if (header) {
    for (size_t i = 0; i < first_fields.size(); ++i) {
      if (!ignored[i]) table.column_names.push_back(first_fields[i]);
    }
  }
  bool have = !header;  // without a header, `record` holds the first row
  while (true) {
    if (!have) {
      ASSIGN_OR_RETURN(have, reader->Next(&record));
      if (!have) break;
    }
    have = false;
    for (size_t i = 0; i < record.fields.size(); ++i) {
      if (ignored[i]) continue;
      float v = 0;
      std::string reason;
      if (!ParseNumber(record.fields[i], &v, &reason)) {
        const std::string column = header ? absl::StrCat(" ('", first_fields[i], "')") : "";
        return reader->Error(record.line, absl::StrCat("field ", i + 1, column, ": ", reason));
      }
      table.values.push_back(v);
    }
    if (id_index >= 0) table.ids.push_back(record.fields[static_cast<size_t>(id_index)]);
    ++table.num_rows;
  }
  if (table.num_rows == 0) return absl::InvalidArgumentError(absl::StrCat(name, ": no rows"));
  return table;
}

// `data` is decompressed.
absl::StatusOr<Table> ParseBytes(const std::string& data, const std::string& name,
                                 const TableOptions& options) {
  const absl::string_view base =
      absl::EndsWith(name, ".gz") ? absl::string_view(name).substr(0, name.size() - 3) : name;
  bool idx = options.format == InputFormat::kIdx;
  if (options.format == InputFormat::kAuto) {
    idx = LooksLikeIdx(data) || absl::EndsWith(base, ".idx") || absl::StrContains(base, "-idx");
  }
  if (!idx) return ParseDelimited(data, name, options);
  if (!options.id_column.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": --id_column needs text rows (CSV/TSV), not IDX"));
  }
  return ParseIdx(data, name);
}

}  // namespace

absl::StatusOr<Table> ParseTable(std::string data, const std::string& name,
                                 const TableOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteReader> reader,
                   ByteReader::FromString(std::move(data), name));
  ASSIGN_OR_RETURN(const std::string bytes, ReadAll(*reader));
  return ParseBytes(bytes, name, options);
}

absl::StatusOr<Table> ReadTable(const std::string& path, const TableOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteReader> reader, ByteReader::Open(path));
  ASSIGN_OR_RETURN(const std::string bytes, ReadAll(*reader));
  return ParseBytes(bytes, reader->path(), options);
}

}  // namespace invariant::io
