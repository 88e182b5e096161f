#include "core/base/json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace invariant {
namespace {

template <typename T>
std::string ShortestNumber(T value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

// What the parser saw at an offset, for error messages.
std::string Describe(absl::string_view text, size_t pos) {
  if (pos >= text.size()) return "the end of the input";
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c >= 0x20 && c < 0x7f) return absl::StrCat("'", std::string(1, text[pos]), "'");
  return absl::StrFormat("byte 0x%02x", c);
}

// Recursive descent over `text_`; every function leaves pos_ after what it read.
class Parser {
 public:
  Parser(absl::string_view text, int max_depth) : text_(text), max_depth_(max_depth) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue value;
    if (absl::Status s = ParseValue(0, &value); !s.ok()) return s;
    SkipWhitespace();
    if (pos_ != text_.size()) return Error("the end of the input after the value");
    return value;
  }

 private:
  absl::Status Error(absl::string_view expected) const {
    return absl::InvalidArgumentError(
        absl::StrCat("byte ", pos_, ": expected ", expected, ", received ", Describe(text_, pos_)));
  }

  void SkipWhitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(absl::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  absl::Status ParseValue(int depth, JsonValue* out) {
    SkipWhitespace();
    if (pos_ >= text_.size()) return Error("a value");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= max_depth_) {
        return Error(absl::StrCat("at most ", max_depth_, " levels of nesting"));
      }
      return c == '{' ? ParseObject(depth + 1, out) : ParseArray(depth + 1, out);
    }
    if (c == '"') {
      std::string s;
      if (absl::Status st = ParseString(&s); !st.ok()) return st;
      *out = JsonValue::String(std::move(s));
      return absl::OkStatus();
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
    if (Consume("true")) {
      *out = JsonValue::Bool(true);
      return absl::OkStatus();
    }
    if (Consume("false")) {
      *out = JsonValue::Bool(false);
      return absl::OkStatus();
    }
    if (Consume("null")) {
      *out = JsonValue();
      return absl::OkStatus();
    }
    return Error("a value (object, array, string, number, true, false or null)");
  }

  absl::Status ParseObject(int depth, JsonValue* out) {
    ++pos_;  // '{'
    std::vector<JsonValue::Member> members;
    SkipWhitespace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      *out = JsonValue::Object(std::move(members));
      return absl::OkStatus();
    }
    while (true) {
      SkipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("a string key");
      const size_t key_pos = pos_;
      std::string key;
      if (absl::Status s = ParseString(&key); !s.ok()) return s;
      for (const auto& member : members) {
        if (member.first == key) {
          return absl::InvalidArgumentError(
              absl::StrCat("byte ", key_pos, ": expected each key once in an object, received ",
                           JsonString(key), " again"));
        }
      }
      SkipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Error("':'");
      ++pos_;
      JsonValue value;
      if (absl::Status s = ParseValue(depth, &value); !s.ok()) return s;
      members.emplace_back(std::move(key), std::move(value));
      SkipWhitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        *out = JsonValue::Object(std::move(members));
        return absl::OkStatus();
      }
      return Error("',' or '}'");
    }
  }

  absl::Status ParseArray(int depth, JsonValue* out) {
    ++pos_;  // '['
    std::vector<JsonValue> items;
    SkipWhitespace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      *out = JsonValue::Array(std::move(items));
      return absl::OkStatus();
    }
    while (true) {
      items.emplace_back();
      if (absl::Status s = ParseValue(depth, &items.back()); !s.ok()) return s;
      SkipWhitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        *out = JsonValue::Array(std::move(items));
        return absl::OkStatus();
      }
      return Error("',' or ']'");
    }
  }

  bool Digit() const { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; }

  absl::Status ParseNumber(JsonValue* out) {
    const size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    if (!Digit()) return Error("a digit");
    if (text_[pos_] == '0') {
      ++pos_;
      if (Digit()) return Error("'.', 'e' or the end of the number after a leading 0");
    } else {
      while (Digit()) ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!Digit()) return Error("a digit after '.'");
      while (Digit()) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!Digit()) return Error("a digit in the exponent");
      while (Digit()) ++pos_;
    }
    *out = JsonValue::Number(std::string(text_.substr(start, pos_ - start)));
    return absl::OkStatus();
  }

  absl::Status ParseHex4(uint32_t* out) {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      if (pos_ >= text_.size()) return Error("4 hex digits after \\u");
      const char c = text_[pos_];
      uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return Error("4 hex digits after \\u");
      }
      value = value * 16 + digit;
      ++pos_;
    }
    *out = value;
    return absl::OkStatus();
  }

  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      *out += static_cast<char>(code);
    } else if (code < 0x800) {
      *out += static_cast<char>(0xc0 | (code >> 6));
      *out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      *out += static_cast<char>(0xe0 | (code >> 12));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      *out += static_cast<char>(0xf0 | (code >> 18));
      *out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (code & 0x3f));
    }
  }

  // One UTF-8 encoded character (not ASCII) copied to `out`; shortest form,
  // no surrogates, at most U+10FFFF.
  absl::Status CopyUtf8(std::string* out) {
    const unsigned char lead = static_cast<unsigned char>(text_[pos_]);
    int length;
    uint32_t code;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      code = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      code = lead & 0x0f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      code = lead & 0x07;
    } else {
      return Error("valid UTF-8 in a string");
    }
    if (pos_ + length > text_.size()) return Error("valid UTF-8 in a string");
    for (int i = 1; i < length; ++i) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_ + i]);
      if ((c & 0xc0) != 0x80) return Error("valid UTF-8 in a string");
      code = (code << 6) | (c & 0x3f);
    }
    const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
    if (overlong || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) {
      return Error("valid UTF-8 in a string");
    }
    out->append(text_.data() + pos_, length);
    pos_ += length;
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string* out) {
    ++pos_;  // '"'
    while (true) {
      if (pos_ >= text_.size()) return Error("'\"' closing the string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (c < 0x20) return Error("no control character in a string (escape it)");
      if (c >= 0x80) {
        if (absl::Status s = CopyUtf8(out); !s.ok()) return s;
        continue;
      }
      if (c != '\\') {
        *out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size()) return Error("an escape after '\\'");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          *out += e;
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t code = 0;
          if (absl::Status s = ParseHex4(&code); !s.ok()) return s;
          if (code >= 0xdc00 && code <= 0xdfff) return Error("a high surrogate before a low one");
          if (code >= 0xd800 && code <= 0xdbff) {
            if (!Consume("\\u")) return Error("a low surrogate (\\uDC00-\\uDFFF)");
            uint32_t low = 0;
            if (absl::Status s = ParseHex4(&low); !s.ok()) return s;
            if (low < 0xdc00 || low > 0xdfff) {
              pos_ -= 4;
              return Error("a low surrogate (\\uDC00-\\uDFFF)");
            }
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          }
          AppendUtf8(code, out);
          break;
        }
        default:
          --pos_;
          return Error("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
      }
    }
  }

  absl::string_view text_;
  const int max_depth_;
  size_t pos_ = 0;
};

}  // namespace

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string JsonNumber(float value) { return ShortestNumber(value); }
std::string JsonNumber(double value) { return ShortestNumber(value); }

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
  double value = 0;
  const std::from_chars_result r =
      std::from_chars(text_.data(), text_.data() + text_.size(), value);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow (±inf) or underflow (±0): decide from the exponent's sign via strtod.
    return std::strtod(text_.c_str(), nullptr);
  }
  return value;
}

bool JsonValue::NumberAsFloat(float* out) const {
  if (type_ != Type::kNumber) return false;
  float value = 0;
  const std::from_chars_result r =
      std::from_chars(text_.data(), text_.data() + text_.size(), value);
  if (r.ec == std::errc::result_out_of_range) {
    // Underflow rounds to 0 or a subnormal; overflow is refused.
    const float rounded = std::strtof(text_.c_str(), nullptr);
    if (!std::isfinite(rounded)) return false;
    value = rounded;
  } else if (r.ec != std::errc() || !std::isfinite(value)) {
    return false;
  }
  *out = value;
  return true;
}

bool JsonValue::NumberAsInt64(int64_t* out) const {
  if (type_ != Type::kNumber) return false;
  int64_t value = 0;
  const std::from_chars_result r =
      std::from_chars(text_.data(), text_.data() + text_.size(), value);
  if (r.ec != std::errc() || r.ptr != text_.data() + text_.size()) return false;
  *out = value;
  return true;
}

bool JsonValue::NumberAsUint64(uint64_t* out) const {
  if (type_ != Type::kNumber) return false;
  uint64_t value = 0;
  const std::from_chars_result r =
      std::from_chars(text_.data(), text_.data() + text_.size(), value);
  if (r.ec != std::errc() || r.ptr != text_.data() + text_.size()) return false;
  *out = value;
  return true;
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

absl::StatusOr<JsonValue> ParseJson(absl::string_view text, int max_depth) {
  return Parser(text, max_depth).ParseDocument();
}

}  // namespace invariant
