// json.h: the one JSON string escaper shared by every JSON writer
// (invariant-train's report.json, invariant-client's JSON lines, loadgen).
#ifndef INVARIANT_CORE_BASE_JSON_H_
#define INVARIANT_CORE_BASE_JSON_H_

#include <string>

#include "absl/strings/string_view.h"

namespace invariant {

// A JSON string literal (quotes included): escapes ", \, \n, \r, \t and the
// other control characters (as \u00XX); other bytes, UTF-8 included, are
// copied as they are.
std::string JsonString(absl::string_view text);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_JSON_H_
