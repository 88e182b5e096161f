#include "server/rest/rest_infer_events.h"

#include "absl/strings/str_cat.h"
#include "server/handlers/validation.h"

namespace invariant::server::rest_internal {

absl::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "a value";
}

absl::Status Invalid(absl::string_view field, absl::string_view expected,
                     absl::string_view received) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": expected ", expected, ", received ", received));
}

std::string Quoted(absl::string_view text) { return absl::StrCat("\"", EchoInput(text), "\""); }

}  // namespace invariant::server::rest_internal
