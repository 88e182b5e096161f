// inference_input_tensor.h: reading one Open Inference Protocol input tensor,
// shared by the decoders of clips (inference_audio.h) and image files
// (inference_images.h).
//
// TensorData says where a tensor's data is (typed contents or its
// raw_input_contents entry) and how errors name it; CheckContentsField
// refuses typed contents other than the datatype's and contents beside raw
// bytes; BytesElements views the n elements of a BYTES tensor, typed
// (bytes_contents) or raw (each a 4-byte little-endian length and the
// bytes). Errors are INVALID_ARGUMENT naming the protocol field. Pure
// functions; the views point into the request.
#ifndef INVARIANT_SERVER_HANDLERS_INFERENCE_INPUT_TENSOR_H_
#define INVARIANT_SERVER_HANDLERS_INFERENCE_INPUT_TENSOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "inference/grpc_service.pb.h"

namespace invariant::server {

using Tensor = inference::ModelInferRequest::InferInputTensor;

// "FIELD: expected EXPECTED, received RECEIVED".
absl::Status Invalid(const std::string& field, const std::string& expected,
                     const std::string& received);

// Where one input tensor's data is: its typed contents or its raw bytes.
struct TensorData {
  const Tensor* tensor = nullptr;
  int index = 0;
  const std::string* raw = nullptr;  // raw_input_contents[index], or null
  bool json = false;                 // typed data came as REST's "data" arrays
  // The field of the typed data `typed` (e.g. "fp32_contents").
  std::string typed_field(const char* typed) const;
  // "raw_input_contents[k]" or "inputs[k].contents".
  std::string field() const;
};

absl::Status CheckContentsField(const TensorData& t, const std::string& allowed);

// The n elements of BYTES tensor `input` (`what` names them in errors,
// e.g. "WAV files").
absl::Status BytesElements(const TensorData& input, int64_t n, const char* what,
                           std::vector<std::string_view>* out);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_INFERENCE_INPUT_TENSOR_H_
