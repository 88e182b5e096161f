// json.h: the project's one small JSON toolkit (RFC 8259), with no dependency.
//
// Writing: JsonString (the one string escaper shared by every JSON writer:
// invariant-train's report.json, invariant-client's JSON lines, loadgen, the
// REST front end) and JsonNumber (shortest text that reads back to the same
// float / double).
//
// Reading: ParseJson is a STRICT parser for request bodies. It accepts exactly
// RFC 8259: one value surrounded by optional whitespace (space, tab, CR, LF);
// no comments, trailing commas, single quotes, NaN/Infinity, leading zeros,
// leading '+', or control characters in strings; escapes are decoded (\uXXXX
// surrogate pairs into UTF-8, a lone surrogate is an error); strings must be
// valid UTF-8; an object may not repeat a key; nesting deeper than
// `max_depth` is refused (the parser recurses, and HTTP worker threads have
// small stacks). Errors are INVALID_ARGUMENT "byte N: expected ..., received
// ..." with N the 0-based offset of the offending byte.
//
// Numbers keep their literal text, so a caller can read them as float without
// rounding twice (NumberAsFloat) or as an exact integer (NumberAsInt64).
#ifndef INVARIANT_CORE_BASE_JSON_H_
#define INVARIANT_CORE_BASE_JSON_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace invariant {

// A JSON string literal (quotes included): escapes ", \, \n, \r, \t and the
// other control characters (as \u00XX); other bytes, UTF-8 included, are
// copied as they are.
std::string JsonString(absl::string_view text);

// The shortest decimal text that reads back as exactly `value` (e.g. "0.1",
// "1e-07", "-3"); "null" for NaN and infinities, which JSON cannot express.
std::string JsonNumber(float value);
std::string JsonNumber(double value);

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  static JsonValue Bool(bool value);
  static JsonValue Number(std::string literal);  // `literal` must be a valid JSON number
  static JsonValue String(std::string value);
  static JsonValue Array(std::vector<JsonValue> items);
  static JsonValue Object(std::vector<Member> members);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool bool_value() const { return bool_; }
  // A string's decoded value, or a number's literal text.
  const std::string& text() const { return text_; }
  const std::vector<JsonValue>& items() const { return items_; }   // of an array
  const std::vector<Member>& members() const { return members_; }  // of an object, in order
  // The member `key` of an object, or nullptr.
  const JsonValue* Find(absl::string_view key) const;

  // A number's value rounded once to the nearest double / float. NumberAsFloat
  // is false when the value's magnitude exceeds the float range (it would be
  // infinite); values below the smallest float become 0 or subnormal.
  double NumberAsDouble() const;
  bool NumberAsFloat(float* out) const;
  // True when the literal is an integer (no fraction, no exponent) that fits.
  bool NumberAsInt64(int64_t* out) const;
  bool NumberAsUint64(uint64_t* out) const;

  // A short name of the type for error messages: "null", "a boolean",
  // "a number", "a string", "an array", "an object".
  absl::string_view TypeName() const;

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<Member> members_;
};

inline constexpr int kDefaultJsonMaxDepth = 64;

// Parses `text` strictly (see the top of this file).
absl::StatusOr<JsonValue> ParseJson(absl::string_view text, int max_depth = kDefaultJsonMaxDepth);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_JSON_H_
