#include "tools/loadgen/oip_codec.h"

#include <charconv>
#include <cstring>
#include <system_error>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/format.h"

namespace invariant::loadgen {
namespace {

constexpr char kFp32[] = "FP32";

void AppendLittleEndian(uint32_t bits, std::string* out) {
  const char bytes[4] = {static_cast<char>(bits & 0xff), static_cast<char>((bits >> 8) & 0xff),
                         static_cast<char>((bits >> 16) & 0xff),
                         static_cast<char>((bits >> 24) & 0xff)};
  out->append(bytes, 4);
}

float FloatFromLittleEndian(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  const uint32_t bits = static_cast<uint32_t>(b[0]) | (static_cast<uint32_t>(b[1]) << 8) |
                        (static_cast<uint32_t>(b[2]) << 16) | (static_cast<uint32_t>(b[3]) << 24);
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Bytes per element of a datatype in binary form; 0 for BYTES (variable) or
// an unknown datatype.
int64_t ElementBytes(const std::string& datatype) {
  if (datatype == "BOOL" || datatype == "INT8" || datatype == "UINT8") return 1;
  if (datatype == "INT16" || datatype == "UINT16" || datatype == "FP16" || datatype == "BF16") {
    return 2;
  }
  if (datatype == "INT32" || datatype == "UINT32" || datatype == "FP32") return 4;
  if (datatype == "INT64" || datatype == "UINT64" || datatype == "FP64") return 8;
  return 0;
}

std::string Describe(char c) {
  if (c >= 0x20 && c < 0x7f) return absl::StrCat("'", std::string(1, c), "'");
  return absl::StrCat("byte 0x", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
}

// A strict recursive-descent reader of one JSON text (RFC 8259 grammar; the
// UTF-8 of strings is not checked). The first error sticks in status().
class JsonReader {
 public:
  explicit JsonReader(absl::string_view text) : text_(text) {}

  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

  bool Fail(const std::string& expected) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat("response byte ", pos_, ": expected ", expected, ", received ",
                       pos_ < text_.size() ? Describe(text_[pos_]) : "the end"));
    }
    return false;
  }
  bool FailMember(const std::string& member, const std::string& message) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(absl::StrCat(member, ": ", message));
    return false;
  }

  void SkipWhitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  char Peek() {
    SkipWhitespace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool AtEnd() {
    SkipWhitespace();
    return pos_ == text_.size();
  }

  // `member` is called with each key and must read its value.
  bool Object(int depth, absl::FunctionRef<bool(const std::string&)> member) {
    if (depth > kMaxJsonDepth) return Fail(absl::StrCat("nesting of at most ", kMaxJsonDepth));
    if (Peek() != '{') return Fail("'{'");
    ++pos_;
    if (Peek() == '}') {
      ++pos_;
      return true;
    }
    std::string key;
    while (true) {
      if (Peek() != '"') return Fail("a member name");
      if (!String(&key)) return false;
      if (Peek() != ':') return Fail("':'");
      ++pos_;
      if (!member(key)) return false;
      const char c = Peek();
      ++pos_;
      if (c == '}') return true;
      if (c != ',') {
        --pos_;
        return Fail("',' or '}'");
      }
    }
  }

  // `item` is called with each index and must read the item.
  bool Array(int depth, absl::FunctionRef<bool(int64_t)> item) {
    if (depth > kMaxJsonDepth) return Fail(absl::StrCat("nesting of at most ", kMaxJsonDepth));
    if (Peek() != '[') return Fail("'['");
    ++pos_;
    if (Peek() == ']') {
      ++pos_;
      return true;
    }
    for (int64_t i = 0;; ++i) {
      if (!item(i)) return false;
      const char c = Peek();
      ++pos_;
      if (c == ']') return true;
      if (c != ',') {
        --pos_;
        return Fail("',' or ']'");
      }
    }
  }

  // A string; its decoded value in `out` (may be null).
  bool String(std::string* out) {
    if (Peek() != '"') return Fail("a string");
    ++pos_;
    if (out != nullptr) out->clear();
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Fail("a character of a string");
      if (c != '\\') {
        if (out != nullptr) out->push_back(c);
        ++pos_;
        continue;
      }
      if (++pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      char plain = 0;
      switch (e) {
        case '"':
          plain = '"';
          break;
        case '\\':
          plain = '\\';
          break;
        case '/':
          plain = '/';
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          uint32_t code = 0;
          if (!Hex4(&code)) return false;
          if (code >= 0xd800 && code < 0xdc00) {
            uint32_t low = 0;
            if (text_.substr(pos_, 2) != "\\u") return Fail("a low surrogate escape");
            pos_ += 2;
            if (!Hex4(&low)) return false;
            if (low < 0xdc00 || low >= 0xe000) return Fail("a low surrogate");
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          } else if (code >= 0xdc00 && code < 0xe000) {
            return Fail("a high surrogate before a low one");
          }
          if (out != nullptr) AppendUtf8(code, out);
          continue;
        }
        default:
          --pos_;
          return Fail("an escape character");
      }
      if (out != nullptr) out->push_back(plain);
    }
    return Fail("'\"'");
  }

  // The literal text of a number, checked against the JSON grammar.
  bool NumberLiteral(absl::string_view* literal) {
    SkipWhitespace();
    const size_t start = pos_;
    auto digits = [this] {
      const size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      return Fail("a number");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return Fail("a digit after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Fail("a digit of the exponent");
    }
    *literal = text_.substr(start, pos_ - start);
    return true;
  }

  bool Int64(const std::string& member, int64_t* out) {
    const size_t at = (SkipWhitespace(), pos_);
    absl::string_view literal;
    if (!NumberLiteral(&literal)) return false;
    const auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), *out);
    if (ec != std::errc() || end != literal.data() + literal.size()) {
      pos_ = at;
      return FailMember(member, absl::StrCat("expected an integer, received ", literal));
    }
    return true;
  }

  bool Float(const std::string& member, float* out) {
    absl::string_view literal;
    if (!NumberLiteral(&literal)) return false;
    const auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), *out);
    if (ec != std::errc() || end != literal.data() + literal.size()) {
      return FailMember(member, absl::StrCat("expected a float, received ", literal));
    }
    return true;
  }

  bool Literal(absl::string_view word) {
    SkipWhitespace();
    if (text_.substr(pos_, word.size()) != word) return Fail(absl::StrCat("'", word, "'"));
    pos_ += word.size();
    return true;
  }

  bool SkipValue(int depth) {
    switch (Peek()) {
      case '{':
        return Object(depth, [&](const std::string&) { return SkipValue(depth + 1); });
      case '[':
        return Array(depth, [&](int64_t) { return SkipValue(depth + 1); });
      case '"':
        return String(nullptr);
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default: {
        absl::string_view literal;
        return NumberLiteral(&literal);
      }
    }
  }

 private:
  bool Hex4(uint32_t* code) {
    if (pos_ + 4 > text_.size()) return Fail("4 hex digits");
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_];
      uint32_t v;
      if (h >= '0' && h <= '9') {
        v = static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        v = static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        v = static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return Fail("a hex digit");
      }
      *code = (*code << 4) | v;
      ++pos_;
    }
    return true;
  }
  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  absl::Status status_;
};

// Reads the (possibly nested) "data" array of `tensor` at `depth`, counting
// its elements and keeping numbers as floats.
bool ReadData(JsonReader& reader, const std::string& member, int depth, OutputTensor* tensor) {
  return reader.Array(depth, [&](int64_t) {
    const char c = reader.Peek();
    if (c == '[') return ReadData(reader, member, depth + 1, tensor);
    ++tensor->elements;
    if (c == '"' || c == 't' || c == 'f' || c == 'n') return reader.SkipValue(depth + 1);
    float value = 0;
    if (!reader.Float(member, &value)) return false;
    tensor->fp32.push_back(value);
    return true;
  });
}

// One tensor object of "outputs" (or of the metadata's "inputs"); `member`
// names it in errors (e.g. "outputs[1]"). *binary_size is its
// binary_data_size parameter, or -1.
bool ReadTensor(JsonReader& reader, const std::string& member, int depth, OutputTensor* tensor,
                int64_t* binary_size) {
  tensor->name.clear();
  tensor->datatype.clear();
  tensor->shape.clear();
  tensor->binary = false;
  tensor->elements = 0;
  tensor->fp32.clear();
  *binary_size = -1;
  bool has_data = false;
  const bool read = reader.Object(depth, [&](const std::string& key) {
    if (key == "name") return reader.String(&tensor->name);
    if (key == "datatype") return reader.String(&tensor->datatype);
    if (key == "shape") {
      return reader.Array(depth + 1, [&](int64_t i) {
        int64_t dim = 0;
        if (!reader.Int64(absl::StrCat(member, ".shape[", i, "]"), &dim)) return false;
        tensor->shape.push_back(dim);
        return true;
      });
    }
    if (key == "data") {
      has_data = true;
      return ReadData(reader, member + ".data", depth + 1, tensor);
    }
    if (key == "parameters") {
      return reader.Object(depth + 1, [&](const std::string& parameter) {
        if (parameter != "binary_data_size") return reader.SkipValue(depth + 2);
        if (!reader.Int64(member + ".parameters.binary_data_size", binary_size)) return false;
        if (*binary_size < 0) {
          return reader.FailMember(member + ".parameters.binary_data_size",
                                   absl::StrCat("expected >= 0, received ", *binary_size));
        }
        return true;
      });
    }
    return reader.SkipValue(depth + 1);
  });
  if (!read) return false;
  if (has_data && *binary_size >= 0) {
    return reader.FailMember(member, "expected either \"data\" or binary_data_size, received both");
  }
  if (tensor->datatype != kFp32) tensor->fp32.clear();
  return true;
}

}  // namespace

EncodedInferRequest EncodeInferRequest(const float* values, int64_t rows, int64_t input_dim,
                                       const std::string& output, RestEncoding encoding) {
  const size_t n = static_cast<size_t>(rows * input_dim);
  EncodedInferRequest request;
  const std::string input_head =
      absl::StrCat("{\"inputs\":[{\"name\":\"", kOipInputName, "\",\"shape\":[", rows, ",",
                   input_dim, "],\"datatype\":\"", kFp32, "\"");
  if (encoding == RestEncoding::kJson) {
    request.body = absl::StrCat(input_head, ",\"data\":", cli::JsonFloatArray(values, n),
                                "}],\"outputs\":[{\"name\":", JsonString(output), "}]}");
    request.json_bytes = static_cast<int64_t>(request.body.size());
    request.content_type = "application/json";
    return request;
  }
  request.body = absl::StrCat(input_head, ",\"parameters\":{\"binary_data_size\":", 4 * n,
                              "}}],\"outputs\":[{\"name\":", JsonString(output),
                              ",\"parameters\":{\"binary_data\":true}}]}");
  request.json_bytes = static_cast<int64_t>(request.body.size());
  request.body.reserve(request.body.size() + 4 * n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    AppendLittleEndian(bits, &request.body);
  }
  request.content_type = "application/octet-stream";
  return request;
}

absl::Status DecodeInferResponse(absl::string_view body, int64_t json_bytes, InferResponse* out) {
  if (json_bytes < -1 || json_bytes > static_cast<int64_t>(body.size())) {
    return absl::InvalidArgumentError(absl::StrCat(kInferenceHeaderContentLength, ": expected 0..",
                                                   body.size(), " (the body's size), received ",
                                                   json_bytes));
  }
  const absl::string_view json =
      json_bytes < 0 ? body : body.substr(0, static_cast<size_t>(json_bytes));
  out->model_name.clear();
  out->model_version.clear();
  size_t used = 0;  // outputs filled
  std::vector<int64_t> binary_sizes;
  JsonReader reader(json);
  const bool read = reader.Object(0, [&](const std::string& key) {
    if (key == "model_name") return reader.String(&out->model_name);
    if (key == "model_version") return reader.String(&out->model_version);
    if (key != "outputs") return reader.SkipValue(1);
    return reader.Array(1, [&](int64_t i) {
      if (used == out->outputs.size()) out->outputs.emplace_back();
      int64_t binary_size = -1;
      if (!ReadTensor(reader, absl::StrCat("outputs[", i, "]"), 2, &out->outputs[used],
                      &binary_size)) {
        return false;
      }
      binary_sizes.push_back(binary_size);
      ++used;
      return true;
    });
  });
  out->outputs.resize(used);
  if (!read) return reader.status();
  if (!reader.AtEnd()) {
    reader.Fail("the end of the JSON");
    return reader.status();
  }
  size_t offset = json.size();
  for (size_t i = 0; i < used; ++i) {
    if (binary_sizes[i] < 0) continue;
    OutputTensor& tensor = out->outputs[i];
    const std::string member = absl::StrCat("outputs[", i, "]");
    const uint64_t size = static_cast<uint64_t>(binary_sizes[i]);
    if (size > body.size() - offset) {
      return absl::InvalidArgumentError(
          absl::StrCat(member, ".parameters.binary_data_size: expected at most the ",
                       body.size() - offset, " bytes left after the JSON, received ", size));
    }
    tensor.binary = true;
    const int64_t element_bytes = ElementBytes(tensor.datatype);
    if (element_bytes > 0) {
      if (size % static_cast<uint64_t>(element_bytes) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(member, ".parameters.binary_data_size: expected a multiple of ",
                         element_bytes, " for ", tensor.datatype, ", received ", size));
      }
      tensor.elements = static_cast<int64_t>(size) / element_bytes;
    } else {
      tensor.elements = -1;  // BYTES: not counted
    }
    if (tensor.datatype == kFp32) {
      tensor.fp32.resize(static_cast<size_t>(tensor.elements));
      for (int64_t k = 0; k < tensor.elements; ++k) {
        tensor.fp32[static_cast<size_t>(k)] =
            FloatFromLittleEndian(body.data() + offset + static_cast<size_t>(4 * k));
      }
    }
    offset += size;
  }
  if (offset != body.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("response body: expected ", offset,
                     " bytes (the JSON and the binary outputs), received ", body.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckInferOutput(const InferResponse& response, const std::string& name, int64_t rows,
                              bool binary) {
  std::vector<std::string> names;
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    const OutputTensor& t = response.outputs[i];
    if (t.name != name) {
      names.push_back(t.name);
      continue;
    }
    const std::string member = absl::StrCat("outputs[", i, "]");
    if (t.datatype != kFp32) {
      return absl::InvalidArgumentError(
          absl::StrCat(member, ".datatype: expected FP32, received '", t.datatype, "'"));
    }
    if (t.shape.size() != 2 || t.shape[0] != rows || t.shape[1] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(member, ".shape: expected [", rows,
                                                     ", n], received [",
                                                     absl::StrJoin(t.shape, ", "), "]"));
    }
    const int64_t expected = rows * t.shape[1];
    if (t.elements != expected || static_cast<int64_t>(t.fp32.size()) != expected) {
      return absl::InvalidArgumentError(
          absl::StrCat(member, ": expected ", expected, " values, received ", t.elements));
    }
    if (t.binary != binary) {
      return absl::InvalidArgumentError(
          binary ? absl::StrCat(member,
                                ": expected binary data (binary_data_size), received "
                                "a JSON \"data\" array")
                 : absl::StrCat(member,
                                ": expected a JSON \"data\" array, received binary "
                                "data"));
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("outputs: expected the output '", name,
                                                 "', received [", absl::StrJoin(names, ", "), "]"));
}

absl::StatusOr<int64_t> InputDimFromModelMetadata(absl::string_view body) {
  OutputTensor input;
  bool found = false;
  JsonReader reader(body);
  const bool read = reader.Object(0, [&](const std::string& key) {
    if (key != "inputs") return reader.SkipValue(1);
    return reader.Array(1, [&](int64_t i) {
      OutputTensor tensor;
      int64_t ignored;
      if (!ReadTensor(reader, absl::StrCat("inputs[", i, "]"), 2, &tensor, &ignored)) return false;
      if (!found) input = std::move(tensor);
      found = true;
      return true;
    });
  });
  if (!read) return reader.status();
  if (!reader.AtEnd()) {
    reader.Fail("the end of the JSON");
    return reader.status();
  }
  if (!found) return absl::InvalidArgumentError("model metadata: expected an input, received none");
  int64_t dim = 1;
  for (size_t i = 1; i < input.shape.size(); ++i) {
    if (input.shape[i] < 1 || input.shape[i] > (int64_t{1} << 31) / dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model metadata: inputs[0].shape: expected positive dimensions after the batch one, "
          "received [",
          absl::StrJoin(input.shape, ", "), "]"));
    }
    dim *= input.shape[i];
  }
  if (input.shape.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("model metadata: inputs[0].shape: expected [-1, dims...], received [",
                     absl::StrJoin(input.shape, ", "), "]"));
  }
  return dim;
}

std::string ErrorMessageFromBody(absl::string_view body) {
  std::string message;
  bool found = false;
  JsonReader reader(body);
  const bool read = reader.Object(0, [&](const std::string& key) {
    if (key != "error" || reader.Peek() != '"') return reader.SkipValue(1);
    found = true;
    return reader.String(&message);
  });
  if (read && found && reader.AtEnd()) return message;
  return std::string(body.substr(0, 200));
}

}  // namespace invariant::loadgen
