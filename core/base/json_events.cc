// ParseJsonEvents (json.h): RapidJSON's SAX reader, iterative (no recursion),
// reading numbers as their literal text, validating UTF-8, plus what RapidJSON
// does not check: the nesting limit, repeated keys, the decoded strings'
// UTF-8 (RapidJSON 1.1 decodes a lone low surrogate escape), the end of the
// input (RapidJSON's MemoryStream reads a NUL byte as the end).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/json.h"
#include "rapidjson/error/error.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"

namespace invariant {
namespace {

constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag |
                            rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag;

// What the reader saw at an offset, for error messages.
std::string Describe(absl::string_view text, size_t pos) {
  if (pos >= text.size()) return "the end of the input";
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c >= 0x20 && c < 0x7f) return absl::StrCat("'", std::string(1, text[pos]), "'");
  return absl::StrFormat("byte 0x%02x", c);
}

absl::Status ByteError(absl::string_view text, size_t pos, absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("byte ", pos, ": expected ", expected, ", received ", Describe(text, pos)));
}

// `text` quoted, cut at a character boundary after kMaxJsonEchoBytes bytes.
std::string Echo(absl::string_view text) {
  if (text.size() <= kMaxJsonEchoBytes) return JsonString(text);
  size_t cut = kMaxJsonEchoBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return absl::StrCat(JsonString(text.substr(0, cut)), "...(", text.size(), " bytes)");
}

// Strict UTF-8: shortest forms, no surrogates, at most U+10FFFF.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
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
      return false;
    }
    if (i + length > s.size()) return false;
    for (int k = 1; k < length; ++k) {
      const unsigned char c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      code = (code << 6) | (c & 0x3f);
    }
    const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
    if (overlong || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return false;
    i += length;
  }
  return true;
}

// The offset of the '"' opening the string whose closing '"' is at `close`.
size_t StringStart(absl::string_view text, size_t close) {
  size_t p = close;
  while (p > 0) {
    --p;
    if (text[p] != '"') continue;
    size_t backslashes = 0;
    while (p > backslashes && text[p - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return p;
  }
  return 0;
}

class Adapter : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Adapter> {
 public:
  Adapter(absl::string_view text, const rapidjson::MemoryStream& stream, JsonEvents& events,
          int max_depth)
      : text_(text), stream_(stream), events_(events), max_depth_(max_depth) {}

  const absl::Status& status() const { return status_; }

  bool Null() { return Take(events_.Null()); }
  bool Bool(bool value) { return Take(events_.Bool(value)); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    return Take(events_.Number(absl::string_view(s, n)));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    const absl::string_view value(s, n);
    if (!IsValidUtf8(value)) return BadString();
    return Take(events_.String(value));
  }
  bool StartObject() {
    if (!Enter()) return false;
    if (open_objects_ == key_sets_.size()) key_sets_.emplace_back();
    key_sets_[open_objects_++].clear();
    return Take(events_.StartObject());
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    const absl::string_view key(s, n);
    if (!IsValidUtf8(key)) return BadString();
    if (!key_sets_[open_objects_ - 1].emplace(key).second) {
      return Take(absl::InvalidArgumentError(
          absl::StrCat("byte ", StringStart(text_, Closing()),
                       ": expected each key once in an object, received ", Echo(key), " again")));
    }
    return Take(events_.Key(key));
  }
  bool EndObject(rapidjson::SizeType members) {
    --depth_;
    --open_objects_;
    return Take(events_.EndObject(members));
  }
  bool StartArray() {
    if (!Enter()) return false;
    return Take(events_.StartArray());
  }
  bool EndArray(rapidjson::SizeType items) {
    --depth_;
    return Take(events_.EndArray(items));
  }

 private:
  bool Take(absl::Status status) {
    if (status.ok()) return true;
    status_ = std::move(status);
    return false;
  }

  // The offset of the '"' just read (RapidJSON calls String / Key after it).
  size_t Closing() const { return stream_.Tell() == 0 ? 0 : stream_.Tell() - 1; }

  bool BadString() {
    return Take(ByteError(text_, StringStart(text_, Closing()),
                          "a string of valid UTF-8 (\\uDC00-\\uDFFF only after a high "
                          "surrogate)"));
  }

  bool Enter() {
    if (depth_ >= max_depth_) {
      // RapidJSON calls StartObject / StartArray before it takes the bracket.
      return Take(ByteError(text_, stream_.Tell(),
                            absl::StrCat("at most ", max_depth_, " levels of nesting")));
    }
    ++depth_;
    return true;
  }

  absl::string_view text_;
  const rapidjson::MemoryStream& stream_;
  JsonEvents& events_;
  const int max_depth_;
  int depth_ = 0;
  size_t open_objects_ = 0;
  // The keys of each open object, reused from object to object.
  std::vector<absl::flat_hash_set<std::string>> key_sets_;
  absl::Status status_;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// RapidJSON stops a number "0" before a digit and then misses a separator:
// name the real cause.
bool AfterLeadingZero(absl::string_view text, size_t pos) {
  if (pos == 0 || pos >= text.size() || !IsDigit(text[pos]) || text[pos - 1] != '0') return false;
  if (pos == 1) return true;
  const char before = text[pos - 2];
  return !IsDigit(before) && before != '.' && before != 'e' && before != 'E' && before != '+';
}

absl::Status SyntaxError(absl::string_view text, size_t pos, rapidjson::ParseErrorCode code) {
  switch (code) {
    case rapidjson::kParseErrorDocumentEmpty:
      return ByteError(text, pos, "a value");
    case rapidjson::kParseErrorDocumentRootNotSingular:
    case rapidjson::kParseErrorObjectMissCommaOrCurlyBracket:
    case rapidjson::kParseErrorArrayMissCommaOrSquareBracket:
      if (AfterLeadingZero(text, pos)) {
        return ByteError(text, pos, "'.', 'e' or the end of the number after a leading 0");
      }
      if (code == rapidjson::kParseErrorDocumentRootNotSingular) {
        return ByteError(text, pos, "the end of the input after the value");
      }
      return ByteError(text, pos,
                       code == rapidjson::kParseErrorArrayMissCommaOrSquareBracket ? "',' or ']'"
                                                                                   : "',' or '}'");
    case rapidjson::kParseErrorValueInvalid:
      // RapidJSON fails "tru" at its end: point at the word's start.
      while (pos > 0 && pos <= text.size() && IsLower(text[pos - 1])) --pos;
      return ByteError(text, pos, "a value (object, array, string, number, true, false or null)");
    case rapidjson::kParseErrorObjectMissName:
      return ByteError(text, pos, "a string key");
    case rapidjson::kParseErrorObjectMissColon:
      return ByteError(text, pos, "':'");
    case rapidjson::kParseErrorStringUnicodeEscapeInvalidHex:
      // RapidJSON points at the backslash: point at the first byte that is not hex.
      if (pos < text.size() && text[pos] == '\\') pos += 2;
      for (int i = 0; i < 4 && pos < text.size() && IsHex(text[pos]); ++i) ++pos;
      return ByteError(text, pos, "4 hex digits after \\u");
    case rapidjson::kParseErrorStringUnicodeSurrogateInvalid:
      return ByteError(text, pos, "a high surrogate followed by a low one (\\uDC00-\\uDFFF)");
    case rapidjson::kParseErrorStringEscapeInvalid:
      if (pos + 1 < text.size() && text[pos] == '\\') ++pos;  // the byte after the backslash
      if (pos < text.size() && static_cast<unsigned char>(text[pos]) < 0x20) {
        return ByteError(text, pos, "no control character in a string (escape it)");
      }
      return ByteError(text, pos, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
    case rapidjson::kParseErrorStringMissQuotationMark:
      if (pos < text.size()) {
        return ByteError(text, pos, "no control character in a string (escape it)");
      }
      return ByteError(text, pos, "'\"' closing the string");
    case rapidjson::kParseErrorStringInvalidEncoding:
      return ByteError(text, pos, "valid UTF-8 in a string");
    case rapidjson::kParseErrorNumberTooBig:
      return ByteError(text, pos, "a number within the range of a double");
    case rapidjson::kParseErrorNumberMissFraction:
      return ByteError(text, pos, "a digit after '.'");
    case rapidjson::kParseErrorNumberMissExponent:
      return ByteError(text, pos, "a digit in the exponent");
    default:
      return ByteError(text, pos, "valid JSON");
  }
}

}  // namespace

absl::Status ParseJsonEvents(absl::string_view text, JsonEvents& events, int max_depth) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  Adapter adapter(text, stream, events, max_depth);
  rapidjson::Reader reader;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, adapter);
  if (result.IsError()) {
    if (result.Code() == rapidjson::kParseErrorTermination && !adapter.status().ok()) {
      return adapter.status();
    }
    return SyntaxError(text, result.Offset(), result.Code());
  }
  if (stream.Tell() != text.size()) {
    return ByteError(text, stream.Tell(), "the end of the input after the value");
  }
  return absl::OkStatus();
}

}  // namespace invariant
