// rest_codec.h: Open Inference Protocol response messages in their HTTP/JSON
// form (KServe v2 REST), with the binary tensor data extension of Triton /
// KServe.
//
// Pure functions, free of any transport: the REST front end (rest_service.h)
// turns a request body into the protocol's request message
// (rest_infer_request.h), hands it to InferenceHandler exactly as the gRPC
// service does, and writes the response message back with these. So both
// transports share one validation.
//
// Responses: the protocol's messages as JSON objects with the protocol's field
// names, written straight into one string (no temporary per number); tensor
// contents (typed or raw) as a flat "data" array: FP32 / FP64 as the shortest
// decimal that reads back to the same value, INT32 / INT64 as integers, BYTES
// as strings. An output asked for in binary has "parameters":
// {"binary_data_size": B} and no "data"; its B bytes follow the JSON, in
// output order (FP32 / INT32 / INT64 / FP64 little-endian, BYTES as a 4-byte
// little-endian length + the bytes each). Errors: {"error": "message"}.
//
// Thread-safety: every function is pure and reentrant.
#ifndef INVARIANT_SERVER_REST_REST_CODEC_H_
#define INVARIANT_SERVER_REST_REST_CODEC_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "inference/grpc_service.pb.h"
#include "protocol/binary_tensor_data.h"

namespace invariant::server {

// The header of the binary tensor data extension (request and response).
using ::invariant::kInferenceHeaderContentLength;  // protocol/binary_tensor_data.h

// Whether every output `request` asks for comes in binary: each named
// output's "binary_data" (else the request's "binary_data_output") is true,
// or, when it names none, the request's "binary_data_output" is true.
bool WantsAllBinary(const inference::ModelInferRequest& request);

// An HTTP response body. `json_size` is set when binary output data follows
// the JSON: it is then the JSON's length, the value of the response header
// Inference-Header-Content-Length (and the body is best sent as
// application/octet-stream). Unset: the body is all JSON.
struct RestBody {
  std::string body;
  std::optional<size_t> json_size;
};

// The body of the response to `request` (the request InferRequestFromHttp,
// rest_infer_request.h, returned): the outputs that `request` asks for in
// binary (its "binary_data_output" parameter, overridden per output by the
// output's "binary_data" parameter) are written as binary data.
RestBody InferResponseToHttp(const inference::ModelInferResponse& response,
                             const inference::ModelInferRequest& request);

// The JSON of each response message (InferResponseToJson: every output in
// JSON, whatever a request asked).
std::string InferResponseToJson(const inference::ModelInferResponse& response);
std::string ServerMetadataToJson(const inference::ServerMetadataResponse& response);
std::string ModelMetadataToJson(const inference::ModelMetadataResponse& response);

// {"error": message}
std::string ErrorToJson(absl::string_view message);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_REST_REST_CODEC_H_
