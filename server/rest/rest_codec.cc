// rest_codec.h: the response side (InferResponseToHttp and the metadata
// messages), written straight into one string with json.h's Append writers.
// The request side is rest_infer_request.cc.
#include "server/rest/rest_codec.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "binary tensor data is little-endian: writing it from the contents needs a little-endian host"
#endif

namespace invariant::server {
namespace {

using google::protobuf::Map;
using google::protobuf::RepeatedField;
using inference::InferParameter;
using OutputTensor = inference::ModelInferResponse::InferOutputTensor;

constexpr char kFp32[] = "FP32";

// The parameters sorted by key; with `binary_size` set, "binary_data_size"
// is that value (whatever the tensor carried under that key).
void AppendParametersJson(const Map<std::string, InferParameter>& parameters,
                          const int64_t* binary_size, std::string* out) {
  std::map<absl::string_view, const InferParameter*> sorted;
  for (const auto& [key, value] : parameters) sorted[key] = &value;
  InferParameter binary;
  if (binary_size != nullptr) {
    binary.set_int64_param(*binary_size);
    sorted[kBinaryDataSize] = &binary;
  }
  *out += '{';
  bool first = true;
  for (const auto& [key, parameter] : sorted) {
    if (!first) *out += ',';
    first = false;
    AppendJsonString(key, out);
    *out += ':';
    switch (parameter->parameter_choice_case()) {
      case InferParameter::kBoolParam:
        *out += parameter->bool_param() ? "true" : "false";
        break;
      case InferParameter::kInt64Param:
        absl::StrAppend(out, parameter->int64_param());
        break;
      case InferParameter::kStringParam:
        AppendJsonString(parameter->string_param(), out);
        break;
      case InferParameter::kDoubleParam:
        AppendJsonNumber(parameter->double_param(), out);
        break;
      case InferParameter::kUint64Param:
        absl::StrAppend(out, parameter->uint64_param());
        break;
      default:
        *out += "null";
    }
  }
  *out += '}';
}

void AppendShapeJson(const RepeatedField<int64_t>& shape, std::string* out) {
  *out += '[';
  for (int i = 0; i < shape.size(); ++i) {
    if (i > 0) *out += ',';
    absl::StrAppend(out, shape[i]);
  }
  *out += ']';
}

template <typename T>
void AppendNumber(T value, std::string* out) {
  if constexpr (std::is_floating_point_v<T>) {
    AppendJsonNumber(value, out);
  } else {
    absl::StrAppend(out, value);
  }
}

template <typename T>
void AppendNumbers(const RepeatedField<T>& values, std::string* out) {
  for (int i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    AppendNumber(values[i], out);
  }
}

template <typename T>
void AppendRawNumbers(const std::string& raw, std::string* out) {
  const size_t n = raw.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T value;
    std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
    if (i > 0) *out += ',';
    AppendNumber(value, out);
  }
}

uint32_t ReadLength(const std::string& raw, size_t pos) {
  uint32_t length = 0;
  for (int i = 3; i >= 0; --i) length = length << 8 | static_cast<uint8_t>(raw[pos + i]);
  return length;
}

// The elements of a raw BYTES tensor: each a 4-byte little-endian length + bytes.
void AppendRawBytes(const std::string& raw, std::string* out) {
  size_t pos = 0;
  bool first = true;
  while (pos + 4 <= raw.size()) {
    const uint32_t length = ReadLength(raw, pos);
    pos += 4;
    const size_t take = std::min<size_t>(length, raw.size() - pos);
    if (!first) *out += ',';
    AppendJsonString(absl::string_view(raw).substr(pos, take), out);
    first = false;
    pos += take;
  }
}

void AppendDataJson(const OutputTensor& tensor, const std::string* raw, std::string* out) {
  const std::string& type = tensor.datatype();
  const inference::InferTensorContents& contents = tensor.contents();
  *out += '[';
  if (raw != nullptr) {
    if (type == kFp32) {
      AppendRawNumbers<float>(*raw, out);
    } else if (type == "FP64") {
      AppendRawNumbers<double>(*raw, out);
    } else if (type == "INT32") {
      AppendRawNumbers<int32_t>(*raw, out);
    } else if (type == "INT64") {
      AppendRawNumbers<int64_t>(*raw, out);
    } else if (type == "BYTES") {
      AppendRawBytes(*raw, out);
    }
  } else if (type == kFp32) {
    AppendNumbers(contents.fp32_contents(), out);
  } else if (type == "FP64") {
    AppendNumbers(contents.fp64_contents(), out);
  } else if (type == "INT32") {
    AppendNumbers(contents.int_contents(), out);
  } else if (type == "INT64") {
    AppendNumbers(contents.int64_contents(), out);
  } else if (type == "BYTES") {
    for (int i = 0; i < contents.bytes_contents_size(); ++i) {
      if (i > 0) *out += ',';
      AppendJsonString(contents.bytes_contents(i), out);
    }
  }
  *out += ']';
}

// The binary form of a tensor's typed contents (raw contents are already in
// it): FP32 / FP64 / INT32 / INT64 little-endian, BYTES as 4-byte length +
// bytes; nothing for other datatypes. Size first, then the bytes.
template <typename T>
void AppendLittleEndian(const RepeatedField<T>& values, std::string* out) {
  out->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

size_t BinarySize(const OutputTensor& tensor) {
  const inference::InferTensorContents& c = tensor.contents();
  const std::string& type = tensor.datatype();
  if (type == kFp32) return c.fp32_contents_size() * sizeof(float);
  if (type == "FP64") return c.fp64_contents_size() * sizeof(double);
  if (type == "INT32") return c.int_contents_size() * sizeof(int32_t);
  if (type == "INT64") return c.int64_contents_size() * sizeof(int64_t);
  if (type != "BYTES") return 0;
  size_t size = 0;
  for (const std::string& s : c.bytes_contents()) size += 4 + s.size();
  return size;
}

void AppendBinary(const OutputTensor& tensor, std::string* out) {
  const inference::InferTensorContents& c = tensor.contents();
  const std::string& type = tensor.datatype();
  if (type == kFp32) {
    AppendLittleEndian(c.fp32_contents(), out);
  } else if (type == "FP64") {
    AppendLittleEndian(c.fp64_contents(), out);
  } else if (type == "INT32") {
    AppendLittleEndian(c.int_contents(), out);
  } else if (type == "INT64") {
    AppendLittleEndian(c.int64_contents(), out);
  } else if (type == "BYTES") {
    for (const std::string& s : c.bytes_contents()) {
      const uint32_t n = static_cast<uint32_t>(s.size());
      const char length[4] = {static_cast<char>(n), static_cast<char>(n >> 8),
                              static_cast<char>(n >> 16), static_cast<char>(n >> 24)};
      out->append(length, 4);
      out->append(s);
    }
  }
}

// Whether `request` asks for the output `name` in binary: the output's
// "binary_data" parameter, else the request's "binary_data_output".
bool WantsBinary(const inference::ModelInferRequest& request, const std::string& name) {
  const auto is_true = [](const Map<std::string, InferParameter>& parameters, const char* key,
                          bool* value) {
    const auto it = parameters.find(key);
    if (it == parameters.end() ||
        it->second.parameter_choice_case() != InferParameter::kBoolParam) {
      return false;
    }
    *value = it->second.bool_param();
    return true;
  };
  bool value = false;
  for (const auto& output : request.outputs()) {
    if (output.name() == name && is_true(output.parameters(), kBinaryData, &value)) return value;
  }
  return is_true(request.parameters(), kBinaryDataOutput, &value) && value;
}

// An upper bound of the JSON's size (16 bytes a number: the longest
// shortest float, "-1.17549435e-38", and a comma), so the body is allocated
// once; binary outputs take no room in the JSON.
size_t EstimateJsonBytes(const inference::ModelInferResponse& response,
                         const std::vector<bool>& binary) {
  size_t bytes = 256;
  for (int i = 0; i < response.outputs_size(); ++i) {
    const inference::InferTensorContents& c = response.outputs(i).contents();
    bytes += 128;
    if (binary[i]) continue;
    bytes += 16 * static_cast<size_t>(c.fp32_contents_size() + c.int_contents_size()) +
             25 * static_cast<size_t>(c.fp64_contents_size() + c.int64_contents_size());
    for (const std::string& s : c.bytes_contents()) bytes += s.size() + 8;
    if (i < response.raw_output_contents_size())
      bytes += 7 * response.raw_output_contents(i).size();
  }
  return bytes;
}

void AppendTensorMetadataJson(const google::protobuf::RepeatedPtrField<
                                  inference::ModelMetadataResponse::TensorMetadata>& tensors,
                              std::string* out) {
  *out += '[';
  for (int i = 0; i < tensors.size(); ++i) {
    *out += i ? ",{\"name\":" : "{\"name\":";
    AppendJsonString(tensors[i].name(), out);
    *out += ",\"datatype\":";
    AppendJsonString(tensors[i].datatype(), out);
    *out += ",\"shape\":";
    AppendShapeJson(tensors[i].shape(), out);
    *out += '}';
  }
  *out += ']';
}

void AppendStringArrayJson(const google::protobuf::RepeatedPtrField<std::string>& values,
                           std::string* out) {
  *out += '[';
  for (int i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    AppendJsonString(values[i], out);
  }
  *out += ']';
}

}  // namespace

bool WantsAllBinary(const inference::ModelInferRequest& request) {
  if (request.outputs().empty()) {  // every output, each as the request asks
    const auto it = request.parameters().find(kBinaryDataOutput);
    return it != request.parameters().end() &&
           it->second.parameter_choice_case() == InferParameter::kBoolParam &&
           it->second.bool_param();
  }
  for (const auto& output : request.outputs()) {
    if (!WantsBinary(request, output.name())) return false;
  }
  return true;
}

RestBody InferResponseToHttp(const inference::ModelInferResponse& response,
                             const inference::ModelInferRequest& request) {
  const int n = response.outputs_size();
  // Per output: null when written as JSON, else its raw bytes or typed
  // contents, and their size.
  std::vector<bool> binary(n, false);
  std::vector<int64_t> binary_size(n, 0);
  size_t binary_total = 0;
  for (int i = 0; i < n; ++i) {
    const OutputTensor& tensor = response.outputs(i);
    if (!WantsBinary(request, tensor.name())) continue;
    binary[i] = true;
    binary_size[i] = static_cast<int64_t>(i < response.raw_output_contents_size()
                                              ? response.raw_output_contents(i).size()
                                              : BinarySize(tensor));
    binary_total += static_cast<size_t>(binary_size[i]);
  }

  RestBody result;
  std::string& out = result.body;
  out.reserve(EstimateJsonBytes(response, binary) + binary_total);
  out += "{\"model_name\":";
  AppendJsonString(response.model_name(), &out);
  out += ",\"model_version\":";
  AppendJsonString(response.model_version(), &out);
  out += ",\"id\":";
  AppendJsonString(response.id(), &out);
  if (!response.parameters().empty()) {
    out += ",\"parameters\":";
    AppendParametersJson(response.parameters(), nullptr, &out);
  }
  out += ",\"outputs\":[";
  bool any_binary = false;
  for (int i = 0; i < n; ++i) {
    const OutputTensor& tensor = response.outputs(i);
    out += i ? ",{\"name\":" : "{\"name\":";
    AppendJsonString(tensor.name(), &out);
    out += ",\"datatype\":";
    AppendJsonString(tensor.datatype(), &out);
    out += ",\"shape\":";
    AppendShapeJson(tensor.shape(), &out);
    if (!tensor.parameters().empty() || binary[i]) {
      out += ",\"parameters\":";
      AppendParametersJson(tensor.parameters(), binary[i] ? &binary_size[i] : nullptr, &out);
    }
    if (binary[i]) {
      any_binary = true;
    } else {
      out += ",\"data\":";
      const std::string* raw =
          i < response.raw_output_contents_size() ? &response.raw_output_contents(i) : nullptr;
      AppendDataJson(tensor, raw, &out);
    }
    out += '}';
  }
  out += "]}";
  if (!any_binary) return result;
  result.json_size = out.size();
  for (int i = 0; i < n; ++i) {
    if (!binary[i]) continue;
    if (i < response.raw_output_contents_size()) {
      out += response.raw_output_contents(i);
    } else {
      AppendBinary(response.outputs(i), &out);
    }
  }
  return result;
}

std::string InferResponseToJson(const inference::ModelInferResponse& response) {
  return InferResponseToHttp(response, inference::ModelInferRequest()).body;
}

std::string ServerMetadataToJson(const inference::ServerMetadataResponse& response) {
  std::string out = "{\"name\":";
  AppendJsonString(response.name(), &out);
  out += ",\"version\":";
  AppendJsonString(response.version(), &out);
  out += ",\"extensions\":";
  AppendStringArrayJson(response.extensions(), &out);
  out += '}';
  return out;
}

std::string ModelMetadataToJson(const inference::ModelMetadataResponse& response) {
  std::string out = "{\"name\":";
  AppendJsonString(response.name(), &out);
  out += ",\"versions\":";
  AppendStringArrayJson(response.versions(), &out);
  out += ",\"platform\":";
  AppendJsonString(response.platform(), &out);
  out += ",\"inputs\":";
  AppendTensorMetadataJson(response.inputs(), &out);
  out += ",\"outputs\":";
  AppendTensorMetadataJson(response.outputs(), &out);
  out += ",\"properties\":{";
  const std::map<std::string, std::string> properties(response.properties().begin(),
                                                      response.properties().end());
  bool first = true;
  for (const auto& [key, value] : properties) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(key, &out);
    out += ':';
    AppendJsonString(value, &out);
  }
  out += "}}";
  return out;
}

std::string ErrorToJson(absl::string_view message) {
  std::string out = "{\"error\":";
  AppendJsonString(message, &out);
  out += '}';
  return out;
}

}  // namespace invariant::server
