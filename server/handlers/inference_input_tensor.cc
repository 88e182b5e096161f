#include "server/handlers/inference_input_tensor.h"

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/handlers/inference_tensors.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw tensor contents are little-endian: a little-endian host is needed"
#endif

namespace invariant::server {
namespace {

// The first typed contents field holding values other than `allowed`, or "".
std::string OtherContents(const inference::InferTensorContents& c, const std::string& allowed) {
  const std::pair<const char*, int> fields[] = {
      {"bool_contents", c.bool_contents_size()},     {"int_contents", c.int_contents_size()},
      {"int64_contents", c.int64_contents_size()},   {"uint_contents", c.uint_contents_size()},
      {"uint64_contents", c.uint64_contents_size()}, {"fp32_contents", c.fp32_contents_size()},
      {"fp64_contents", c.fp64_contents_size()},     {"bytes_contents", c.bytes_contents_size()}};
  for (const auto& [name, size] : fields) {
    if (size > 0 && allowed != name) return name;
  }
  return "";
}

}  // namespace

absl::Status Invalid(const std::string& field, const std::string& expected,
                     const std::string& received) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": expected ", expected, ", received ", received));
}

std::string TensorData::typed_field(const char* typed) const {
  return TensorDataField(index, typed, json);
}

std::string TensorData::field() const {
  return raw != nullptr ? absl::StrCat("raw_input_contents[", index, "]")
                        : absl::StrCat("inputs[", index, "].contents");
}

absl::Status CheckContentsField(const TensorData& t, const std::string& allowed) {
  if (t.raw != nullptr) {
    if (t.tensor->has_contents()) {
      return Invalid(absl::StrCat("inputs[", t.index, "].contents"),
                     "no contents when raw_input_contents is used", "both");
    }
    return absl::OkStatus();
  }
  const std::string other = OtherContents(t.tensor->contents(), allowed);
  if (!other.empty()) {
    return Invalid(absl::StrCat("inputs[", t.index, "].contents"),
                   absl::StrCat(allowed, " for datatype ", t.tensor->datatype()), other);
  }
  return absl::OkStatus();
}

absl::Status BytesElements(const TensorData& input, int64_t n, const char* what,
                           std::vector<std::string_view>* out) {
  if (absl::Status s = CheckContentsField(input, "bytes_contents"); !s.ok()) return s;
  out->reserve(static_cast<size_t>(n));
  if (input.raw == nullptr) {
    const auto& elements = input.tensor->contents().bytes_contents();
    if (elements.size() != n) {
      return Invalid(input.typed_field("bytes_contents"),
                     absl::StrCat(n, " elements (", what, ") for shape [", n, "]"),
                     absl::StrCat(elements.size()));
    }
    for (const std::string& e : elements) out->push_back(e);
    return absl::OkStatus();
  }
  const std::string& raw = *input.raw;
  size_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (raw.size() - offset < 4) {
      return Invalid(input.field(),
                     absl::StrCat(n, " elements, each a 4-byte little-endian length and the bytes"),
                     absl::StrCat("no length for element ", i, " (", raw.size(), " bytes)"));
    }
    uint32_t length;
    std::memcpy(&length, raw.data() + offset, 4);
    offset += 4;
    if (length > raw.size() - offset) {
      return Invalid(
          input.field(),
          absl::StrCat("element ", i, " of ", length, " bytes within the ", raw.size(), " bytes"),
          absl::StrCat(raw.size() - offset, " bytes left"));
    }
    out->push_back(std::string_view(raw).substr(offset, length));
    offset += length;
  }
  if (offset != raw.size()) {
    return Invalid(input.field(), absl::StrCat(offset, " bytes (", n, " elements)"),
                   absl::StrCat(raw.size(), " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace invariant::server
