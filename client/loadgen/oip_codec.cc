#include "client/loadgen/oip_codec.h"

#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"

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

// The events of an infer response's JSON, read into an InferResponse as they
// come (no tree): a stack of the open containers, each named by the slot of
// the response it fills; members and values of no interest are skipped.
class ResponseReader final : public JsonEvents {
 public:
  explicit ResponseReader(InferResponse* out) : out_(out) {}

  size_t used() const { return used_; }  // outputs filled
  const std::vector<int64_t>& binary_sizes() const { return binary_sizes_; }

  absl::Status Null() override { return Scalar("null"); }
  absl::Status Bool(bool) override { return Scalar("a boolean"); }
  absl::Status String(absl::string_view value) override {
    switch (Next()) {
      case Slot::kModelName:
        out_->model_name.assign(value.data(), value.size());
        return absl::OkStatus();
      case Slot::kModelVersion:
        out_->model_version.assign(value.data(), value.size());
        return absl::OkStatus();
      case Slot::kName:
        tensor().name.assign(value.data(), value.size());
        return absl::OkStatus();
      case Slot::kDatatype:
        tensor().datatype.assign(value.data(), value.size());
        return absl::OkStatus();
      default:
        return Scalar("a string");
    }
  }
  absl::Status Number(absl::string_view literal) override {
    const Slot slot = Next();
    int64_t integer = 0;
    if (slot == Slot::kItem) {
      float value = 0;
      if (!JsonNumberToFloat(literal, &value)) return Mismatch(slot, literal);
      ++tensor().elements;
      tensor().fp32.push_back(value);
    } else if (slot == Slot::kDim || slot == Slot::kBinarySize) {
      if (!JsonNumberToInt64(literal, &integer) || (slot == Slot::kBinarySize && integer < 0)) {
        return Mismatch(slot, literal);
      }
      if (slot == Slot::kDim) tensor().shape.push_back(integer);
      if (slot == Slot::kBinarySize) binary_sizes_[used_] = integer;
    } else if (slot != Slot::kSkip) {
      return Mismatch(slot, absl::StrCat("the number ", literal));
    }
    return absl::OkStatus();
  }
  absl::Status StartObject() override {
    const Slot slot = Next();
    if (slot != Slot::kRoot && slot != Slot::kTensor && slot != Slot::kParameters &&
        slot != Slot::kSkip) {
      return Mismatch(slot, "an object");
    }
    if (slot == Slot::kTensor) {
      if (used_ == out_->outputs.size()) out_->outputs.emplace_back();
      OutputTensor& t = tensor();
      t.name.clear();
      t.datatype.clear();
      t.shape.clear();
      t.binary = false;
      t.elements = 0;
      t.fp32.clear();
      binary_sizes_.push_back(-1);
      has_data_ = false;
    }
    open_.push_back(slot);
    return absl::OkStatus();
  }
  absl::Status Key(absl::string_view key) override {
    key_slot_ = Slot::kSkip;
    if (open_.back() == Slot::kRoot) {
      if (key == "model_name") key_slot_ = Slot::kModelName;
      if (key == "model_version") key_slot_ = Slot::kModelVersion;
      if (key == "outputs") key_slot_ = Slot::kOutputs;
    } else if (open_.back() == Slot::kTensor) {
      if (key == "name") key_slot_ = Slot::kName;
      if (key == "datatype") key_slot_ = Slot::kDatatype;
      if (key == "shape") key_slot_ = Slot::kShape;
      if (key == "data") key_slot_ = Slot::kData;
      has_data_ = has_data_ || key == "data";
      if (key == "parameters") key_slot_ = Slot::kParameters;
    } else if (open_.back() == Slot::kParameters && key == "binary_data_size") {
      key_slot_ = Slot::kBinarySize;
    }
    return absl::OkStatus();
  }
  absl::Status EndObject(size_t) override {
    const Slot slot = Pop();
    if (slot != Slot::kTensor) return absl::OkStatus();
    if (has_data_ && binary_sizes_[used_] >= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          Member(slot), ": expected either \"data\" or binary_data_size, received both"));
    }
    if (tensor().datatype != kFp32) tensor().fp32.clear();
    ++used_;
    return absl::OkStatus();
  }
  absl::Status StartArray() override {
    const Slot slot = Next();
    if (slot != Slot::kOutputs && slot != Slot::kShape && slot != Slot::kData &&
        slot != Slot::kItem && slot != Slot::kSkip) {
      return Mismatch(slot, "an array");
    }
    open_.push_back(slot == Slot::kItem ? Slot::kData : slot);
    return absl::OkStatus();
  }
  absl::Status EndArray(size_t) override {
    Pop();
    return absl::OkStatus();
  }

 private:
  // What a value fills: the root object, a member of interest, a container
  // item, or nothing (kSkip).
  enum class Slot {
    kRoot,
    kModelName,
    kModelVersion,
    kOutputs,
    kTensor,
    kName,
    kDatatype,
    kShape,
    kDim,
    kData,
    kItem,
    kParameters,
    kBinarySize,
    kSkip
  };

  // The slot of the value about to be read.
  Slot Next() const {
    if (open_.empty()) return Slot::kRoot;
    switch (open_.back()) {
      case Slot::kOutputs:
        return Slot::kTensor;
      case Slot::kShape:
        return Slot::kDim;
      case Slot::kData:
        return Slot::kItem;  // a value or a nested array
      case Slot::kRoot:
      case Slot::kTensor:
      case Slot::kParameters:
        return key_slot_;
      default:
        return Slot::kSkip;
    }
  }
  Slot Pop() {
    const Slot slot = open_.back();
    open_.pop_back();
    return slot;
  }
  OutputTensor& tensor() { return out_->outputs[used_]; }

  // null, booleans and strings: items of "data" (counted), or skipped.
  absl::Status Scalar(absl::string_view received) {
    const Slot slot = Next();
    if (slot == Slot::kItem) ++tensor().elements;
    if (slot == Slot::kItem || slot == Slot::kSkip) return absl::OkStatus();
    return Mismatch(slot, received);
  }

  // The member `slot` names in errors, e.g. "outputs[1].shape[0]".
  std::string Member(Slot slot) const {
    const std::string tensor = absl::StrCat("outputs[", used_, "]");
    switch (slot) {
      case Slot::kRoot:
        return "response";
      case Slot::kModelName:
        return "model_name";
      case Slot::kModelVersion:
        return "model_version";
      case Slot::kOutputs:
        return "outputs";
      case Slot::kName:
        return tensor + ".name";
      case Slot::kDatatype:
        return tensor + ".datatype";
      case Slot::kShape:
        return tensor + ".shape";
      case Slot::kDim:
        return absl::StrCat(tensor, ".shape[", out_->outputs[used_].shape.size(), "]");
      case Slot::kData:
      case Slot::kItem:
        return tensor + ".data";
      case Slot::kParameters:
        return tensor + ".parameters";
      case Slot::kBinarySize:
        return tensor + ".parameters.binary_data_size";
      default:
        return tensor;
    }
  }
  absl::Status Mismatch(Slot slot, absl::string_view received) const {
    absl::string_view expected = "a string";
    if (slot == Slot::kRoot) expected = "'{' (an object)";
    if (slot == Slot::kTensor || slot == Slot::kParameters) expected = "an object";
    if (slot == Slot::kOutputs || slot == Slot::kShape || slot == Slot::kData) {
      expected = "an array";
    }
    if (slot == Slot::kDim) expected = "an integer";
    if (slot == Slot::kBinarySize) expected = "an integer >= 0";
    if (slot == Slot::kItem) expected = "a float";
    return absl::InvalidArgumentError(
        absl::StrCat(Member(slot), ": expected ", expected, ", received ", received));
  }

  InferResponse* out_;
  std::vector<Slot> open_;  // the open containers, outermost first
  Slot key_slot_ = Slot::kSkip;
  size_t used_ = 0;
  std::vector<int64_t> binary_sizes_;  // of each output, -1 when it has none
  bool has_data_ = false;
};

}  // namespace

void AppendRequestedOutputs(const std::vector<std::string>& outputs, bool binary,
                            std::string* body) {
  *body += ",\"outputs\":[";
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i > 0) *body += ',';
    *body += "{\"name\":";
    AppendJsonString(outputs[i], body);
    *body += binary ? ",\"parameters\":{\"binary_data\":true}}" : "}";
  }
  *body += "]}";
}

EncodedInferRequest EncodeInferRequest(const float* values, int64_t rows, int64_t input_dim,
                                       const std::vector<std::string>& outputs,
                                       RestEncoding encoding) {
  const size_t n = static_cast<size_t>(rows * input_dim);
  EncodedInferRequest request;
  std::string& body = request.body;
  body = absl::StrCat("{\"inputs\":[{\"name\":\"", kOipInputName, "\",\"shape\":[", rows, ",",
                      input_dim, "],\"datatype\":\"", kFp32, "\"");
  if (encoding == RestEncoding::kJson) {
    body.reserve(body.size() + 12 * n + 64);
    body += ",\"data\":[";
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) body += ',';
      AppendJsonNumber(values[i], &body);
    }
    body += "]}]";
    AppendRequestedOutputs(outputs, false, &body);
    request.json_bytes = static_cast<int64_t>(body.size());
    request.content_type = "application/json";
    return request;
  }
  absl::StrAppend(&body, ",\"parameters\":{\"binary_data_size\":", 4 * n, "}}]");
  AppendRequestedOutputs(outputs, true, &body);
  request.json_bytes = static_cast<int64_t>(body.size());
  body.reserve(body.size() + 4 * n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    AppendLittleEndian(bits, &body);
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
  ResponseReader reader(out);
  const absl::Status read = ParseJsonEvents(json, reader, kMaxJsonDepth);
  const size_t used = reader.used();
  out->outputs.resize(used);
  if (!read.ok()) {
    // Syntax errors ("byte N: ...") name the response; the reader's errors a member.
    if (!absl::StartsWith(read.message(), "byte ")) return read;
    return absl::InvalidArgumentError(absl::StrCat("response ", read.message()));
  }
  const std::vector<int64_t>& binary_sizes = reader.binary_sizes();
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
    const int64_t element_bytes = static_cast<int64_t>(BinaryElementBytes(tensor.datatype));
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
  absl::StatusOr<JsonValue> json = ParseJson(body, kMaxJsonDepth);
  if (!json.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("model metadata ", json.status().message()));
  }
  const JsonValue* inputs = json->is_object() ? json->Find("inputs") : nullptr;
  if (inputs == nullptr || !inputs->is_array() || inputs->items().empty()) {
    return absl::InvalidArgumentError("model metadata: expected an input, received none");
  }
  const JsonValue& input = inputs->items()[0];
  const JsonValue* shape = input.is_object() ? input.Find("shape") : nullptr;
  std::vector<int64_t> dims;
  for (size_t i = 0; shape != nullptr && shape->is_array() && i < shape->items().size(); ++i) {
    int64_t dim = 0;
    if (!shape->items()[i].NumberAsInt64(&dim)) {
      return absl::InvalidArgumentError(absl::StrCat("model metadata: inputs[0].shape[", i,
                                                     "]: expected an integer, received ",
                                                     shape->items()[i].TypeName()));
    }
    dims.push_back(dim);
  }
  int64_t dim = 1;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] < 1 || dims[i] > (int64_t{1} << 31) / dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model metadata: inputs[0].shape: expected positive dimensions after the batch one, "
          "received [",
          absl::StrJoin(dims, ", "), "]"));
    }
    dim *= dims[i];
  }
  if (dims.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("model metadata: inputs[0].shape: expected [-1, dims...], received [",
                     absl::StrJoin(dims, ", "), "]"));
  }
  return dim;
}

std::string ErrorMessageFromBody(absl::string_view body) {
  const absl::StatusOr<JsonValue> json = ParseJson(body, kMaxJsonDepth);
  const JsonValue* error = json.ok() && json->is_object() ? json->Find("error") : nullptr;
  if (error != nullptr && error->is_string()) return error->text();
  return std::string(body.substr(0, 200));
}

}  // namespace invariant::loadgen
