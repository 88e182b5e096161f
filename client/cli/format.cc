#include "client/cli/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace invariant::cli {
namespace {

template <typename T>
std::string Shortest(T value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

}  // namespace

std::string FormatFloat(float value) { return Shortest(value); }
std::string FormatDouble(double value) { return Shortest(value); }

std::string CsvField(absl::string_view field) {
  if (field.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string JsonFloatArray(const float* values, size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ',';
    AppendJsonNumber(values[i], &out);
  }
  out += ']';
  return out;
}

}  // namespace invariant::cli
