#include "server/rest/rest_infer_tensor.h"

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "server/handlers/validation.h"

namespace invariant::server::rest_internal {

absl::Status InputReader::Begin(size_t index, const Value& v,
                                inference::ModelInferRequest* request) {
  // Refused while parsing: a body of many tiny tensors must not build them all.
  if (index >= kMaxTensors) {
    return Invalid("inputs", absl::StrCat("at most ", kMaxTensors, " tensors"), "more");
  }
  field_ = absl::StrCat("inputs[", index, "]");
  if (v.kind != Kind::kObject) return Invalid(field_, "an object", KindName(v.kind));
  tensor_ = request->add_inputs();
  has_name_ = has_datatype_ = has_shape_ = has_data_ = false;
  binary_size_.reset();
  stack_->Push(Frame::kInput);
  return absl::OkStatus();
}

absl::Status InputReader::ReadMember(Member member, const Value& v) {
  switch (member) {
    case Member::kName:
    case Member::kDatatype: {
      const bool name = member == Member::kName;
      if (v.kind != Kind::kString) {
        return Invalid(field_ + (name ? ".name" : ".datatype"), "a string", KindName(v.kind));
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
        return Invalid(field_ + ".shape", "an array of integers", KindName(v.kind));
      }
      has_shape_ = true;
      stack_->Push(Frame::kShape);
      return absl::OkStatus();
    case Member::kParameters:
      if (v.kind != Kind::kObject) {
        return Invalid(field_ + ".parameters", "an object", KindName(v.kind));
      }
      params_->Begin(Params::kInput, tensor_->mutable_parameters(), field_ + ".parameters",
                     &binary_size_);
      stack_->Push(Frame::kParams);
      return absl::OkStatus();
    default:  // kData
      if (v.kind != Kind::kArray) return Invalid(field_ + ".data", "an array", KindName(v.kind));
      has_data_ = true;
      data_.Begin(tensor_, &field_, has_datatype_, has_shape_);
      return absl::OkStatus();
  }
}

absl::Status InputReader::ShapeItem(size_t index, const Value& v) {
  int64_t dim;
  if (v.kind != Kind::kNumber || !JsonNumberToInt64(v.text, &dim)) {
    return Invalid(absl::StrCat(field_, ".shape[", index, "]"), "an integer",
                   v.kind == Kind::kNumber ? EchoInput(v.text) : KindName(v.kind));
  }
  tensor_->add_shape(dim);
  return absl::OkStatus();
}

absl::Status InputReader::Finish() {
  if (!has_name_) return Invalid(field_ + ".name", "a string", "nothing");
  if (!has_datatype_) return Invalid(field_ + ".datatype", "a string", "nothing");
  if (!has_shape_) return Invalid(field_ + ".shape", "an array of integers", "nothing");
  if (binary_size_.has_value()) {
    if (has_data_) {
      return Invalid(field_ + ".data",
                     "no data for a binary input (parameters.binary_data_size is set)", "an array");
    }
    return binary_->Take(field_, *binary_size_, tensor_);
  }
  if (!has_data_) return Invalid(field_ + ".data", "an array", "nothing");
  return data_.Finish();
}

}  // namespace invariant::server::rest_internal
