// json.h: the writer, number literals and the JsonValue tree (built from the
// events of ParseJsonEvents, json_events.cc).
#include "core/base/json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

namespace invariant {
namespace {

template <typename T>
void AppendShortest(T value, std::string* out) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

// from_chars reports under- and overflow as out of range without a value;
// strtod / strtof round those (to 0 / a subnormal, or ±inf). Rare, so the
// copy that makes the literal NUL-terminated does not matter.
template <typename T>
T ReadOutOfRange(absl::string_view literal) {
  const std::string copy(literal);
  if constexpr (std::is_same_v<T, float>) {
    return std::strtof(copy.c_str(), nullptr);
  } else {
    return std::strtod(copy.c_str(), nullptr);
  }
}

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  size_t plain = 0;  // start of the run of bytes copied as they are
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(text.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default: {
        const char escape[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out->append(escape, sizeof(escape));
      }
    }
  }
  out->append(text.data() + plain, text.size() - plain);
  out->push_back('"');
}

std::string JsonString(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  AppendJsonString(text, &out);
  return out;
}

void AppendJsonNumber(float value, std::string* out) { AppendShortest(value, out); }
void AppendJsonNumber(double value, std::string* out) { AppendShortest(value, out); }

std::string JsonNumber(float value) {
  std::string out;
  AppendShortest(value, &out);
  return out;
}

std::string JsonNumber(double value) {
  std::string out;
  AppendShortest(value, &out);
  return out;
}

bool JsonNumberToFloat(absl::string_view literal, float* out) {
  float value = 0;
  const std::from_chars_result r =
      std::from_chars(literal.data(), literal.data() + literal.size(), value);
  if (r.ec == std::errc::result_out_of_range) {
    value = ReadOutOfRange<float>(literal);  // underflow rounds to 0 or a subnormal
  } else if (r.ec != std::errc()) {
    return false;
  }
  if (!std::isfinite(value)) return false;
  *out = value;
  return true;
}

double JsonNumberToDouble(absl::string_view literal) {
  double value = 0;
  const std::from_chars_result r =
      std::from_chars(literal.data(), literal.data() + literal.size(), value);
  if (r.ec == std::errc::result_out_of_range) return ReadOutOfRange<double>(literal);
  return value;
}

bool JsonNumberToInt64(absl::string_view literal, int64_t* out) {
  int64_t value = 0;
  const std::from_chars_result r =
      std::from_chars(literal.data(), literal.data() + literal.size(), value);
  if (r.ec != std::errc() || r.ptr != literal.data() + literal.size()) return false;
  *out = value;
  return true;
}

bool JsonNumberToUint64(absl::string_view literal, uint64_t* out) {
  uint64_t value = 0;
  const std::from_chars_result r =
      std::from_chars(literal.data(), literal.data() + literal.size(), value);
  if (r.ec != std::errc() || r.ptr != literal.data() + literal.size()) return false;
  *out = value;
  return true;
}

JsonValue JsonValue::Bool(bool value) {
  JsonValue v;
  v.type_ = Type::kBool;
  v.bool_ = value;
  return v;
}

JsonValue JsonValue::Number(std::string literal) {
  JsonValue v;
  v.type_ = Type::kNumber;
  v.text_ = std::move(literal);
  return v;
}

JsonValue JsonValue::String(std::string value) {
  JsonValue v;
  v.type_ = Type::kString;
  v.text_ = std::move(value);
  return v;
}

JsonValue JsonValue::Array(std::vector<JsonValue> items) {
  JsonValue v;
  v.type_ = Type::kArray;
  v.items_ = std::move(items);
  return v;
}

JsonValue JsonValue::Object(std::vector<Member> members) {
  JsonValue v;
  v.type_ = Type::kObject;
  v.members_ = std::move(members);
  return v;
}

const JsonValue* JsonValue::Find(absl::string_view key) const {
  for (const Member& member : members_) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

double JsonValue::NumberAsDouble() const {
  return type_ == Type::kNumber ? JsonNumberToDouble(text_) : 0;
}

bool JsonValue::NumberAsFloat(float* out) const {
  return type_ == Type::kNumber && JsonNumberToFloat(text_, out);
}

bool JsonValue::NumberAsInt64(int64_t* out) const {
  return type_ == Type::kNumber && JsonNumberToInt64(text_, out);
}

bool JsonValue::NumberAsUint64(uint64_t* out) const {
  return type_ == Type::kNumber && JsonNumberToUint64(text_, out);
}

absl::string_view JsonValue::TypeName() const {
  switch (type_) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "a boolean";
    case Type::kNumber:
      return "a number";
    case Type::kString:
      return "a string";
    case Type::kArray:
      return "an array";
    case Type::kObject:
      return "an object";
  }
  return "a value";
}

// Builds the tree: the open arrays and objects on a stack, each value added
// to the innermost one (under the key read last, for an object).
class JsonTreeBuilder : public JsonEvents {
 public:
  JsonValue Take() { return std::move(root_); }

  absl::Status Null() override { return Add(JsonValue()); }
  absl::Status Bool(bool value) override { return Add(JsonValue::Bool(value)); }
  absl::Status Number(absl::string_view literal) override {
    return Add(JsonValue::Number(std::string(literal)));
  }
  absl::Status String(absl::string_view value) override {
    return Add(JsonValue::String(std::string(value)));
  }
  absl::Status StartObject() override { return Open(JsonValue::Object({})); }
  absl::Status Key(absl::string_view key) override {
    open_.back().members_.emplace_back(std::string(key), JsonValue());
    return absl::OkStatus();
  }
  absl::Status EndObject(size_t) override { return Close(); }
  absl::Status StartArray() override { return Open(JsonValue::Array({})); }
  absl::Status EndArray(size_t) override { return Close(); }

 private:
  absl::Status Add(JsonValue value) {
    if (open_.empty()) {
      root_ = std::move(value);
    } else if (open_.back().is_array()) {
      open_.back().items_.push_back(std::move(value));
    } else {
      open_.back().members_.back().second = std::move(value);
    }
    return absl::OkStatus();
  }
  absl::Status Open(JsonValue container) {
    open_.push_back(std::move(container));
    return absl::OkStatus();
  }
  absl::Status Close() {
    JsonValue done = std::move(open_.back());
    open_.pop_back();
    return Add(std::move(done));
  }

  std::vector<JsonValue> open_;
  JsonValue root_;
};

absl::StatusOr<JsonValue> ParseJson(absl::string_view text, int max_depth) {
  JsonTreeBuilder builder;
  if (absl::Status s = ParseJsonEvents(text, builder, max_depth); !s.ok()) return s;
  return builder.Take();
}

}  // namespace invariant
