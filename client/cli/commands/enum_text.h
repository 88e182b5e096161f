// enum_text.h: the text invariant-client prints for a protobuf enum value,
// made from the name protoc generates (v1::Task_Name(...) and the like).
//
// The CLI's text is not the protobuf name as is, and must stay what it has
// always printed (scripts read it): the value's name without the enum's
// prefix ("VERSION_STATE_READY" → "READY"), lowercased where the CLI prints
// lowercase ("TASK_CLASSIFICATION" → "classification"), and the CLI's own
// word for the unspecified value and for a value this build's protos do not
// know (a newer server), for which protoc's *_Name returns "".
//
// Pure function; thread-safe.
#ifndef INVARIANT_CLIENT_CLI_COMMANDS_ENUM_TEXT_H_
#define INVARIANT_CLIENT_CLI_COMMANDS_ENUM_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace invariant::cli {

enum class LetterCase { kAsDeclared, kLower };

// `proto_name` without `prefix`, in `letter_case`; `unspecified` when
// `proto_name` is empty or is the prefix followed by "UNSPECIFIED".
// E.g. EnumText(v1::Task_Name(task), "TASK_", LetterCase::kLower, "none").
std::string EnumText(absl::string_view proto_name, absl::string_view prefix, LetterCase letter_case,
                     absl::string_view unspecified);

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_COMMANDS_ENUM_TEXT_H_
