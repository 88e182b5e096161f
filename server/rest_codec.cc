#include "server/rest_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"

namespace invariant::server {
namespace {

using google::protobuf::Map;
using google::protobuf::RepeatedField;
using inference::InferParameter;

constexpr char kFp32[] = "FP32";

absl::Status Invalid(absl::string_view field, absl::string_view expected,
                     absl::string_view received) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": expected ", expected, ", received ", received));
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Every member of `object` must be one of `allowed`.
absl::Status CheckMembers(const JsonValue& object, const std::string& field,
                          const std::vector<absl::string_view>& allowed) {
  for (const auto& [key, value] : object.members()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Invalid(field.empty() ? "request body" : field,
                     absl::StrCat("only the members ", absl::StrJoin(allowed, ", ")),
                     absl::StrCat("unknown member ", JsonString(key)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StringMember(const JsonValue& object, absl::string_view key,
                                         const std::string& field, bool required) {
  const JsonValue* value = object.Find(key);
  if (value == nullptr) {
    if (required) return Invalid(field, "a string", "nothing");
    return std::string();
  }
  if (!value->is_string()) return Invalid(field, "a string", value->TypeName());
  return value->text();
}

absl::Status ParseParameters(const JsonValue* json, const std::string& field,
                             Map<std::string, InferParameter>* out) {
  if (json == nullptr) return absl::OkStatus();
  if (!json->is_object()) return Invalid(field, "an object", json->TypeName());
  for (const auto& [key, value] : json->members()) {
    const std::string name = absl::StrCat(field, ".", key);
    InferParameter& parameter = (*out)[key];
    int64_t i;
    uint64_t u;
    if (value.is_bool()) {
      parameter.set_bool_param(value.bool_value());
    } else if (value.is_string()) {
      parameter.set_string_param(value.text());
    } else if (value.NumberAsInt64(&i)) {
      parameter.set_int64_param(i);
    } else if (value.NumberAsUint64(&u)) {
      parameter.set_uint64_param(u);
    } else if (value.is_number()) {
      const double d = value.NumberAsDouble();
      if (!std::isfinite(d)) return Invalid(name, "a finite number", value.text());
      parameter.set_double_param(d);
    } else {
      return Invalid(name, "a boolean, a number or a string", value.TypeName());
    }
  }
  return absl::OkStatus();
}

std::string IndexPath(const std::string& field, const std::vector<size_t>& indices) {
  std::string path = field;
  for (size_t i : indices) absl::StrAppend(&path, "[", i, "]");
  return path;
}

absl::Status AppendFloat(const JsonValue& value, const std::string& field,
                         const std::vector<size_t>& indices, RepeatedField<float>* out) {
  if (!value.is_number()) return Invalid(IndexPath(field, indices), "a number", value.TypeName());
  float f;
  if (!value.NumberAsFloat(&f)) {
    return Invalid(IndexPath(field, indices), "a finite FP32 value", value.text());
  }
  out->Add(f);
  return absl::OkStatus();
}

// `data` nested exactly as `shape` from `level` on: an array of shape[level]
// items, arrays down to the last level, numbers there.
absl::Status AppendNested(const JsonValue& data, const std::vector<int64_t>& shape, size_t level,
                          const std::string& field, std::vector<size_t>* indices,
                          RepeatedField<float>* out) {
  const bool last = level + 1 == shape.size();
  if (!data.is_array()) {
    return Invalid(IndexPath(field, *indices),
                   absl::StrCat("an array nested as the shape ", ShapeText(shape)),
                   data.TypeName());
  }
  if (static_cast<int64_t>(data.items().size()) != shape[level]) {
    return Invalid(IndexPath(field, *indices),
                   absl::StrCat(shape[level], " items (dimension ", level, " of the shape ",
                                ShapeText(shape), ")"),
                   absl::StrCat(data.items().size()));
  }
  for (size_t i = 0; i < data.items().size(); ++i) {
    indices->push_back(i);
    const JsonValue& item = data.items()[i];
    absl::Status s = last ? AppendFloat(item, field, *indices, out)
                          : AppendNested(item, shape, level + 1, field, indices, out);
    indices->pop_back();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ParseFp32Data(const JsonValue& data, const std::vector<int64_t>& shape,
                           const std::string& field, RepeatedField<float>* out) {
  if (!data.is_array()) return Invalid(field, "an array", data.TypeName());
  std::vector<size_t> indices;
  if (!data.items().empty() && data.items()[0].is_array()) {
    if (shape.empty()) return Invalid(field, "flat data for the shape []", "nested arrays");
    return AppendNested(data, shape, 0, field, &indices, out);
  }
  out->Reserve(static_cast<int>(data.items().size()));
  for (size_t i = 0; i < data.items().size(); ++i) {
    indices.assign(1, i);
    if (absl::Status s = AppendFloat(data.items()[i], field, indices, out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ParseInput(const JsonValue& json, const std::string& field,
                        inference::ModelInferRequest::InferInputTensor* tensor) {
  if (!json.is_object()) return Invalid(field, "an object", json.TypeName());
  if (absl::Status s =
          CheckMembers(json, field, {"name", "shape", "datatype", "data", "parameters"});
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> name = StringMember(json, "name", field + ".name", true);
  if (!name.ok()) return name.status();
  tensor->set_name(*name);
  absl::StatusOr<std::string> datatype = StringMember(json, "datatype", field + ".datatype", true);
  if (!datatype.ok()) return datatype.status();
  tensor->set_datatype(*datatype);

  const JsonValue* shape = json.Find("shape");
  if (shape == nullptr) return Invalid(field + ".shape", "an array of integers", "nothing");
  if (!shape->is_array())
    return Invalid(field + ".shape", "an array of integers", shape->TypeName());
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape->items().size(); ++i) {
    int64_t dim;
    const JsonValue& item = shape->items()[i];
    if (!item.NumberAsInt64(&dim)) {
      return Invalid(absl::StrCat(field, ".shape[", i, "]"), "an integer",
                     item.is_number() ? item.text() : std::string(item.TypeName()));
    }
    dims.push_back(dim);
    tensor->add_shape(dim);
  }
  if (absl::Status s = ParseParameters(json.Find("parameters"), field + ".parameters",
                                       tensor->mutable_parameters());
      !s.ok()) {
    return s;
  }
  const JsonValue* data = json.Find("data");
  if (data == nullptr) return Invalid(field + ".data", "an array", "nothing");
  if (*datatype != kFp32) return absl::OkStatus();  // refused by the shared validation
  return ParseFp32Data(*data, dims, field + ".data",
                       tensor->mutable_contents()->mutable_fp32_contents());
}

void AppendParametersJson(const Map<std::string, InferParameter>& parameters, std::string* out) {
  std::map<std::string, const InferParameter*> sorted;
  for (const auto& [key, value] : parameters) sorted[key] = &value;
  *out += "{";
  bool first = true;
  for (const auto& [key, parameter] : sorted) {
    absl::StrAppend(out, first ? "" : ",", JsonString(key), ":");
    first = false;
    switch (parameter->parameter_choice_case()) {
      case InferParameter::kBoolParam:
        *out += parameter->bool_param() ? "true" : "false";
        break;
      case InferParameter::kInt64Param:
        absl::StrAppend(out, parameter->int64_param());
        break;
      case InferParameter::kStringParam:
        *out += JsonString(parameter->string_param());
        break;
      case InferParameter::kDoubleParam:
        *out += JsonNumber(parameter->double_param());
        break;
      case InferParameter::kUint64Param:
        absl::StrAppend(out, parameter->uint64_param());
        break;
      default:
        *out += "null";
    }
  }
  *out += "}";
}

void AppendShapeJson(const RepeatedField<int64_t>& shape, std::string* out) {
  absl::StrAppend(out, "[", absl::StrJoin(shape, ","), "]");
}

template <typename T>
void AppendRawNumbers(const std::string& raw, std::string* out) {
  const size_t n = raw.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T value;
    std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
    if (i > 0) *out += ",";
    if constexpr (std::is_floating_point_v<T>) {
      *out += JsonNumber(value);
    } else {
      absl::StrAppend(out, value);
    }
  }
}

// The elements of a raw BYTES tensor: each a 4-byte little-endian length + bytes.
void AppendRawBytes(const std::string& raw, std::string* out) {
  size_t pos = 0;
  bool first = true;
  while (pos + 4 <= raw.size()) {
    const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(raw[i])); };
    const uint32_t length =
        byte(pos) | byte(pos + 1) << 8 | byte(pos + 2) << 16 | byte(pos + 3) << 24;
    pos += 4;
    const size_t take = std::min<size_t>(length, raw.size() - pos);
    absl::StrAppend(out, first ? "" : ",", JsonString(absl::string_view(raw).substr(pos, take)));
    first = false;
    pos += take;
  }
}

void AppendDataJson(const inference::ModelInferResponse::InferOutputTensor& tensor,
                    const std::string* raw, std::string* out) {
  const std::string& type = tensor.datatype();
  const inference::InferTensorContents& contents = tensor.contents();
  *out += "[";
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
    for (int i = 0; i < contents.fp32_contents_size(); ++i) {
      absl::StrAppend(out, i ? "," : "", JsonNumber(contents.fp32_contents(i)));
    }
  } else if (type == "FP64") {
    for (int i = 0; i < contents.fp64_contents_size(); ++i) {
      absl::StrAppend(out, i ? "," : "", JsonNumber(contents.fp64_contents(i)));
    }
  } else if (type == "INT32") {
    *out += absl::StrJoin(contents.int_contents(), ",");
  } else if (type == "INT64") {
    *out += absl::StrJoin(contents.int64_contents(), ",");
  } else if (type == "BYTES") {
    for (int i = 0; i < contents.bytes_contents_size(); ++i) {
      absl::StrAppend(out, i ? "," : "", JsonString(contents.bytes_contents(i)));
    }
  }
  *out += "]";
}

void AppendTensorMetadataJson(const google::protobuf::RepeatedPtrField<
                                  inference::ModelMetadataResponse::TensorMetadata>& tensors,
                              std::string* out) {
  *out += "[";
  for (int i = 0; i < tensors.size(); ++i) {
    absl::StrAppend(out, i ? "," : "", "{\"name\":", JsonString(tensors[i].name()),
                    ",\"datatype\":", JsonString(tensors[i].datatype()), ",\"shape\":");
    AppendShapeJson(tensors[i].shape(), out);
    *out += "}";
  }
  *out += "]";
}

std::string StringArrayJson(const google::protobuf::RepeatedPtrField<std::string>& values) {
  std::string out = "[";
  for (int i = 0; i < values.size(); ++i)
    absl::StrAppend(&out, i ? "," : "", JsonString(values[i]));
  return out + "]";
}

}  // namespace

absl::StatusOr<inference::ModelInferRequest> InferRequestFromJson(absl::string_view body,
                                                                  const std::string& name,
                                                                  const std::string& version) {
  absl::StatusOr<JsonValue> json = ParseJson(body);
  if (!json.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("request body: ", json.status().message()));
  }
  if (!json->is_object()) return Invalid("request body", "a JSON object", json->TypeName());
  if (absl::Status s = CheckMembers(*json, "", {"id", "parameters", "inputs", "outputs"});
      !s.ok()) {
    return s;
  }
  inference::ModelInferRequest request;
  request.set_model_name(name);
  request.set_model_version(version);
  absl::StatusOr<std::string> id = StringMember(*json, "id", "id", false);
  if (!id.ok()) return id.status();
  request.set_id(*id);
  if (absl::Status s =
          ParseParameters(json->Find("parameters"), "parameters", request.mutable_parameters());
      !s.ok()) {
    return s;
  }

  const JsonValue* inputs = json->Find("inputs");
  if (inputs == nullptr) return Invalid("inputs", "an array of input tensors", "nothing");
  if (!inputs->is_array())
    return Invalid("inputs", "an array of input tensors", inputs->TypeName());
  for (size_t i = 0; i < inputs->items().size(); ++i) {
    if (absl::Status s =
            ParseInput(inputs->items()[i], absl::StrCat("inputs[", i, "]"), request.add_inputs());
        !s.ok()) {
      return s;
    }
  }

  const JsonValue* outputs = json->Find("outputs");
  if (outputs != nullptr) {
    if (!outputs->is_array()) return Invalid("outputs", "an array", outputs->TypeName());
    for (size_t i = 0; i < outputs->items().size(); ++i) {
      const JsonValue& item = outputs->items()[i];
      const std::string field = absl::StrCat("outputs[", i, "]");
      if (!item.is_object()) return Invalid(field, "an object", item.TypeName());
      if (absl::Status s = CheckMembers(item, field, {"name", "parameters"}); !s.ok()) return s;
      auto* output = request.add_outputs();
      absl::StatusOr<std::string> output_name = StringMember(item, "name", field + ".name", true);
      if (!output_name.ok()) return output_name.status();
      output->set_name(*output_name);
      if (absl::Status s = ParseParameters(item.Find("parameters"), field + ".parameters",
                                           output->mutable_parameters());
          !s.ok()) {
        return s;
      }
    }
  }
  return request;
}

std::string InferResponseToJson(const inference::ModelInferResponse& response) {
  std::string out = absl::StrCat("{\"model_name\":", JsonString(response.model_name()),
                                 ",\"model_version\":", JsonString(response.model_version()),
                                 ",\"id\":", JsonString(response.id()));
  if (!response.parameters().empty()) {
    out += ",\"parameters\":";
    AppendParametersJson(response.parameters(), &out);
  }
  out += ",\"outputs\":[";
  for (int i = 0; i < response.outputs_size(); ++i) {
    const auto& tensor = response.outputs(i);
    absl::StrAppend(&out, i ? "," : "", "{\"name\":", JsonString(tensor.name()),
                    ",\"datatype\":", JsonString(tensor.datatype()), ",\"shape\":");
    AppendShapeJson(tensor.shape(), &out);
    if (!tensor.parameters().empty()) {
      out += ",\"parameters\":";
      AppendParametersJson(tensor.parameters(), &out);
    }
    out += ",\"data\":";
    const std::string* raw =
        i < response.raw_output_contents_size() ? &response.raw_output_contents(i) : nullptr;
    AppendDataJson(tensor, raw, &out);
    out += "}";
  }
  out += "]}";
  return out;
}

std::string ServerMetadataToJson(const inference::ServerMetadataResponse& response) {
  return absl::StrCat("{\"name\":", JsonString(response.name()),
                      ",\"version\":", JsonString(response.version()),
                      ",\"extensions\":", StringArrayJson(response.extensions()), "}");
}

std::string ModelMetadataToJson(const inference::ModelMetadataResponse& response) {
  std::string out = absl::StrCat("{\"name\":", JsonString(response.name()),
                                 ",\"versions\":", StringArrayJson(response.versions()),
                                 ",\"platform\":", JsonString(response.platform()), ",\"inputs\":");
  AppendTensorMetadataJson(response.inputs(), &out);
  out += ",\"outputs\":";
  AppendTensorMetadataJson(response.outputs(), &out);
  out += ",\"properties\":{";
  const std::map<std::string, std::string> properties(response.properties().begin(),
                                                      response.properties().end());
  bool first = true;
  for (const auto& [key, value] : properties) {
    absl::StrAppend(&out, first ? "" : ",", JsonString(key), ":", JsonString(value));
    first = false;
  }
  out += "}}";
  return out;
}

std::string ErrorToJson(absl::string_view message) {
  return absl::StrCat("{\"error\":", JsonString(message), "}");
}

}  // namespace invariant::server
