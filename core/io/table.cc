#include "core/io/table.h"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/base/file.h"
#include "core/base/unit_byte.h"

namespace invariant::io {
namespace {

bool IsGzip(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

absl::StatusOr<std::string> Gunzip(const std::string& data, const std::string& name) {
  z_stream stream;
  std::memset(&stream, 0, sizeof(stream));
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(absl::StrCat(name, ": zlib init failed"));
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&stream);
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": gzip data is corrupt or truncated (zlib code ", rc, ")"));
    }
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  inflateEnd(&stream);
  return out;
}

std::string StripGz(const std::string& name) {
  return absl::EndsWith(name, ".gz") ? name.substr(0, name.size() - 3) : name;
}

bool LooksLikeIdx(const std::string& data) {
  if (data.size() < 4 || data[0] != 0 || data[1] != 0) return false;
  const unsigned char type = static_cast<unsigned char>(data[2]);
  const unsigned char dims = static_cast<unsigned char>(data[3]);
  const bool known_type =
      type == 0x08 || type == 0x09 || type == 0x0B || type == 0x0C || type == 0x0D || type == 0x0E;
  return known_type && dims >= 1 && dims <= 4;
}

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

absl::StatusOr<Table> ParseIdx(const std::string& data, const std::string& name) {
  if (!LooksLikeIdx(data)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": not an IDX file: expected magic 0x0000TTDD (type 08/09/0B/0C/0D/0E, 1..4 dims)"));
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const int type = bytes[2];
  const int ndims = bytes[3];
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  if (data.size() < header) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": truncated IDX header: expected ",
                                                   header, " bytes, got ", data.size()));
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < ndims; ++i) dims.push_back(BigEndian32(bytes + 4 + 4 * i));
  int64_t dim = 1;
  for (int i = 1; i < ndims; ++i) dim *= dims[static_cast<size_t>(i)];
  const int64_t n = dims[0];
  int element = 1;
  switch (type) {
    case 0x0B:
      element = 2;
      break;
    case 0x0C:
    case 0x0D:
      element = 4;
      break;
    case 0x0E:
      element = 8;
      break;
    default:
      element = 1;
  }
  const uint64_t expected = header + static_cast<uint64_t>(n) * static_cast<uint64_t>(dim) *
                                         static_cast<uint64_t>(element);
  if (data.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": IDX data size: expected ", expected,
                                                   " bytes for dims [", absl::StrJoin(dims, ","),
                                                   "], got ", data.size()));
  }
  if (n == 0 || dim == 0) return absl::InvalidArgumentError(absl::StrCat(name, ": no rows"));
  Table table;
  table.num_rows = n;
  table.dim = dim;
  table.values.resize(static_cast<size_t>(n * dim));
  const unsigned char* p = bytes + header;
  for (size_t i = 0; i < table.values.size(); ++i, p += element) {
    float v = 0;
    switch (type) {
      case 0x08:
        v = UnitByteToFloat(p[0]);
        break;
      case 0x09:
        v = static_cast<float>(static_cast<int8_t>(p[0]));
        break;
      case 0x0B:
        v = static_cast<float>(static_cast<int16_t>((p[0] << 8) | p[1]));
        break;
      case 0x0C:
        v = static_cast<float>(static_cast<int32_t>(BigEndian32(p)));
        break;
      case 0x0D: {
        const uint32_t u = BigEndian32(p);
        std::memcpy(&v, &u, 4);
        break;
      }
      case 0x0E: {
        const uint64_t u = (uint64_t{BigEndian32(p)} << 32) | BigEndian32(p + 4);
        double d;
        std::memcpy(&d, &u, 8);
        v = static_cast<float>(d);
        break;
      }
    }
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": row ", i / static_cast<size_t>(dim), ": non-finite value"));
    }
    table.values[i] = v;
  }
  return table;
}

std::string Clean(absl::string_view field) {
  field = absl::StripAsciiWhitespace(field);
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
    field = absl::StripAsciiWhitespace(field.substr(1, field.size() - 2));
  }
  return std::string(field);
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

// ',' or '\t' from the first data line (see rows.h).
char SniffDelimiter(const std::string& data) {
  for (absl::string_view line : absl::StrSplit(data, '\n')) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (stripped.empty() || stripped.front() == '#') continue;
    return absl::StrContains(line, '\t') && !absl::StrContains(line, ',') ? '\t' : ',';
  }
  return ',';
}

absl::StatusOr<Table> ParseDelimited(const std::string& data, const std::string& name,
                                     char delimiter, const TableOptions& options) {
  Table table;
  int64_t expected_fields = -1;
  int64_t first_line = 0;
  std::vector<bool> ignored;
  int64_t id_index = -1;
  std::vector<std::string> header_fields;
  bool first = true;
  int64_t line_number = 0;
  auto error = [&](const std::string& reason) {
    return absl::InvalidArgumentError(absl::StrCat(name, ":", line_number, ": ", reason));
  };
  for (absl::string_view line : absl::StrSplit(data, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (stripped.empty() || stripped.front() == '#') continue;
    std::vector<std::string> fields;
    for (absl::string_view f : absl::StrSplit(line, delimiter)) fields.push_back(Clean(f));
    if (first) {
      first = false;
      expected_fields = static_cast<int64_t>(fields.size());
      first_line = line_number;
      bool header = options.header == HeaderMode::kPresent;
      if (options.header == HeaderMode::kAuto) {
        header = true;
        for (size_t i = 0; i < fields.size(); ++i) {
          float v;
          std::string unused;
          // An empty first name is pandas' index column; any other empty field is data.
          if (ParseNumber(fields[i], &v, &unused) || (fields[i].empty() && i > 0)) header = false;
        }
        if (fields.size() == 1 && fields[0].empty()) header = false;
      }
      ignored.assign(fields.size(), false);
      // pandas' DataFrame.to_csv() index column: an unnamed first column.
      if (header && fields.size() > 1 && fields[0].empty()) ignored[0] = true;
      for (const std::string& column : options.ignore_columns) {
        auto found = FindColumn(column, "ignored column", fields, header);
        if (!found.ok()) return error(std::string(found.status().message()));
        for (size_t i : *found) ignored[i] = true;
      }
      if (!options.id_column.empty()) {
        auto found = FindColumn(options.id_column, "id column", fields, header);
        if (!found.ok()) return error(std::string(found.status().message()));
        id_index = static_cast<int64_t>(found->front());
        ignored[static_cast<size_t>(id_index)] = true;
        table.id_name = header && !fields[static_cast<size_t>(id_index)].empty()
                            ? fields[static_cast<size_t>(id_index)]
                            : "id";
      }
      for (bool b : ignored) table.dim += b ? 0 : 1;
      if (table.dim == 0) return error("no columns left after --ignore_columns / --id_column");
      if (header) {
        header_fields = fields;
        for (size_t i = 0; i < fields.size(); ++i) {
          if (!ignored[i]) table.column_names.push_back(fields[i]);
        }
        continue;
      }
    }
    if (static_cast<int64_t>(fields.size()) != expected_fields) {
      return error(absl::StrCat("ragged row: expected ", expected_fields, " fields as on line ",
                                first_line, ", got ", fields.size()));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      if (ignored[i]) continue;
      float v = 0;
      std::string reason;
      if (!ParseNumber(fields[i], &v, &reason)) {
        const std::string column =
            header_fields.empty() ? "" : absl::StrCat(" ('", header_fields[i], "')");
        return error(absl::StrCat("field ", i + 1, column, ": ", reason));
      }
      table.values.push_back(v);
    }
    if (id_index >= 0) table.ids.push_back(fields[static_cast<size_t>(id_index)]);
    ++table.num_rows;
  }
  if (table.num_rows == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": no rows"));
  }
  return table;
}

}  // namespace

bool ParseNumber(const std::string& field, float* value, std::string* error) {
  absl::string_view s = field;
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

absl::StatusOr<Table> ParseTable(const std::string& raw, const std::string& name,
                                 const TableOptions& options) {
  std::string data = raw;
  if (IsGzip(data)) {
    auto unzipped = Gunzip(data, name);
    if (!unzipped.ok()) return unzipped.status();
    data = std::move(*unzipped);
  }
  const std::string base = StripGz(name);
  bool idx = options.format == InputFormat::kIdx;
  if (options.format == InputFormat::kAuto) {
    idx = LooksLikeIdx(data) || absl::EndsWith(base, ".idx") || absl::StrContains(base, "-idx");
  }
  if (idx) {
    if (!options.id_column.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": --id_column needs text rows (CSV/TSV), not IDX"));
    }
    return ParseIdx(data, name);
  }
  char delimiter = options.delimiter;
  if (delimiter == 0) {
    if (absl::EndsWith(base, ".tsv") || absl::EndsWith(base, ".tab")) {
      delimiter = '\t';
    } else if (absl::EndsWith(base, ".csv")) {
      delimiter = ',';
    } else {
      delimiter = SniffDelimiter(data);
    }
  }
  return ParseDelimited(data, name, delimiter, options);
}

absl::StatusOr<Table> ReadTable(const std::string& path, const TableOptions& options) {
  std::string data;
  std::string name = path;
  if (path == "-") {
    name = "<stdin>";
    std::ostringstream text;
    text << std::cin.rdbuf();
    data = text.str();
  } else {
    std::optional<std::string> bytes = ReadWholeFile(path);
    if (!bytes.has_value()) {
      return absl::NotFoundError(absl::StrCat(path, ": cannot open the input file"));
    }
    data = *std::move(bytes);
  }
  return ParseTable(data, name, options);
}

}  // namespace invariant::io
