#include "core/base/status_code_name.h"

#include "absl/status/status.h"

namespace invariant {

std::string StatusCodeName(int code) {
  // absl::StatusCode has int as its fixed underlying type: every int is a
  // value of it, so the cast is defined whatever `code` is.
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? "UNKNOWN" : name;
}

}  // namespace invariant
