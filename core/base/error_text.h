// error_text.h: how values are written inside error messages.
//
// ShapeText writes a shape in full ("[2, 3, 4]"); it is for shapes the
// program owns (a model's input shape, a bundle tensor's shape). Anything a
// client sent is quoted bounded: EchoInput for a string, EchoShape for a
// shape, so that a status message never grows with the input and never
// carries raw control bytes into a log line (docs/security.md, "Bounded echo").
//
// Errors: none; every function returns text for every input.
// Thread-safety: pure functions, safe from any thread.
#ifndef INVARIANT_CORE_BASE_ERROR_TEXT_H_
#define INVARIANT_CORE_BASE_ERROR_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace invariant {

// "[2, 3, 4]": every dimension, separated by ", " ("[]" for a scalar).
std::string ShapeText(absl::Span<const int64_t> shape);

// Every error message that quotes a client string (a model name, a label, a
// tensor or output name, a version string) quotes EchoInput(s), never `s`:
// at most kMaxEchoBytes bytes of it, cut at a character boundary, with control
// characters and bytes that are not UTF-8 written as \xNN, and
// "...(N bytes)" after a cut. A reply's status never grows with the input
// and never carries raw control bytes into a log line.
inline constexpr size_t kMaxEchoBytes = 64;
std::string EchoInput(absl::string_view input);

// A client's shape as ShapeText writes it ("[2, 3]"), bounded like EchoInput:
// at most 8 dimensions quoted, then ", ...] (N dimensions)". Takes a protobuf
// RepeatedField<int64_t> or a std::vector<int64_t> alike.
std::string EchoShape(absl::Span<const int64_t> shape);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_ERROR_TEXT_H_
