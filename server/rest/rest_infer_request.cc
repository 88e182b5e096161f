// InferRequestFromHttp / InferRequestFromJson (rest_codec.h): the infer body
// read in one pass of json.h's event reader by a small state machine over
// the schema (a stack of the open objects and arrays), numbers straight into
// the request's fp32_contents, then the binary part split after the JSON.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "server/handlers/validation.h"
#include "server/rest/rest_codec.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "binary tensor data is little-endian: copying it into floats needs a little-endian host"
#endif

namespace invariant::server {
namespace {

using google::protobuf::Map;
using google::protobuf::RepeatedField;
using inference::InferParameter;
using inference::ModelInferRequest;

constexpr char kFp32[] = "FP32";
constexpr char kBytes[] = "BYTES";

// Where the numbers of an input's "data" go: FP32 → fp32_contents, INT16 and
// INT32 → int_contents, INT64 → int64_contents (the typed contents of the
// gRPC binding). Other datatypes' data is skipped.
enum class Sink { kNone, kFloat, kInt32, kInt64 };

Sink SinkOf(absl::string_view datatype) {
  if (datatype == kFp32) return Sink::kFloat;
  if (datatype == "INT16" || datatype == "INT32") return Sink::kInt32;
  if (datatype == "INT64") return Sink::kInt64;
  return Sink::kNone;
}

// Integers read as floats (data before the datatype) are exact up to 2^24.
constexpr float kExactFloatInteger = 16777216.0f;

// Inputs or requested outputs one body may name (a model has one input and
// a few outputs; the shared validation says which are right).
constexpr size_t kMaxTensors = 64;
// The most elements a binary BYTES input may hold (the server's default
// --max_request_rows): each becomes its own string, so a body of empty
// elements must not turn 16 MiB into millions of allocations before the
// handler's row limit sees the tensor.
constexpr uint64_t kMaxBytesElements = 65536;

absl::Status Invalid(absl::string_view field, absl::string_view expected,
                     absl::string_view received) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": expected ", expected, ", received ", received));
}

std::string Quoted(absl::string_view text) { return absl::StrCat("\"", EchoInput(text), "\""); }

enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

absl::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "a value";
}

// A value event: its kind and, for a number or a string, its text.
struct Value {
  Kind kind;
  absl::string_view text;
  bool boolean = false;
};

// What an open object or array of the body is.
enum class Frame { kRoot, kParams, kInputs, kInput, kShape, kOutputs, kOutput, kData, kSkip };
// The member whose value comes next, in the root, an input or an output.
enum class Member { kNone, kId, kParameters, kInputs, kOutputs, kName, kShape, kDatatype, kData };
enum class Params { kRequest, kInput, kOutput };

struct Open {
  Frame frame;
  Member member = Member::kNone;
  size_t items = 0;  // of an array: the items begun so far
};

class InferReader : public JsonEvents {
 public:
  InferReader(ModelInferRequest* request, absl::string_view binary, size_t json_size,
              bool has_header)
      : request_(request),
        binary_(binary),
        json_size_(json_size),
        reserve_budget_(json_size / 2 + 1),
        has_header_(has_header) {}

  // True when the last error came from the schema (it names a member), false
  // when it is the reader's syntax error.
  bool failed() const { return failed_; }

  // The checks that need the whole body: required members, binary sizes.
  absl::Status Finish() {
    if (!root_error_.ok()) return root_error_;
    if (!has_inputs_) return Invalid("inputs", "an array of input tensors", "nothing");
    if (binary_offset_ != binary_.size()) {
      return Invalid("request body",
                     absl::StrCat(binary_offset_,
                                  " bytes of binary tensor data after the JSON (the sum of the "
                                  "inputs' parameters.binary_data_size)"),
                     absl::StrCat(binary_.size(), " bytes after the ", json_size_,
                                  "-byte JSON (Inference-Header-Content-Length)"));
    }
    return absl::OkStatus();
  }

  absl::Status Null() override { return Record(OnValue({Kind::kNull, {}})); }
  absl::Status Bool(bool value) override { return Record(OnValue({Kind::kBool, {}, value})); }
  absl::Status Number(absl::string_view literal) override {
    // The hot path: a number where the data's numbers go (what DataItem
    // would do, without the dispatch).
    float f;
    if (data_level_ != 0 && stack_.back().frame == Frame::kData && data_.decided &&
        !data_.skipping && data_.sink == Sink::kFloat &&
        (!data_.nested || data_.rank == data_level_) && JsonNumberToFloat(literal, &f)) {
      ++stack_.back().items;
      floats_->Add(f);
      return absl::OkStatus();
    }
    return Record(OnValue({Kind::kNumber, literal}));
  }
  absl::Status String(absl::string_view value) override {
    return Record(OnValue({Kind::kString, value}));
  }
  absl::Status StartObject() override { return Record(OnValue({Kind::kObject, {}})); }
  absl::Status StartArray() override { return Record(OnValue({Kind::kArray, {}})); }
  absl::Status Key(absl::string_view key) override { return Record(OnKey(key)); }
  absl::Status EndObject(size_t) override { return Record(OnEnd(0)); }
  absl::Status EndArray(size_t items) override { return Record(OnEnd(items)); }

 private:
  // Every event's status passes here, so failed() knows whose error it is.
  absl::Status Record(absl::Status status) {
    failed_ = !status.ok();
    return status;
  }

  void Push(Frame frame) {
    stack_.push_back({frame});
    if (frame == Frame::kData) ++data_level_;
  }

  // ---- dispatch ----

  absl::Status OnValue(const Value& v) {
    if (stack_.empty()) {
      if (v.kind != Kind::kObject) {
        // Kept for Finish: a body that is not even JSON says so first.
        root_error_ = Invalid("request body", "a JSON object", KindName(v.kind));
        if (v.kind == Kind::kArray) Push(Frame::kSkip);
        return absl::OkStatus();
      }
      Push(Frame::kRoot);
      return absl::OkStatus();
    }
    Open& top = stack_.back();
    switch (top.frame) {
      case Frame::kRoot:
        return RootMember(top.member, v);
      case Frame::kParams:
        return Parameter(v);
      case Frame::kInputs:
        return BeginInput(top.items++, v);
      case Frame::kInput:
        return InputMember(top.member, v);
      case Frame::kShape:
        return ShapeItem(top.items++, v);
      case Frame::kOutputs:
        return BeginOutput(top.items++, v);
      case Frame::kOutput:
        return OutputMember(top.member, v);
      case Frame::kData:
        return DataItem(v);
      case Frame::kSkip:
        if (v.kind == Kind::kObject || v.kind == Kind::kArray) Push(Frame::kSkip);
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  absl::Status OnKey(absl::string_view key) {
    Open& top = stack_.back();
    switch (top.frame) {
      case Frame::kRoot:
        top.member = key == "id"           ? Member::kId
                     : key == "parameters" ? Member::kParameters
                     : key == "inputs"     ? Member::kInputs
                     : key == "outputs"    ? Member::kOutputs
                                           : Member::kNone;
        if (top.member == Member::kNone) {
          return Unknown("request body", "id, parameters, inputs, outputs", key);
        }
        return absl::OkStatus();
      case Frame::kInput:
        top.member = key == "name"         ? Member::kName
                     : key == "shape"      ? Member::kShape
                     : key == "datatype"   ? Member::kDatatype
                     : key == "data"       ? Member::kData
                     : key == "parameters" ? Member::kParameters
                                           : Member::kNone;
        if (top.member == Member::kNone) {
          return Unknown(input_field_, "name, shape, datatype, data, parameters", key);
        }
        return absl::OkStatus();
      case Frame::kOutput:
        top.member = key == "name"         ? Member::kName
                     : key == "parameters" ? Member::kParameters
                                           : Member::kNone;
        if (top.member == Member::kNone) return Unknown(output_field_, "name, parameters", key);
        return absl::OkStatus();
      case Frame::kParams:
        param_key_.assign(key.data(), key.size());
        return absl::OkStatus();
      default:  // kSkip (objects inside skipped data)
        return absl::OkStatus();
    }
  }

  absl::Status OnEnd(size_t items) {
    const Open closed = stack_.back();
    stack_.pop_back();
    if (closed.frame == Frame::kData) --data_level_;
    switch (closed.frame) {
      case Frame::kInput:
        return FinishInput();
      case Frame::kOutput:
        if (!output_has_name_) return Invalid(output_field_ + ".name", "a string", "nothing");
        return absl::OkStatus();
      case Frame::kData:
        return EndDataArray(items);
      default:
        return absl::OkStatus();
    }
  }

  static absl::Status Unknown(absl::string_view field, absl::string_view allowed,
                              absl::string_view key) {
    return Invalid(field, absl::StrCat("only the members ", allowed),
                   absl::StrCat("unknown member ", Quoted(key)));
  }

  // ---- the root ----

  absl::Status RootMember(Member member, const Value& v) {
    switch (member) {
      case Member::kId:
        if (v.kind != Kind::kString) return Invalid("id", "a string", KindName(v.kind));
        request_->set_id(std::string(v.text));
        return absl::OkStatus();
      case Member::kParameters:
        if (v.kind != Kind::kObject) return Invalid("parameters", "an object", KindName(v.kind));
        return BeginParameters(Params::kRequest, request_->mutable_parameters(), "parameters");
      case Member::kInputs:
        if (v.kind != Kind::kArray) {
          return Invalid("inputs", "an array of input tensors", KindName(v.kind));
        }
        has_inputs_ = true;
        Push(Frame::kInputs);
        return absl::OkStatus();
      default:  // kOutputs
        if (v.kind != Kind::kArray) return Invalid("outputs", "an array", KindName(v.kind));
        Push(Frame::kOutputs);
        return absl::OkStatus();
    }
  }

  // ---- parameters ----

  absl::Status BeginParameters(Params kind, Map<std::string, InferParameter>* target,
                               std::string field) {
    params_kind_ = kind;
    params_ = target;
    params_field_ = std::move(field);
    Push(Frame::kParams);
    return absl::OkStatus();
  }

  absl::Status Parameter(const Value& v) {
    // The member's name, for errors only.
    const auto field = [this] { return absl::StrCat(params_field_, ".", EchoInput(param_key_)); };
    InferParameter& parameter = (*params_)[param_key_];
    int64_t i;
    uint64_t u;
    switch (v.kind) {
      case Kind::kBool:
        parameter.set_bool_param(v.boolean);
        break;
      case Kind::kString:
        parameter.set_string_param(std::string(v.text));
        break;
      case Kind::kNumber:
        if (JsonNumberToInt64(v.text, &i)) {
          parameter.set_int64_param(i);
        } else if (JsonNumberToUint64(v.text, &u)) {
          parameter.set_uint64_param(u);
        } else {
          const double d = JsonNumberToDouble(v.text);
          if (!std::isfinite(d)) return Invalid(field(), "a finite number", EchoInput(v.text));
          parameter.set_double_param(d);
        }
        break;
      default:
        return Invalid(field(), "a boolean, a number or a string", KindName(v.kind));
    }
    // The binary data extension's parameters, checked where they matter.
    if (params_kind_ == Params::kInput && param_key_ == kBinaryDataSize) {
      if (parameter.parameter_choice_case() != InferParameter::kInt64Param ||
          parameter.int64_param() < 0) {
        return Invalid(field(), "a non-negative integer (bytes)",
                       v.kind == Kind::kNumber ? EchoInput(v.text) : KindName(v.kind));
      }
      binary_size_ = parameter.int64_param();
    }
    const bool must_be_bool = (params_kind_ == Params::kOutput && param_key_ == kBinaryData) ||
                              (params_kind_ == Params::kRequest && param_key_ == kBinaryDataOutput);
    if (must_be_bool && v.kind != Kind::kBool)
      return Invalid(field(), "a boolean", KindName(v.kind));
    return absl::OkStatus();
  }

  // ---- inputs ----

  absl::Status BeginInput(size_t index, const Value& v) {
    // Refused while parsing: a body of many tiny tensors must not build them all.
    if (index >= kMaxTensors) {
      return Invalid("inputs", absl::StrCat("at most ", kMaxTensors, " tensors"), "more");
    }
    input_field_ = absl::StrCat("inputs[", index, "]");
    if (v.kind != Kind::kObject) return Invalid(input_field_, "an object", KindName(v.kind));
    tensor_ = request_->add_inputs();
    has_name_ = has_datatype_ = has_shape_ = has_data_ = false;
    binary_size_.reset();
    data_ = DataState();
    Push(Frame::kInput);
    return absl::OkStatus();
  }

  absl::Status InputMember(Member member, const Value& v) {
    switch (member) {
      case Member::kName:
      case Member::kDatatype: {
        const bool name = member == Member::kName;
        if (v.kind != Kind::kString) {
          return Invalid(input_field_ + (name ? ".name" : ".datatype"), "a string",
                         KindName(v.kind));
        }
        if (name) {
          tensor_->set_name(std::string(v.text));
          has_name_ = true;
        } else {
          tensor_->set_datatype(std::string(v.text));
          has_datatype_ = true;
        }
        return absl::OkStatus();
      }
      case Member::kShape:
        if (v.kind != Kind::kArray) {
          return Invalid(input_field_ + ".shape", "an array of integers", KindName(v.kind));
        }
        has_shape_ = true;
        Push(Frame::kShape);
        return absl::OkStatus();
      case Member::kParameters:
        if (v.kind != Kind::kObject) {
          return Invalid(input_field_ + ".parameters", "an object", KindName(v.kind));
        }
        return BeginParameters(Params::kInput, tensor_->mutable_parameters(),
                               input_field_ + ".parameters");
      default:  // kData
        if (v.kind != Kind::kArray) {
          return Invalid(input_field_ + ".data", "an array", KindName(v.kind));
        }
        return BeginData();
    }
  }

  absl::Status ShapeItem(size_t index, const Value& v) {
    int64_t dim;
    if (v.kind != Kind::kNumber || !JsonNumberToInt64(v.text, &dim)) {
      return Invalid(absl::StrCat(input_field_, ".shape[", index, "]"), "an integer",
                     v.kind == Kind::kNumber ? EchoInput(v.text) : KindName(v.kind));
    }
    tensor_->add_shape(dim);
    return absl::OkStatus();
  }

  absl::Status FinishInput() {
    if (!has_name_) return Invalid(input_field_ + ".name", "a string", "nothing");
    if (!has_datatype_) return Invalid(input_field_ + ".datatype", "a string", "nothing");
    if (!has_shape_) return Invalid(input_field_ + ".shape", "an array of integers", "nothing");
    if (binary_size_.has_value()) {
      if (has_data_) {
        return Invalid(input_field_ + ".data",
                       "no data for a binary input (parameters.binary_data_size is set)",
                       "an array");
      }
      return TakeBinary();
    }
    if (!has_data_) return Invalid(input_field_ + ".data", "an array", "nothing");
    const Sink sink = SinkOf(tensor_->datatype());
    if (sink == Sink::kNone) {
      tensor_->clear_contents();  // read before the datatype; refused by the shared validation
      return absl::OkStatus();
    }
    if (!data_.pending.ok()) return data_.pending;
    if (data_.nested && !data_.shape_at_start) RETURN_IF_ERROR(CheckLearnedNesting());
    if (sink != Sink::kFloat && data_.sink == Sink::kFloat) return FloatsToIntegers(sink);
    return absl::OkStatus();
  }

  // Integers whose data came before the datatype were read as floats: moved
  // into the integer contents when each is an integer the float holds exactly.
  absl::Status FloatsToIntegers(Sink sink) {
    inference::InferTensorContents* contents = tensor_->mutable_contents();
    const RepeatedField<float> floats = std::move(*contents->mutable_fp32_contents());
    contents->clear_fp32_contents();
    for (int i = 0; i < floats.size(); ++i) {
      const float f = floats[i];
      if (f != std::trunc(f) || std::fabs(f) > kExactFloatInteger) {
        return Invalid(absl::StrCat(input_field_, ".data (item ", i, " in row-major order)"),
                       absl::StrCat("an integer for datatype ", EchoInput(tensor_->datatype()),
                                    " (of magnitude at most 2^24 when \"data\" comes before "
                                    "\"datatype\")"),
                       absl::StrCat(f));
      }
      if (sink == Sink::kInt64) {
        contents->add_int64_contents(static_cast<int64_t>(f));
      } else {
        contents->add_int_contents(static_cast<int32_t>(f));
      }
    }
    return absl::OkStatus();
  }

  // The binary part of this input: its size checked against the shape and
  // against the bytes left; FP32 copied into fp32_contents.
  absl::Status TakeBinary() {
    const int64_t size = *binary_size_;
    const std::string size_field = input_field_ + ".parameters.binary_data_size";
    const std::string& datatype = tensor_->datatype();
    const size_t element = BinaryElementBytes(datatype);
    if (element > 0) {
      uint64_t expected = element;
      bool overflow = false;
      for (int64_t dim : tensor_->shape()) {
        if (dim < 0) {
          return Invalid(input_field_ + ".shape", "non-negative dimensions for a binary input",
                         EchoShape(tensor_->shape()));
        }
        overflow =
            overflow || __builtin_mul_overflow(expected, static_cast<uint64_t>(dim), &expected);
      }
      if (overflow || expected != static_cast<uint64_t>(size)) {
        return Invalid(
            size_field,
            absl::StrCat(overflow ? std::string("more than 2^64") : absl::StrCat(expected),
                         " (shape ", EchoShape(tensor_->shape()), " × ", element, " bytes of ",
                         datatype, ")"),
            absl::StrCat(size));
      }
    }
    if (!has_header_) {
      return Invalid(
          size_field,
          absl::StrCat("no binary input without the header ", kInferenceHeaderContentLength),
          absl::StrCat(size));
    }
    const size_t left = binary_.size() - binary_offset_;
    if (static_cast<uint64_t>(size) > left) {
      return Invalid(size_field,
                     absl::StrCat("at most ", left,
                                  " (the binary bytes after the JSON not taken by earlier inputs)"),
                     absl::StrCat(size));
    }
    const char* bytes = binary_.data() + binary_offset_;
    inference::InferTensorContents* contents = tensor_->mutable_contents();
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
      RETURN_IF_ERROR(TakeBinaryBytes(absl::string_view(bytes, static_cast<size_t>(size))));
    }
    binary_offset_ += static_cast<size_t>(size);
    return absl::OkStatus();
  }

  // A BYTES input's binary data: shape-many elements, each a 4-byte
  // little-endian length and that many bytes, filling the data exactly.
  absl::Status TakeBinaryBytes(absl::string_view data) {
    const std::string field = input_field_ + ".parameters.binary_data_size";
    uint64_t elements = 1;
    for (int64_t dim : tensor_->shape()) {
      if (dim < 0 || __builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements)) {
        return Invalid(input_field_ + ".shape", "non-negative dimensions for a binary input",
                       EchoShape(tensor_->shape()));
      }
    }
    if (elements > kMaxBytesElements) {
      return Invalid(input_field_ + ".shape",
                     absl::StrCat("at most ", kMaxBytesElements, " BYTES elements"),
                     EchoShape(tensor_->shape()));
    }
    // Each element takes at least its 4-byte length.
    if (elements > data.size() / 4) {
      return Invalid(field,
                     absl::StrCat("at least 4 bytes (a length) for each of the ", elements,
                                  " BYTES elements of shape ", EchoShape(tensor_->shape())),
                     absl::StrCat(data.size()));
    }
    auto* out = tensor_->mutable_contents()->mutable_bytes_contents();
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
                                  EchoShape(tensor_->shape()), ")"),
                     absl::StrCat(data.size()));
    }
    return absl::OkStatus();
  }

  // ---- "data" of an input ----

  struct DataState {
    bool shape_at_start = false;  // the shape was read before the data
    bool skipping = false;        // no numbers kept, or after the first (pending) error
    Sink sink = Sink::kFloat;     // where the numbers go (kFloat while the datatype is unknown)
    bool decided = false;         // flat or nested is known (from the first item)
    bool nested = false;
    size_t rank = 0;               // nesting levels; 0 until known
    size_t deepest = 0;            // the deepest level opened
    std::vector<int64_t> lengths;  // per level: the length every array there must have; -1 unknown
    absl::Status pending;          // the first error, while the datatype is still unknown
  };

  // The datatype is known and its numbers are kept.
  bool DatatypeIsRead() const {
    return has_datatype_ && SinkOf(tensor_->datatype()) != Sink::kNone;
  }

  absl::Status BeginData() {
    has_data_ = true;
    if (has_datatype_) data_.sink = SinkOf(tensor_->datatype());
    if (data_.sink == Sink::kNone) {
      Push(Frame::kSkip);  // passed on without contents
      return absl::OkStatus();
    }
    data_.shape_at_start = has_shape_;
    floats_ = tensor_->mutable_contents()->mutable_fp32_contents();
    ints_ = tensor_->mutable_contents()->mutable_int_contents();
    int64s_ = tensor_->mutable_contents()->mutable_int64_contents();
    if (has_shape_) {
      // Room for the floats the shape announces, but never more than the
      // JSON could hold (2 bytes a number), whatever the shapes say: one
      // budget for all the inputs, so many inputs cannot each reserve it.
      uint64_t count = 1;
      bool valid = true;
      for (int64_t dim : tensor_->shape()) {
        valid =
            valid && dim >= 0 && !__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count);
      }
      if (valid) {
        count = std::min<uint64_t>(
            {count, reserve_budget_, static_cast<uint64_t>(std::numeric_limits<int>::max())});
        reserve_budget_ -= count;
        if (data_.sink == Sink::kFloat) floats_->Reserve(static_cast<int>(count));
        if (data_.sink == Sink::kInt32) ints_->Reserve(static_cast<int>(count));
        if (data_.sink == Sink::kInt64) int64s_->Reserve(static_cast<int>(count));
      }
    }
    Push(Frame::kData);
    data_.deepest = 1;
    return absl::OkStatus();
  }

  // The path of the item `item` of the innermost open data array, or with
  // item < 0 the path of the data array that just closed (popped already).
  std::string DataPath(int64_t item) const {
    std::string path = input_field_ + ".data";
    size_t first = stack_.size();
    while (first > 0 && stack_[first - 1].frame == Frame::kData) --first;
    for (size_t i = first; i < stack_.size(); ++i) {
      const bool last = i + 1 == stack_.size() && item >= 0;
      absl::StrAppend(&path, "[", last ? static_cast<size_t>(item) : stack_[i].items - 1, "]");
    }
    return path;
  }

  // The number of open data arrays (1 inside the outermost).
  size_t DataLevel() const { return data_level_; }

  std::string NestingText() const {
    if (data_.shape_at_start) {
      return absl::StrCat("an array nested as the shape ", EchoShape(tensor_->shape()));
    }
    return "an array nested like the first item";
  }

  // An error in the data: returned when the datatype is known to be FP32,
  // kept for FinishInput (and the rest of the data skipped) otherwise.
  absl::Status DataError(absl::Status error) {
    if (DatatypeIsRead()) return error;
    data_.pending = std::move(error);
    data_.skipping = true;
    return absl::OkStatus();
  }

  absl::Status DataItem(const Value& v) {
    Open& top = stack_.back();
    const size_t index = top.items++;
    if (data_.skipping) {
      if (v.kind == Kind::kArray) Push(Frame::kData);
      if (v.kind == Kind::kObject) Push(Frame::kSkip);
      return absl::OkStatus();
    }
    const size_t level = DataLevel();
    if (!data_.decided) {  // the first item of the outermost array
      data_.decided = true;
      data_.nested = v.kind == Kind::kArray;
      if (!data_.nested) {
        data_.rank = 1;
      } else if (data_.shape_at_start) {
        if (tensor_->shape().empty()) {
          Push(Frame::kData);
          return DataError(
              Invalid(input_field_ + ".data", "flat data for the shape []", "nested arrays"));
        }
        data_.rank = static_cast<size_t>(tensor_->shape_size());
      }
    }
    if (v.kind == Kind::kArray) {
      absl::Status error;
      if (!data_.nested || (data_.rank != 0 && level >= data_.rank)) {
        error = Invalid(DataPath(static_cast<int64_t>(index)), "a number", "an array");
      }
      Push(Frame::kData);  // also when the error is kept: its items are skipped
      data_.deepest = std::max(data_.deepest, level + 1);
      return error.ok() ? error : DataError(std::move(error));
    }
    if (data_.nested && data_.rank == 0) data_.rank = level;  // the first number fixes the rank
    if (data_.nested && level < data_.rank) {
      absl::Status error =
          Invalid(DataPath(static_cast<int64_t>(index)), NestingText(), KindName(v.kind));
      if (v.kind == Kind::kObject) Push(Frame::kSkip);
      return DataError(std::move(error));
    }
    if (v.kind != Kind::kNumber) {
      absl::Status error =
          Invalid(DataPath(static_cast<int64_t>(index)), "a number", KindName(v.kind));
      if (v.kind == Kind::kObject) Push(Frame::kSkip);
      return DataError(std::move(error));
    }
    if (data_.sink != Sink::kFloat) {
      int64_t i;
      const bool int32 = data_.sink == Sink::kInt32;
      if (!JsonNumberToInt64(v.text, &i) || (int32 && (i < std::numeric_limits<int32_t>::min() ||
                                                       i > std::numeric_limits<int32_t>::max()))) {
        return DataError(Invalid(DataPath(static_cast<int64_t>(index)),
                                 int32 ? "a 32-bit integer" : "a 64-bit integer",
                                 EchoInput(v.text)));
      }
      if (int32) {
        ints_->Add(static_cast<int32_t>(i));
      } else {
        int64s_->Add(i);
      }
      return absl::OkStatus();
    }
    float f;
    if (!JsonNumberToFloat(v.text, &f)) {
      return DataError(
          Invalid(DataPath(static_cast<int64_t>(index)), "a finite FP32 value", EchoInput(v.text)));
    }
    floats_->Add(f);
    return absl::OkStatus();
  }

  // A data array of `items` items closed (already popped from the stack).
  absl::Status EndDataArray(size_t items) {
    if (data_.skipping || !data_.nested) return absl::OkStatus();
    const size_t level = DataLevel() + 1;  // the level of the array that closed
    if (data_.lengths.size() < level) data_.lengths.resize(level, -1);
    int64_t& length = data_.lengths[level - 1];
    if (data_.shape_at_start) length = tensor_->shape(static_cast<int>(level - 1));
    if (length < 0) length = static_cast<int64_t>(items);  // learned from the first array
    if (static_cast<int64_t>(items) == length) return absl::OkStatus();
    const std::string expected =
        data_.shape_at_start ? absl::StrCat(length, " items (dimension ", level - 1,
                                            " of the shape ", EchoShape(tensor_->shape()), ")")
                             : absl::StrCat(length, " items (as the first array at this depth)");
    return DataError(Invalid(DataPath(-1), expected, absl::StrCat(items)));
  }

  // Nested data read before the shape: its dimensions must be the shape.
  absl::Status CheckLearnedNesting() const {
    const size_t rank = data_.rank != 0 ? data_.rank : data_.deepest;
    std::vector<int64_t> dims(data_.lengths.begin(),
                              data_.lengths.begin() + std::min(rank, data_.lengths.size()));
    const bool same = dims.size() == static_cast<size_t>(tensor_->shape_size()) &&
                      std::equal(dims.begin(), dims.end(), tensor_->shape().begin());
    if (same) return absl::OkStatus();
    return Invalid(input_field_ + ".data",
                   absl::StrCat("an array nested as the shape ", EchoShape(tensor_->shape())),
                   absl::StrCat("one nested as ", EchoShape(dims)));
  }

  // ---- outputs ----

  absl::Status BeginOutput(size_t index, const Value& v) {
    if (index >= kMaxTensors) {
      return Invalid("outputs", absl::StrCat("at most ", kMaxTensors, " tensors"), "more");
    }
    output_field_ = absl::StrCat("outputs[", index, "]");
    if (v.kind != Kind::kObject) return Invalid(output_field_, "an object", KindName(v.kind));
    output_ = request_->add_outputs();
    output_has_name_ = false;
    Push(Frame::kOutput);
    return absl::OkStatus();
  }

  absl::Status OutputMember(Member member, const Value& v) {
    if (member == Member::kName) {
      if (v.kind != Kind::kString) {
        return Invalid(output_field_ + ".name", "a string", KindName(v.kind));
      }
      output_->set_name(std::string(v.text));
      output_has_name_ = true;
      return absl::OkStatus();
    }
    if (v.kind != Kind::kObject) {
      return Invalid(output_field_ + ".parameters", "an object", KindName(v.kind));
    }
    return BeginParameters(Params::kOutput, output_->mutable_parameters(),
                           output_field_ + ".parameters");
  }

  ModelInferRequest* request_;
  absl::string_view binary_;  // the body after the JSON
  size_t json_size_;
  uint64_t reserve_budget_;  // floats all the inputs may still reserve ahead
  bool has_header_;
  size_t binary_offset_ = 0;  // taken by the binary inputs so far
  bool failed_ = false;
  bool has_inputs_ = false;
  absl::Status root_error_;  // the body is JSON but not an object
  std::vector<Open> stack_;
  size_t data_level_ = 0;  // the kData frames on the stack (they are on top, contiguous)

  Params params_kind_ = Params::kRequest;
  Map<std::string, InferParameter>* params_ = nullptr;
  std::string params_field_;
  std::string param_key_;

  ModelInferRequest::InferInputTensor* tensor_ = nullptr;
  std::string input_field_;
  bool has_name_ = false, has_datatype_ = false, has_shape_ = false, has_data_ = false;
  std::optional<int64_t> binary_size_;
  DataState data_;
  RepeatedField<float>* floats_ = nullptr;    // the input's fp32_contents, once its data began
  RepeatedField<int32_t>* ints_ = nullptr;    // int_contents (INT16, INT32)
  RepeatedField<int64_t>* int64s_ = nullptr;  // int64_contents (INT64)

  ModelInferRequest::InferRequestedOutputTensor* output_ = nullptr;
  std::string output_field_;
  bool output_has_name_ = false;
};

// The JSON length an Inference-Header-Content-Length value announces.
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

}  // namespace

absl::StatusOr<ModelInferRequest> InferRequestFromHttp(
    absl::string_view body, const std::string* inference_header_content_length,
    const std::string& name, const std::string& version) {
  size_t json_size = body.size();
  if (inference_header_content_length != nullptr) {
    absl::StatusOr<size_t> length = JsonLength(*inference_header_content_length, body.size());
    if (!length.ok()) return length.status();
    json_size = *length;
  }
  ModelInferRequest request;
  request.set_model_name(name);
  request.set_model_version(version);
  InferReader reader(&request, body.substr(json_size), json_size,
                     inference_header_content_length != nullptr);
  if (absl::Status s = ParseJsonEvents(body.substr(0, json_size), reader); !s.ok()) {
    if (reader.failed()) return s;
    return absl::InvalidArgumentError(absl::StrCat("request body: ", s.message()));
  }
  if (absl::Status s = reader.Finish(); !s.ok()) return s;
  return request;
}

absl::StatusOr<ModelInferRequest> InferRequestFromJson(absl::string_view body,
                                                       const std::string& name,
                                                       const std::string& version) {
  return InferRequestFromHttp(body, nullptr, name, version);
}

}  // namespace invariant::server
