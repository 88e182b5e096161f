#include "server/rest/rest_infer_params.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "protocol/binary_tensor_data.h"
#include "server/handlers/validation.h"

namespace invariant::server::rest_internal {

using inference::InferParameter;

void ParamsReader::Begin(Params kind, Map* target, std::string field,
                         std::optional<int64_t>* binary_data_size) {
  kind_ = kind;
  target_ = target;
  field_ = std::move(field);
  binary_data_size_ = binary_data_size;
}

absl::Status ParamsReader::Read(const Value& v) {
  // The member's name, for errors only.
  const auto field = [this] { return absl::StrCat(field_, ".", EchoInput(key_)); };
  InferParameter& parameter = (*target_)[key_];
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
  if (kind_ == Params::kInput && key_ == kBinaryDataSize) {
    if (parameter.parameter_choice_case() != InferParameter::kInt64Param ||
        parameter.int64_param() < 0) {
      return Invalid(field(), "a non-negative integer (bytes)",
                     v.kind == Kind::kNumber ? EchoInput(v.text) : KindName(v.kind));
    }
    *binary_data_size_ = parameter.int64_param();
  }
  const bool must_be_bool = (kind_ == Params::kOutput && key_ == kBinaryData) ||
                            (kind_ == Params::kRequest && key_ == kBinaryDataOutput);
  if (must_be_bool && v.kind != Kind::kBool) return Invalid(field(), "a boolean", KindName(v.kind));
  return absl::OkStatus();
}

}  // namespace invariant::server::rest_internal
