// oip_codec.h: the client side of the Open Inference Protocol's REST infer
// call (KServe v2), as invariant-loadgen sends and checks it — pure functions,
// free of any transport.
//
// Requests (EncodeInferRequest): one FP32 input "input" of shape
// [rows, input_dim] and the requested outputs (one or more), either
//   JSON    {"inputs":[{"name":"input","shape":[r,d],"datatype":"FP32",
//            "data":[...]}],"outputs":[{"name":OUT}]}
//           (floats by AppendJsonNumber: the shortest decimal that reads back
//           bit for bit), or
//   binary  Triton's binary tensor data extension: the same JSON with
//           "parameters":{"binary_data_size":4·r·d} instead of "data" on the
//           input and "parameters":{"binary_data":true} on the output,
//           followed by the r·d floats, little-endian; the caller sends the
//           JSON's length in the header "Inference-Header-Content-Length".
//
// Responses (DecodeInferResponse): the body of an HTTP 200 answer and the
// value of its Inference-Header-Content-Length header (-1 when absent: the
// whole body is JSON). The JSON part must be one JSON object, read strictly
// by core/base/json.h's ParseJsonEvents in one pass without a tree (RFC 8259,
// valid UTF-8, no repeated key, nesting limited to kMaxJsonDepth), with an
// "outputs" array of {"name", "datatype", "shape", "data" | "parameters":
// {"binary_data_size"}}; other members are skipped. Binary outputs take their
// bytes, in output order, from after the JSON, and those bytes must be used up
// exactly. FP32 outputs are decoded to floats (JSON numbers rounded once,
// straight into OutputTensor::fp32; binary bytes read little-endian); other
// datatypes keep only their shape and element count (every number of a
// "data" array must still fit a float). CheckInferOutput then asks for the
// one output the loadgen requested with `rows` rows.
//
// Errors: INVALID_ARGUMENT naming the byte offset (syntax, ParseJsonEvents'
// wording after "response ") or the member at fault, e.g.
// "response byte 17: expected ',' or '}', received 'x'",
// "outputs[0].data: expected a float, received 1e99" or
// "outputs[0].shape: expected [4, n], received [3, 2]".
//
// Thread-safety: every function is pure; distinct objects may be used from
// different threads at once.
#ifndef INVARIANT_CLIENT_LOADGEN_OIP_CODEC_H_
#define INVARIANT_CLIENT_LOADGEN_OIP_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "protocol/binary_tensor_data.h"

namespace invariant::loadgen {

inline constexpr char kOipInputName[] = "input";
using ::invariant::kInferenceHeaderContentLength;  // protocol/binary_tensor_data.h
inline constexpr int kMaxJsonDepth = 32;

enum class RestEncoding { kJson, kBinary };

struct EncodedInferRequest {
  std::string body;
  // Bytes of JSON at the start of `body`: body.size() for JSON, less for
  // binary (the value of Inference-Header-Content-Length).
  int64_t json_bytes = 0;
  // "application/json" or "application/octet-stream".
  std::string content_type;
};

// The body of an infer call with `rows` rows of `input_dim` floats from
// `values` (row-major, rows · input_dim of them) asking for `outputs`.
EncodedInferRequest EncodeInferRequest(const float* values, int64_t rows, int64_t input_dim,
                                       const std::vector<std::string>& outputs,
                                       RestEncoding encoding);
// Appends the request's "outputs" member (with its leading ',') asking for
// `outputs`, each with "binary_data": true when `binary`, and closes the
// request object.
void AppendRequestedOutputs(const std::vector<std::string>& outputs, bool binary,
                            std::string* body);

struct OutputTensor {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;
  bool binary = false;      // the data came after the JSON (binary_data_size)
  int64_t elements = 0;     // elements received (JSON data items or bytes / element size)
  std::vector<float> fp32;  // the values of an FP32 output
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::vector<OutputTensor> outputs;
};

// Decodes an infer response body into `out` (reused: its vectors keep their
// capacity across calls). `json_bytes` is the Inference-Header-Content-Length
// value, or -1 when the response had none.
absl::Status DecodeInferResponse(absl::string_view body, int64_t json_bytes, InferResponse* out);

// OK when `response` has the output `name`, FP32, of shape [rows, n] (n >= 1)
// with rows · n values, sent as binary data exactly when `binary`.
absl::Status CheckInferOutput(const InferResponse& response, const std::string& name, int64_t rows,
                              bool binary);

// The input dimension of a model from its metadata JSON (GET
// /v2/models/{name}, read as a tree by ParseJson; syntax errors
// "model metadata byte N: ..."): the product of inputs[0].shape after its
// first (batch) dimension, which must all be positive.
absl::StatusOr<int64_t> InputDimFromModelMetadata(absl::string_view body);

// The "error" member of an error response body ({"error": "..."}), or the
// first 200 bytes of the body when it is not such an object.
std::string ErrorMessageFromBody(absl::string_view body);

}  // namespace invariant::loadgen

#endif  // INVARIANT_CLIENT_LOADGEN_OIP_CODEC_H_
