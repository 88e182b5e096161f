#include "server/handlers/inference_tensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/audio/front_end.h"
#include "core/base/error_text.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/handlers/inference_audio.h"
#include "server/handlers/inference_images.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

constexpr char kFp32[] = "FP32";
constexpr char kInt32[] = "INT32";
constexpr char kBytes[] = "BYTES";

// The accepted input shapes, for error messages: "[n, 16]" or "[n, 16] or [n, 4, 4]".
std::string ExpectedInputShapes(const InferenceModelShape& model) {
  std::string text = absl::StrCat("[n, ", model.input_dim, "]");
  if (model.input_shape.size() > 1) {
    absl::StrAppend(&text, " or [n, ", absl::StrJoin(model.input_shape, ", "), "]");
  }
  return text;
}

// The name of the first typed contents field other than fp32_contents that
// holds values, or "" when none does.
std::string OtherContentsField(const inference::InferTensorContents& c) {
  if (c.bool_contents_size() > 0) return "bool_contents";
  if (c.int_contents_size() > 0) return "int_contents";
  if (c.int64_contents_size() > 0) return "int64_contents";
  if (c.uint_contents_size() > 0) return "uint_contents";
  if (c.uint64_contents_size() > 0) return "uint64_contents";
  if (c.fp64_contents_size() > 0) return "fp64_contents";
  if (c.bytes_contents_size() > 0) return "bytes_contents";
  return "";
}

std::string JsonOf(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) return "{}";
  return json;
}

std::string JsonStringArray(const google::protobuf::RepeatedPtrField<std::string>& values) {
  std::vector<std::string> quoted;
  quoted.reserve(values.size());
  for (const std::string& v : values) quoted.push_back(JsonString(v));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

void AddTensorMetadata(
    const std::string& name, const std::string& datatype, std::vector<int64_t> shape,
    google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out) {
  inference::ModelMetadataResponse::TensorMetadata* tensor = out->Add();
  tensor->set_name(name);
  tensor->set_datatype(datatype);
  for (int64_t d : shape) tensor->add_shape(d);
}

inference::ModelInferResponse::InferOutputTensor* AddOutputTensor(
    const std::string& name, const char* datatype, std::vector<int64_t> shape,
    inference::ModelInferResponse* response) {
  inference::ModelInferResponse::InferOutputTensor* tensor = response->add_outputs();
  tensor->set_name(name);
  tensor->set_datatype(datatype);
  for (int64_t d : shape) tensor->add_shape(d);
  return tensor;
}

}  // namespace

absl::StatusOr<v1::ModelSpec> ModelSpecFromProtocol(const std::string& name,
                                                    const std::string& version,
                                                    const std::string& name_field,
                                                    const std::string& version_field) {
  v1::ModelSpec spec;
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_field, ": expected a model name, received an empty string"));
  }
  spec.set_name(name);
  if (version.empty() || version == "latest") return spec;
  const bool numeric_start =
      absl::ascii_isdigit(version[0]) || version[0] == '-' || version[0] == '+';
  if (!numeric_start) {
    spec.set_version_label(version);
    return spec;
  }
  int64_t number = 0;
  const bool digits_only =
      std::all_of(version.begin(), version.end(), [](char c) { return absl::ascii_isdigit(c); });
  if (!digits_only || !absl::SimpleAtoi(version, &number) || number <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(version_field,
                     ": expected a positive integer version, a version label or empty (the "
                     "newest ready version), received '",
                     EchoInput(version), "'"));
  }
  spec.set_version(number);
  return spec;
}

std::string TensorDataField(int index, const char* typed, bool json) {
  return json ? absl::StrCat("inputs[", index, "].data")
              : absl::StrCat("inputs[", index, "].contents.", typed);
}

InferFieldNames ProtocolFieldNames(bool raw_input, int input_index, bool json) {
  InferFieldNames names;
  names.model = {"model_name", "model_version", "model_version"};
  names.values = TensorDataField(0, "fp32_contents", json);
  names.raw_values = "raw_input_contents[0]";
  names.num_rows = "inputs[0].shape";
  names.inputs = raw_input ? "raw_input_contents[0]" : "inputs[0]";
  names.clips = absl::StrCat("inputs[", input_index, "].shape");
  names.clip = [input_index](int64_t index, ClipPart part) {
    if (part == ClipPart::kSampleRate) return absl::StrCat("parameters.", kSampleRateParameter);
    return absl::StrCat("inputs[", input_index, "][", index, "]");
  };
  return names;
}

namespace {

// What output `name` of `model` is: its datatype, its columns (0: shape [n]),
// and per row the values an answer counts (AnswerValuesPerRow) and the bytes
// a response holds at most (CheckInferResponseSize).
struct OutputKind {
  const char* datatype;
  int64_t cols;
  int64_t values;
  int64_t bytes;
};

OutputKind KindOfOutput(const std::string& name, const InferenceModelShape& model) {
  if (name == kFeaturesOutputName) {
    return {kFp32, model.feature_dim, model.feature_dim, 4 * model.feature_dim};
  }
  if (name == kScoresOutputName)
    return {kFp32, model.output_dim, model.output_dim, 4 * model.output_dim};
  if (name == kPredictedClassOutputName) {
    // A name counts as (longest + 4) / 4 values; length prefix or tag + length.
    return {kBytes, 0, (model.longest_class_name + 4) / 4, 8 + model.longest_class_name};
  }
  if (name == kClipStatusOutputName) return {kBytes, 0, 3, 8 + 9};  // "no_speech"
  if (name == kSpeechSecondsOutputName) return {kFp32, 2, 2, 8};
  return {kInt32, 0, 1, 8};  // predicted_index
}

// The rows of an input of `shape`: [n, input_dim] or [n, *input_shape],
// 1 <= n <= max_rows, and n rows' bytes countable in 64 bits.
absl::StatusOr<int64_t> RowsOfShape(const google::protobuf::RepeatedField<int64_t>& shape,
                                    const InferenceModelShape& model, int64_t max_rows) {
  bool shape_ok = shape.size() >= 2 && shape[0] >= 1;
  if (shape_ok) {
    const std::vector<int64_t> row_shape(shape.begin() + 1, shape.end());
    shape_ok = (row_shape.size() == 1 && row_shape[0] == model.input_dim) ||
               row_shape == model.input_shape;
  }
  if (!shape_ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs[0].shape: expected ", ExpectedInputShapes(model),
                     " with n >= 1 rows, received ", EchoShape(shape)));
  }
  const int64_t rows = shape[0];
  // The configured limit first, before any count derived from the shape: a
  // request declaring too many rows hears the limit it broke.
  if (rows > max_rows) {
    return absl::InvalidArgumentError(absl::StrCat("inputs[0].shape: expected at most ", max_rows,
                                                   " rows per request, received ",
                                                   EchoShape(shape)));
  }
  // Only reachable with a limit beyond what the byte count can hold.
  const int64_t max_countable_rows =
      std::numeric_limits<int64_t>::max() / static_cast<int64_t>(sizeof(float)) / model.input_dim;
  if (rows > max_countable_rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs[0].shape: expected a shape whose byte count fits in 64 bits (at most ",
                     max_countable_rows, " rows of ", model.input_dim, " FP32 values), received ",
                     EchoShape(shape)));
  }
  return rows;
}

// The input's `count` values from raw_input_contents[0] (little-endian FP32).
absl::Status TakeRawInput(const inference::ModelInferRequest& request, int64_t count,
                          InferRequest* out) {
  const inference::ModelInferRequest::InferInputTensor& input = request.inputs(0);
  if (request.raw_input_contents_size() != request.inputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "raw_input_contents: expected ", request.inputs_size(),
        " entry (one per input tensor), received ", request.raw_input_contents_size()));
  }
  if (input.has_contents()) {
    return absl::InvalidArgumentError(
        "inputs[0].contents: expected no contents when raw_input_contents is used, received "
        "both");
  }
  const std::string& bytes = request.raw_input_contents(0);
  const int64_t expected_bytes = count * static_cast<int64_t>(sizeof(float));
  if (static_cast<int64_t>(bytes.size()) != expected_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("raw_input_contents[0]: expected ", expected_bytes, " bytes (", count,
                     " little-endian FP32 values for shape ", EchoShape(input.shape()),
                     "), received ", bytes.size()));
  }
  out->raw = true;
  out->raw_values = bytes;
  return absl::OkStatus();
}

// The input's `count` values from its fp32_contents.
absl::Status TakeFp32Contents(const inference::ModelInferRequest::InferInputTensor& input,
                              int64_t count, bool json, InferRequest* out) {
  const std::string other = OtherContentsField(input.contents());
  if (!other.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inputs[0].contents: expected fp32_contents for datatype FP32, received ", other));
  }
  const auto& values = input.contents().fp32_contents();
  if (values.size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorDataField(0, "fp32_contents", json), ": expected ", count,
                     " values for shape ", EchoShape(input.shape()), ", received ", values.size()));
  }
  out->values = values.data();
  out->value_count = values.size();
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> OutputNames(const InferenceModelShape& model) {
  std::vector<std::string> names = {kFeaturesOutputName};
  if (model.has_head) names.push_back(kScoresOutputName);
  if (model.has_head && model.classifier) {
    names.push_back(kPredictedClassOutputName);
    names.push_back(kPredictedIndexOutputName);
  }
  if (model.voice_activity) {
    names.push_back(kClipStatusOutputName);
    names.push_back(kSpeechSecondsOutputName);
  }
  return names;
}

absl::Status DecodeInferInput(const inference::ModelInferRequest& request,
                              const InferenceModelShape& model, int64_t max_rows, InferRequest* out,
                              bool json) {
  if (model.audio) return DecodeAudioInferInput(request, max_rows, out, json);
  if (model.image) return DecodeImageInferInput(request, max_rows, out, json);
  if (request.inputs_size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs: expected exactly 1 input tensor named '", kInferenceInputName,
                     "', received ", request.inputs_size()));
  }
  const inference::ModelInferRequest::InferInputTensor& input = request.inputs(0);
  if (input.name() != kInferenceInputName) {
    return absl::InvalidArgumentError(absl::StrCat("inputs[0].name: expected '",
                                                   kInferenceInputName, "', received '",
                                                   EchoInput(input.name()), "'"));
  }
  if (input.datatype() != kFp32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inputs[0].datatype: expected ", kFp32, ", received '", EchoInput(input.datatype()), "'"));
  }
  ASSIGN_OR_RETURN(const int64_t rows, RowsOfShape(input.shape(), model, max_rows));
  const int64_t count = rows * model.input_dim;
  const bool raw = request.raw_input_contents_size() > 0;
  out->fields = ProtocolFieldNames(raw, 0, json);
  out->declared_rows = rows;
  if (raw) return TakeRawInput(request, count, out);
  return TakeFp32Contents(input, count, json, out);
}

absl::StatusOr<std::vector<std::string>> SelectOutputs(const inference::ModelInferRequest& request,
                                                       const InferenceModelShape& model) {
  const std::vector<std::string> available = OutputNames(model);
  if (request.outputs_size() == 0) return available;
  std::vector<std::string> selected;
  for (int i = 0; i < request.outputs_size(); ++i) {
    const std::string& name = request.outputs(i).name();
    if (std::find(available.begin(), available.end(), name) == available.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("outputs[", i, "].name: expected one of [", absl::StrJoin(available, ", "),
                       "]", model.has_head ? "" : " (the model has no linear head)", ", received '",
                       EchoInput(name), "'"));
    }
    if (std::find(selected.begin(), selected.end(), name) != selected.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("outputs[", i, "].name: expected each output at most once, received '",
                       EchoInput(name), "' again"));
    }
    selected.push_back(name);
  }
  return selected;
}

int64_t AnswerValuesPerRow(const InferenceModelShape& model,
                           const std::vector<std::string>& outputs) {
  int64_t values = 0;
  for (const std::string& name : outputs) values += KindOfOutput(name, model).values;
  return values;
}

absl::Status CheckInferResponseSize(int64_t rows, const InferenceModelShape& model,
                                    const std::vector<std::string>& outputs,
                                    int64_t max_response_bytes) {
  constexpr int64_t kOverheadBytes = 1024;  // names, shapes, message framing
  int64_t bytes_per_row = 0;
  for (const std::string& name : outputs) bytes_per_row += KindOfOutput(name, model).bytes;
  const int64_t budget = std::max<int64_t>(0, max_response_bytes - kOverheadBytes);
  const int64_t max_rows = budget / std::max<int64_t>(1, bytes_per_row);
  if (rows <= max_rows) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("inputs[0].shape: expected at most ", max_rows, " rows so that the response (",
                   bytes_per_row, " bytes per row for ", absl::StrJoin(outputs, ", "),
                   ") fits max_message_bytes=", max_response_bytes, ", received ", rows));
}

void AddOutputTensors(const std::vector<std::string>& outputs, int64_t rows,
                      const InferenceModelShape& model, bool raw,
                      inference::ModelInferResponse* response) {
  for (const std::string& name : outputs) {
    const OutputKind kind = KindOfOutput(name, model);
    if (kind.cols > 0) {
      AddOutputTensor(name, kind.datatype, {rows, kind.cols}, response);
    } else {
      AddOutputTensor(name, kind.datatype, {rows}, response);
    }
    if (raw) response->add_raw_output_contents();
  }
}

float* SizeFp32Output(int index, int64_t count, bool raw, inference::ModelInferResponse* response) {
  if (raw) {
    // The server runs on little-endian hosts only, so the floats are the
    // wire form; a heap string's bytes are aligned for floats.
    std::string* bytes = response->mutable_raw_output_contents(index);
    bytes->resize(static_cast<size_t>(count) * sizeof(float));
    return reinterpret_cast<float*>(bytes->data());
  }
  auto* values = response->mutable_outputs(index)->mutable_contents()->mutable_fp32_contents();
  values->Resize(static_cast<int>(count), 0.0f);
  return values->mutable_data();
}

void FillInt32Output(int index, const std::vector<int32_t>& values, bool raw,
                     inference::ModelInferResponse* response) {
  if (raw) {
    std::string* bytes = response->mutable_raw_output_contents(index);
    bytes->resize(values.size() * sizeof(int32_t));
    if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());
    return;
  }
  auto* contents = response->mutable_outputs(index)->mutable_contents()->mutable_int_contents();
  contents->Add(values.begin(), values.end());
}

void FillBytesOutput(int index, const std::vector<std::string>& values, bool raw,
                     inference::ModelInferResponse* response) {
  if (raw) {
    std::string* bytes = response->mutable_raw_output_contents(index);
    for (const std::string& value : values) {
      const uint32_t length = static_cast<uint32_t>(value.size());
      const char prefix[4] = {
          static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
          static_cast<char>((length >> 16) & 0xff), static_cast<char>((length >> 24) & 0xff)};
      bytes->append(prefix, sizeof(prefix));
      bytes->append(value);
    }
    return;
  }
  auto* contents = response->mutable_outputs(index)->mutable_contents()->mutable_bytes_contents();
  for (const std::string& value : values) contents->Add(std::string(value));
}

InferenceModelShape ShapeOfModel(const Model& model) {
  InferenceModelShape shape;
  shape.input_dim = model.input_dim();
  const auto& input_shape = model.manifest().encoder().input_shape();
  shape.input_shape.assign(input_shape.begin(), input_shape.end());
  if (shape.input_shape.empty()) shape.input_shape = {shape.input_dim};
  shape.feature_dim = model.feature_dim();
  shape.has_head = model.has_head() && model.output_dim() > 0;
  shape.output_dim = shape.has_head ? model.output_dim() : 0;
  shape.classifier = shape.has_head && model.task() == v1::TASK_CLASSIFICATION;
  for (const std::string& name : model.manifest().head().class_names()) {
    shape.longest_class_name =
        std::max(shape.longest_class_name, static_cast<int64_t>(name.size()));
  }
  // A class without a name is answered with its index.
  shape.longest_class_name = std::max<int64_t>(shape.longest_class_name, 20);
  if (const audio::AudioFrontEnd* front_end = model.audio_front_end(); front_end != nullptr) {
    shape.audio = true;
    shape.sample_rate = front_end->spec().sample_rate();
    shape.voice_activity = front_end->spec().voice_activity().enabled();
  }
  shape.image = model.image_front_end() != nullptr;
  return shape;
}

void FillInferenceModelMetadata(const v1::GetModelMetadataResponse& metadata,
                                const InferenceModelShape& shape,
                                const std::vector<int64_t>& versions,
                                inference::ModelMetadataResponse* out) {
  out->set_name(metadata.model_name());
  for (int64_t v : versions) out->add_versions(absl::StrCat(v));
  out->set_platform("invariant");
  if (shape.audio) {
    AddTensorMetadata(kInferenceInputName, kFp32, {-1, -1}, out->mutable_inputs());
    AddTensorMetadata(kInputLengthsName, "INT64", {-1}, out->mutable_inputs());
  } else if (shape.image) {
    AddTensorMetadata(kInferenceInputName, "BYTES", {-1}, out->mutable_inputs());
  } else {
    AddTensorMetadata(kInferenceInputName, kFp32, {-1, shape.input_dim}, out->mutable_inputs());
  }
  for (const std::string& name : OutputNames(shape)) {
    const OutputKind kind = KindOfOutput(name, shape);
    if (kind.cols > 0) {
      AddTensorMetadata(name, kind.datatype, {-1, kind.cols}, out->mutable_outputs());
    } else {
      AddTensorMetadata(name, kind.datatype, {-1}, out->mutable_outputs());
    }
  }
  auto& properties = *out->mutable_properties();
  properties["version"] = absl::StrCat(metadata.model_version());
  properties["encoder_kind"] = metadata.encoder_kind();
  properties["encoder"] = JsonOf(metadata.encoder());
  properties["group"] = JsonOf(metadata.encoder().group());
  if (metadata.has_certificate()) properties["certificate"] = JsonOf(metadata.certificate());
  if (metadata.has_pairs_certificate()) {
    properties["pairs_certificate"] = JsonOf(metadata.pairs_certificate());
  }
  properties["input_shape"] = ShapeText(shape.input_shape);
  properties["input_dim"] = absl::StrCat(shape.input_dim);
  properties["feature_dim"] = absl::StrCat(shape.feature_dim);
  properties["output_dim"] = absl::StrCat(shape.output_dim);
  properties["model_bytes"] = absl::StrCat(metadata.model_bytes());
  if (shape.has_head) {
    properties["task"] = shape.classifier ? "classification" : "regression";
    if (metadata.head().class_names_size() > 0) {
      properties["class_names"] = JsonStringArray(metadata.head().class_names());
    }
    if (metadata.head().target_names_size() > 0) {
      properties["target_names"] = JsonStringArray(metadata.head().target_names());
    }
  }
  if (shape.audio) {
    properties["audio"] = JsonOf(metadata.audio());
    properties["sample_rate"] = absl::StrCat(metadata.audio().sample_rate());
    properties["max_clip_seconds"] = absl::StrCat(metadata.audio().max_clip_seconds());
    properties["audio_inputs"] =
        "input FP32 or INT16 [n, L] (samples, rows padded to L) with optional input_lengths "
        "INT32 or INT64 [n] and request parameter sample_rate (Hz, default the model's); or "
        "input BYTES [n], each element a whole WAV file";
  }
  if (shape.image) {
    properties["image"] = JsonOf(metadata.image());
    properties["image_inputs"] =
        "input BYTES [n], each element a whole JPEG or PNG file (decoded, oriented, fitted to "
        "the model's size and scaled by the model's image front end)";
  }
  google::protobuf::Struct metrics;
  for (const auto& [key, value] : metadata.metrics()) {
    (*metrics.mutable_fields())[key].set_number_value(value);
  }
  properties["metrics"] = JsonOf(metrics);
}

}  // namespace invariant::server
