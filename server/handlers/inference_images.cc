#include "server/handlers/inference_images.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/error_text.h"
#include "core/base/status_macros.h"
#include "server/handlers/inference_input_tensor.h"
#include "server/handlers/inference_tensors.h"

namespace invariant::server {

absl::Status DecodeImageInferInput(const inference::ModelInferRequest& request, int64_t max_rows,
                                   InferRequest* out, bool json) {
  if (request.inputs_size() != 1) {
    return Invalid("inputs",
                   absl::StrCat("exactly 1 input tensor named '", kInferenceInputName,
                                "' (a model of image files)"),
                   absl::StrCat(request.inputs_size(), " tensors"));
  }
  const Tensor& t = request.inputs(0);
  if (t.name() != kInferenceInputName) {
    return Invalid("inputs[0].name", absl::StrCat("'", kInferenceInputName, "'"),
                   absl::StrCat("'", EchoInput(t.name()), "'"));
  }
  if (t.datatype() != "BYTES") {
    return Invalid("inputs[0].datatype",
                   "BYTES (encoded JPEG or PNG files) for a model of image files",
                   absl::StrCat("'", EchoInput(t.datatype()), "'"));
  }
  const auto& shape = t.shape();
  const bool shape_ok =
      (shape.size() == 1 && shape[0] >= 1) || (shape.size() == 2 && shape[0] >= 1 && shape[1] == 1);
  if (!shape_ok) {
    return Invalid("inputs[0].shape", "[n] or [n, 1] (n >= 1 image files)", EchoShape(shape));
  }
  const int64_t n = shape[0];
  if (n > max_rows) {
    return Invalid("inputs[0].shape", absl::StrCat("at most ", max_rows, " rows per request"),
                   EchoShape(shape));
  }
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != 1) {
    return Invalid("raw_input_contents", "1 entry (one per input tensor)",
                   absl::StrCat(request.raw_input_contents_size()));
  }
  const TensorData input{&t, 0, raw ? &request.raw_input_contents(0) : nullptr, json};
  out->fields = ProtocolFieldNames(raw, 0, json);
  out->fields.images = "inputs[0].shape";
  out->fields.image = [](int64_t index) { return absl::StrCat("inputs[0][", index, "]"); };
  out->raw = raw;
  out->declared_rows = n;
  return BytesElements(input, n, "image files", &out->images);
}

}  // namespace invariant::server
