// json.h: the project's one JSON toolkit (RFC 8259): the writer every JSON
// producer shares, and a strict one-pass reader on RapidJSON (Debian's
// rapidjson-dev, header only).
//
// Writing: JsonString / AppendJsonString (the one string escaper shared by
// every JSON writer: invariant-train's report.json, invariant-client's JSON
// lines, loadgen, the REST front end) and JsonNumber / AppendJsonNumber (the
// shortest text that reads back to the same float / double, std::to_chars).
// The Append forms write straight into `out`, with no temporary string.
//
// Reading: ParseJsonEvents makes ONE linear pass over a text and reports its
// values as events (SAX): no tree, memory O(nesting depth + the longest
// string or number + the keys of the largest object seen at each depth). It
// accepts RFC 8259 with one limit the RFC allows (section 9): a number
// beyond the range of a double (e.g. 1e309) is refused ("expected a number
// within the range of a double"; RapidJSON 1.1 checks the range even when it
// hands numbers over as text). Otherwise exactly the RFC: one value surrounded by optional
// whitespace (space, tab, CR, LF); no comments, trailing commas, single quotes, NaN/Infinity,
// leading zeros, leading '+', or control characters in strings; escapes are decoded (\uXXXX
// surrogate pairs into UTF-8; a lone surrogate is an error); strings must be
// valid UTF-8; an object may not repeat a key (checked with a hash set per
// open object, so linear in the number of keys); nesting deeper than
// `max_depth` is refused (the reader is iterative, the limit bounds memory and
// the callers' own recursion). Syntax errors are INVALID_ARGUMENT
// "byte N: expected ..., received ..." with N the 0-based offset of the
// offending byte; a key quoted in an error is cut to kMaxJsonEchoBytes.
// Numbers are handed over as their literal text, so a caller reads them as
// float without rounding twice (JsonNumberToFloat) or as an exact integer.
//
// ParseJson builds a JsonValue tree from the same events, for callers that
// genuinely need a tree (tests, small documents); request bodies on the
// serving path use ParseJsonEvents directly.
//
// Thread-safety: every function is reentrant; a JsonValue is a plain value.
#ifndef INVARIANT_CORE_BASE_JSON_H_
#define INVARIANT_CORE_BASE_JSON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace invariant {

// A JSON string literal (quotes included): escapes ", \, \n, \r, \t and the
// other control characters (as \u00XX); other bytes, UTF-8 included, are
// copied as they are.
std::string JsonString(absl::string_view text);
void AppendJsonString(absl::string_view text, std::string* out);

// The shortest decimal text that reads back as exactly `value` (e.g. "0.1",
// "1e-07", "-3"); "null" for NaN and infinities, which JSON cannot express.
std::string JsonNumber(float value);
std::string JsonNumber(double value);
void AppendJsonNumber(float value, std::string* out);
void AppendJsonNumber(double value, std::string* out);

// Reading a number literal of valid JSON syntax (as ParseJsonEvents hands
// over). ToFloat rounds once to the nearest float and is false when the
// magnitude exceeds the float range (values below the smallest float become 0
// or subnormal). ToDouble likewise (±inf when out of range). ToInt64 /
// ToUint64 are true when the literal is an integer (no fraction, no exponent)
// that fits.
bool JsonNumberToFloat(absl::string_view literal, float* out);
double JsonNumberToDouble(absl::string_view literal);
bool JsonNumberToInt64(absl::string_view literal, int64_t* out);
bool JsonNumberToUint64(absl::string_view literal, uint64_t* out);

// Client text quoted in an error message is cut to this many bytes.
inline constexpr size_t kMaxJsonEchoBytes = 64;

inline constexpr int kDefaultJsonMaxDepth = 64;

// The events of one pass of ParseJsonEvents, in document order. Each returns
// OK to go on; any other status stops the pass and is returned unchanged. The
// string views are valid only during the call.
class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual absl::Status Null() = 0;
  virtual absl::Status Bool(bool value) = 0;
  virtual absl::Status Number(absl::string_view literal) = 0;  // valid RFC 8259 text
  virtual absl::Status String(absl::string_view value) = 0;    // decoded, valid UTF-8
  virtual absl::Status StartObject() = 0;
  virtual absl::Status Key(absl::string_view key) = 0;  // decoded; never repeated in an object
  virtual absl::Status EndObject(size_t members) = 0;
  virtual absl::Status StartArray() = 0;
  virtual absl::Status EndArray(size_t items) = 0;
};

// Reads `text` strictly (see the top of this file), calling `events`. Returns
// OK, a syntax error "byte N: ...", or the first non-OK status of an event.
absl::Status ParseJsonEvents(absl::string_view text, JsonEvents& events,
                             int max_depth = kDefaultJsonMaxDepth);

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
  // The member `key` of an object, or nullptr (a linear search: small objects).
  const JsonValue* Find(absl::string_view key) const;

  // A number's value, as JsonNumberTo* above; false / 0 when not a number.
  double NumberAsDouble() const;
  bool NumberAsFloat(float* out) const;
  bool NumberAsInt64(int64_t* out) const;
  bool NumberAsUint64(uint64_t* out) const;

  // A short name of the type for error messages: "null", "a boolean",
  // "a number", "a string", "an array", "an object".
  absl::string_view TypeName() const;

 private:
  friend class JsonTreeBuilder;

  Type type_ = Type::kNull;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<Member> members_;
};

// Reads `text` strictly into a tree (same rules and errors as ParseJsonEvents).
absl::StatusOr<JsonValue> ParseJson(absl::string_view text, int max_depth = kDefaultJsonMaxDepth);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_JSON_H_
