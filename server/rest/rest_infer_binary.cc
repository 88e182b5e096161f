#include "server/rest/rest_infer_binary.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "protocol/binary_tensor_data.h"
#include "server/handlers/validation.h"
#include "server/rest/rest_infer_events.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "binary tensor data is little-endian: copying it into floats needs a little-endian host"
#endif

namespace invariant::server::rest_internal {
namespace {

using google::protobuf::RepeatedField;
using inference::ModelInferRequest;

constexpr char kBytes[] = "BYTES";

// The most elements a binary BYTES input may hold (the server's default
// --max_request_rows): each becomes its own string, so a body of empty
// elements must not turn 16 MiB into millions of allocations before the
// handler's row limit sees the tensor.
constexpr uint64_t kMaxBytesElements = 65536;

// A BYTES input's binary data: shape-many elements, each a 4-byte
// little-endian length and that many bytes, filling the data exactly.
absl::Status TakeBinaryBytes(const std::string& input_field, absl::string_view data,
                             ModelInferRequest::InferInputTensor* tensor) {
  const std::string field = input_field + ".parameters.binary_data_size";
  uint64_t elements = 1;
  for (int64_t dim : tensor->shape()) {
    if (dim < 0 || __builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements)) {
      return Invalid(input_field + ".shape", "non-negative dimensions for a binary input",
                     EchoShape(tensor->shape()));
    }
  }
  if (elements > kMaxBytesElements) {
    return Invalid(input_field + ".shape",
                   absl::StrCat("at most ", kMaxBytesElements, " BYTES elements"),
                   EchoShape(tensor->shape()));
  }
  // Each element takes at least its 4-byte length.
  if (elements > data.size() / 4) {
    return Invalid(field,
                   absl::StrCat("at least 4 bytes (a length) for each of the ", elements,
                                " BYTES elements of shape ", EchoShape(tensor->shape())),
                   absl::StrCat(data.size()));
  }
  auto* out = tensor->mutable_contents()->mutable_bytes_contents();
  out->Reserve(static_cast<int>(elements));
  size_t offset = 0;
  for (uint64_t i = 0; i < elements; ++i) {
    if (data.size() - offset < 4) {
      return Invalid(field, absl::StrCat("a 4-byte length for BYTES element ", i),
                     absl::StrCat(data.size() - offset, " bytes left of ", data.size()));
    }
    uint32_t length;
    std::memcpy(&length, data.data() + offset, sizeof(length));
    offset += 4;
    if (length > data.size() - offset) {
      return Invalid(field,
                     absl::StrCat("BYTES element ", i, " of ", length,
                                  " bytes (its length prefix) within the data"),
                     absl::StrCat(data.size() - offset, " bytes left of ", data.size()));
    }
    out->Add(std::string(data.substr(offset, length)));
    offset += length;
  }
  if (offset != data.size()) {
    return Invalid(field,
                   absl::StrCat(offset, " bytes (", elements, " BYTES elements of shape ",
                                EchoShape(tensor->shape()), ")"),
                   absl::StrCat(data.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<size_t> JsonLength(const std::string& header, size_t body_size) {
  absl::string_view text = header;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  uint64_t value = 0;
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  const std::from_chars_result r =
      digits ? std::from_chars(text.data(), text.data() + text.size(), value)
             : std::from_chars_result{text.data(), std::errc::invalid_argument};
  if (r.ec != std::errc() || value > body_size) {
    return Invalid(
        kInferenceHeaderContentLength,
        absl::StrCat("a decimal byte count of at most ", body_size, " (the body's size)"),
        Quoted(header));
  }
  return static_cast<size_t>(value);
}

absl::Status BinarySection::Take(const std::string& field, int64_t size,
                                 ModelInferRequest::InferInputTensor* tensor) {
  const std::string size_field = field + ".parameters.binary_data_size";
  const std::string& datatype = tensor->datatype();
  const size_t element = BinaryElementBytes(datatype);
  if (element > 0) {
    uint64_t expected = element;
    bool overflow = false;
    for (int64_t dim : tensor->shape()) {
      if (dim < 0) {
        return Invalid(field + ".shape", "non-negative dimensions for a binary input",
                       EchoShape(tensor->shape()));
      }
      overflow =
          overflow || __builtin_mul_overflow(expected, static_cast<uint64_t>(dim), &expected);
    }
    if (overflow || expected != static_cast<uint64_t>(size)) {
      return Invalid(size_field,
                     absl::StrCat(overflow ? std::string("more than 2^64") : absl::StrCat(expected),
                                  " (shape ", EchoShape(tensor->shape()), " × ", element,
                                  " bytes of ", datatype, ")"),
                     absl::StrCat(size));
    }
  }
  if (!has_header_) {
    return Invalid(
        size_field,
        absl::StrCat("no binary input without the header ", kInferenceHeaderContentLength),
        absl::StrCat(size));
  }
  const size_t left = binary_.size() - offset_;
  if (static_cast<uint64_t>(size) > left) {
    return Invalid(size_field,
                   absl::StrCat("at most ", left,
                                " (the binary bytes after the JSON not taken by earlier inputs)"),
                   absl::StrCat(size));
  }
  const char* bytes = binary_.data() + offset_;
  inference::InferTensorContents* contents = tensor->mutable_contents();
  if (datatype == kFp32) {
    RepeatedField<float>* floats = contents->mutable_fp32_contents();
    floats->Resize(static_cast<int>(size / sizeof(float)), 0.0f);
    if (size > 0) std::memcpy(floats->mutable_data(), bytes, size);
  } else if (datatype == "INT16") {
    RepeatedField<int32_t>* ints = contents->mutable_int_contents();
    ints->Resize(static_cast<int>(size / sizeof(int16_t)), 0);
    for (int i = 0; i < ints->size(); ++i) {
      int16_t v;
      std::memcpy(&v, bytes + sizeof(int16_t) * i, sizeof(v));
      ints->Set(i, v);
    }
  } else if (datatype == "INT32") {
    RepeatedField<int32_t>* ints = contents->mutable_int_contents();
    ints->Resize(static_cast<int>(size / sizeof(int32_t)), 0);
    if (size > 0) std::memcpy(ints->mutable_data(), bytes, size);
  } else if (datatype == "INT64") {
    RepeatedField<int64_t>* ints = contents->mutable_int64_contents();
    ints->Resize(static_cast<int>(size / sizeof(int64_t)), 0);
    if (size > 0) std::memcpy(ints->mutable_data(), bytes, size);
  } else if (datatype == kBytes) {
    RETURN_IF_ERROR(
        TakeBinaryBytes(field, absl::string_view(bytes, static_cast<size_t>(size)), tensor));
  }
  offset_ += static_cast<size_t>(size);
  return absl::OkStatus();
}

absl::Status BinarySection::Finish() const {
  if (offset_ == binary_.size()) return absl::OkStatus();
  return Invalid("request body",
                 absl::StrCat(offset_,
                              " bytes of binary tensor data after the JSON (the sum of the "
                              "inputs' parameters.binary_data_size)"),
                 absl::StrCat(binary_.size(), " bytes after the ", json_size_,
                              "-byte JSON (Inference-Header-Content-Length)"));
}

}  // namespace invariant::server::rest_internal
