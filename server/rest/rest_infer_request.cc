// InferRequestFromHttp / InferRequestFromJson (rest_infer_request.h): the
// infer body read in one pass of json.h's event reader by a small state
// machine over the schema (a stack of the open objects and arrays). This
// file reads the root and the requested outputs and dispatches each event on
// the innermost open frame: parameters to rest_infer_params.h, an input to
// rest_infer_tensor.h, its "data" to rest_infer_data.h (numbers straight
// into the request's contents), then the binary part after the JSON is
// checked by rest_infer_binary.h.
#include "server/rest/rest_infer_request.h"

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "server/rest/rest_infer_binary.h"
#include "server/rest/rest_infer_events.h"
#include "server/rest/rest_infer_params.h"
#include "server/rest/rest_infer_tensor.h"

namespace invariant::server {
namespace {

using inference::ModelInferRequest;
using rest_internal::BinarySection;
using rest_internal::Frame;
using rest_internal::FrameStack;
using rest_internal::InputReader;
using rest_internal::Invalid;
using rest_internal::Kind;
using rest_internal::KindName;
using rest_internal::kMaxTensors;
using rest_internal::Member;
using rest_internal::Open;
using rest_internal::Params;
using rest_internal::ParamsReader;
using rest_internal::Quoted;
using rest_internal::Value;

class InferReader : public JsonEvents {
 public:
  InferReader(ModelInferRequest* request, absl::string_view binary, size_t json_size,
              bool has_header)
      : request_(request),
        binary_(binary, json_size, has_header),
        input_(&stack_, &params_, &binary_, json_size) {}

  // True when the last error came from the schema (it names a member), false
  // when it is the reader's syntax error.
  bool failed() const { return failed_; }

  // The checks that need the whole body: required members, binary sizes.
  absl::Status Finish() {
    if (!root_error_.ok()) return root_error_;
    if (!has_inputs_) return Invalid("inputs", "an array of input tensors", "nothing");
    return binary_.Finish();
  }

  absl::Status Null() override { return Record(OnValue({Kind::kNull, {}})); }
  absl::Status Bool(bool value) override { return Record(OnValue({Kind::kBool, {}, value})); }
  absl::Status Number(absl::string_view literal) override {
    // The hot path: a number where the data's numbers go (what DataReader::Item
    // would do, without the dispatch).
    if (input_.data().TakeFloat(literal)) return absl::OkStatus();
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

  // ---- dispatch ----

  absl::Status OnValue(const Value& v) {
    if (stack_.empty()) {
      if (v.kind != Kind::kObject) {
        // Kept for Finish: a body that is not even JSON says so first.
        root_error_ = Invalid("request body", "a JSON object", KindName(v.kind));
        if (v.kind == Kind::kArray) stack_.Push(Frame::kSkip);
        return absl::OkStatus();
      }
      stack_.Push(Frame::kRoot);
      return absl::OkStatus();
    }
    Open& top = stack_.back();
    switch (top.frame) {
      case Frame::kRoot:
        return RootMember(top.member, v);
      case Frame::kParams:
        return params_.Read(v);
      case Frame::kInputs:
        return input_.Begin(top.items++, v, request_);
      case Frame::kInput:
        return input_.ReadMember(top.member, v);
      case Frame::kShape:
        return input_.ShapeItem(top.items++, v);
      case Frame::kOutputs:
        return BeginOutput(top.items++, v);
      case Frame::kOutput:
        return OutputMember(top.member, v);
      case Frame::kData:
        return input_.data().Item(v);
      case Frame::kSkip:
        if (v.kind == Kind::kObject || v.kind == Kind::kArray) stack_.Push(Frame::kSkip);
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
          return Unknown(input_.field(), "name, shape, datatype, data, parameters", key);
        }
        return absl::OkStatus();
      case Frame::kOutput:
        top.member = key == "name"         ? Member::kName
                     : key == "parameters" ? Member::kParameters
                                           : Member::kNone;
        if (top.member == Member::kNone) return Unknown(output_field_, "name, parameters", key);
        return absl::OkStatus();
      case Frame::kParams:
        params_.Key(key);
        return absl::OkStatus();
      default:  // kSkip (objects inside skipped data)
        return absl::OkStatus();
    }
  }

  absl::Status OnEnd(size_t items) {
    const Open closed = stack_.Pop();
    switch (closed.frame) {
      case Frame::kInput:
        return input_.Finish();
      case Frame::kOutput:
        if (!output_has_name_) return Invalid(output_field_ + ".name", "a string", "nothing");
        return absl::OkStatus();
      case Frame::kData:
        return input_.data().End(items);
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
        params_.Begin(Params::kRequest, request_->mutable_parameters(), "parameters");
        stack_.Push(Frame::kParams);
        return absl::OkStatus();
      case Member::kInputs:
        if (v.kind != Kind::kArray) {
          return Invalid("inputs", "an array of input tensors", KindName(v.kind));
        }
        has_inputs_ = true;
        stack_.Push(Frame::kInputs);
        return absl::OkStatus();
      default:  // kOutputs
        if (v.kind != Kind::kArray) return Invalid("outputs", "an array", KindName(v.kind));
        stack_.Push(Frame::kOutputs);
        return absl::OkStatus();
    }
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
    stack_.Push(Frame::kOutput);
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
    params_.Begin(Params::kOutput, output_->mutable_parameters(), output_field_ + ".parameters");
    stack_.Push(Frame::kParams);
    return absl::OkStatus();
  }

  ModelInferRequest* request_;
  bool failed_ = false;
  bool has_inputs_ = false;
  absl::Status root_error_;  // the body is JSON but not an object
  FrameStack stack_;
  ParamsReader params_;
  BinarySection binary_;  // the body after the JSON
  InputReader input_;

  ModelInferRequest::InferRequestedOutputTensor* output_ = nullptr;
  std::string output_field_;
  bool output_has_name_ = false;
};

}  // namespace

absl::StatusOr<ModelInferRequest> InferRequestFromHttp(
    absl::string_view body, const std::string* inference_header_content_length,
    const std::string& name, const std::string& version) {
  size_t json_size = body.size();
  if (inference_header_content_length != nullptr) {
    absl::StatusOr<size_t> length =
        rest_internal::JsonLength(*inference_header_content_length, body.size());
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
