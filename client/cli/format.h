// format.h: text formatting shared by invariant-client and invariant-loadgen:
// CSV fields, JSON values, numbers that round-trip, and the tools' exit codes.
//
// Numbers: FormatFloat / FormatDouble print the shortest decimal that parses
// back to the same value (std::to_chars); non-finite values print as "nan",
// "inf", "-inf" in CSV and as null in JSON. All functions are pure.
#ifndef INVARIANT_CLIENT_CLI_FORMAT_H_
#define INVARIANT_CLIENT_CLI_FORMAT_H_

#include <grpcpp/support/status.h>

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "core/base/json.h"
#include "core/base/status_code_name.h"

namespace invariant::cli {

// Exit codes of the tools: scripts can rely on them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // local failure (e.g. cannot write the output)
inline constexpr int kExitUsage = 2;        // bad subcommand, flags or input rows
inline constexpr int kExitServerError = 3;  // the call failed: gRPC code + message on stderr

// The canonical name of a gRPC code (core/base/status_code_name.h).
using ::invariant::StatusCodeName;

std::string FormatFloat(float value);
std::string FormatDouble(double value);

// The field as-is, or double-quoted (inner quotes doubled) when it holds a
// comma, a quote, a CR or an LF.
std::string CsvField(absl::string_view field);

// A JSON string literal and a JSON number (shortest round-trip, null when not
// finite): the project's one JSON writer (core/base/json.h).
using ::invariant::JsonNumber;
using ::invariant::JsonString;
// "[v0,v1,...]" of `n` floats (shortest round-trip), null for non-finite ones.
std::string JsonFloatArray(const float* values, size_t n);

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_FORMAT_H_
