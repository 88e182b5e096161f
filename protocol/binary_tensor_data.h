// binary_tensor_data.h: the facts of Triton's binary tensor data extension to
// the Open Inference Protocol's HTTP binding, shared by the server's REST
// codec (server/rest/rest_codec.h) and the REST clients (client/loadgen/oip_codec.h):
// the header that splits a body into its JSON part and the raw tensors after
// it, the parameter names, and the bytes per element of each datatype.
// Header-only; every function is pure.
#ifndef INVARIANT_PROTOCOL_BINARY_TENSOR_DATA_H_
#define INVARIANT_PROTOCOL_BINARY_TENSOR_DATA_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace invariant {

// The bytes of JSON at the start of a body whose tensors follow as bytes.
inline constexpr char kInferenceHeaderContentLength[] = "Inference-Header-Content-Length";
// A tensor's parameter: its bytes follow the JSON (and it has no "data").
inline constexpr char kBinaryDataSize[] = "binary_data_size";
// A requested output's parameter: send it as bytes (true) or as JSON.
inline constexpr char kBinaryData[] = "binary_data";
// The request's parameter: every output as bytes unless it says otherwise.
inline constexpr char kBinaryDataOutput[] = "binary_data_output";

// The bytes of one element of `datatype` in binary form; 0 for BYTES
// (variable length) and for unknown datatypes.
inline size_t BinaryElementBytes(absl::string_view datatype) {
  if (datatype == "BOOL" || datatype == "INT8" || datatype == "UINT8") return 1;
  if (datatype == "INT16" || datatype == "UINT16" || datatype == "FP16" || datatype == "BF16") {
    return 2;
  }
  if (datatype == "INT32" || datatype == "UINT32" || datatype == "FP32") return 4;
  if (datatype == "INT64" || datatype == "UINT64" || datatype == "FP64") return 8;
  return 0;
}

}  // namespace invariant

#endif  // INVARIANT_PROTOCOL_BINARY_TENSOR_DATA_H_
