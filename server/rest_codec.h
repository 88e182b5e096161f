// rest_codec.h: Open Inference Protocol messages ↔ their HTTP/JSON form (KServe v2 REST).
//
// Pure functions, free of any transport: the REST front end (rest_service.h)
// turns a request body into the protocol's request message, hands it to
// InferenceHandler exactly as the gRPC service does, and writes the response
// message back as JSON. So both transports share one validation.
//
// Infer request body: a JSON object with the members
//   "id"          string, echoed back (optional)
//   "parameters"  object of boolean / number / string values (optional)
//   "inputs"      array of {"name", "shape", "datatype", "data", "parameters"?}
//   "outputs"     array of {"name", "parameters"?} (optional; none = all)
// Any other member is refused. "data" holds the tensor's elements, flat
// (row-major) or nested exactly as "shape"; for datatype FP32 each element is
// a JSON number, read once to the nearest float (a float written with the
// shortest round-trip digits reads back bit for bit). Other datatypes are
// passed on without contents, so the shared validation names the datatype.
// Errors: INVALID_ARGUMENT naming the member ("inputs[0].data[3]: expected a
// number, received a string"); a body that is not JSON is "request body:
// byte N: expected ...".
//
// Responses: the protocol's messages as JSON objects with the protocol's field
// names; tensor contents (typed or raw) as a flat "data" array: FP32 as the
// shortest decimal that reads back to the same float, INT32 as integers,
// BYTES as strings. Errors: {"error": "message"}.
#ifndef INVARIANT_SERVER_REST_CODEC_H_
#define INVARIANT_SERVER_REST_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "inference/grpc_service.pb.h"

namespace invariant::server {

// The protocol request of an infer call on model `name` at `version` ("" =
// the default version) whose body is `body`.
absl::StatusOr<inference::ModelInferRequest> InferRequestFromJson(absl::string_view body,
                                                                  const std::string& name,
                                                                  const std::string& version);

// The JSON of each response message.
std::string InferResponseToJson(const inference::ModelInferResponse& response);
std::string ServerMetadataToJson(const inference::ServerMetadataResponse& response);
std::string ModelMetadataToJson(const inference::ModelMetadataResponse& response);

// {"error": message}
std::string ErrorToJson(absl::string_view message);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_REST_CODEC_H_
