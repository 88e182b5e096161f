#include "client/cli/commands/enum_text.h"

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

namespace invariant::cli {

std::string EnumText(absl::string_view proto_name, absl::string_view prefix, LetterCase letter_case,
                     absl::string_view unspecified) {
  const absl::string_view value = absl::StripPrefix(proto_name, prefix);
  if (value.empty() || value == "UNSPECIFIED") return std::string(unspecified);
  return letter_case == LetterCase::kLower ? absl::AsciiStrToLower(value) : std::string(value);
}

}  // namespace invariant::cli
