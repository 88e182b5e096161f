// rest_infer_request.h: the body of an Open Inference Protocol infer call in
// its HTTP/JSON form (KServe v2 REST), with the binary tensor data extension
// of Triton / KServe, read into the protocol's request message.
//
// Pure functions, free of any transport: the REST front end (rest_service.h)
// turns a request body into the protocol's request message here, hands it to
// InferenceHandler exactly as the gRPC service does, and writes the response
// with rest_codec.h. So both transports share one validation.
//
// Infer request body: a JSON object with the members
//   "id"          string, echoed back (optional)
//   "parameters"  object of boolean / number / string values (optional);
//                 "binary_data_output": true asks for every output in binary
//   "inputs"      array of {"name", "shape", "datatype", "data", "parameters"?}
//   "outputs"     array of {"name", "parameters"?} (optional; none = all);
//                 "parameters": {"binary_data": true / false} asks for this
//                 output in binary or in JSON (over binary_data_output)
// Any other member is refused. "data" holds the tensor's elements, flat
// (row-major) or nested exactly as "shape"; for datatype FP32 each element is
// a JSON number, read once to the nearest float (std::from_chars<float> on
// the literal: a float written with the shortest round-trip digits reads back
// bit for bit) straight into the request's contents.fp32_contents; for INT16
// and INT32 each element is a JSON integer (within int32) into int_contents,
// for INT64 into int64_contents (the sample and length tensors of a model of
// sound). Integer data that comes before its "datatype" member is read as
// floats first and kept when every value is an integer of magnitude at most
// 2^24. Other datatypes are passed on without contents, so the shared
// validation names the datatype. The body is read in one linear pass (json.h,
// ParseJsonEvents): no tree of values, every strictness rule of json.h
// (valid UTF-8, depth <= kDefaultJsonMaxDepth, no NaN / Infinity / leading
// zeros, no repeated key), at most 64 inputs and 64 outputs (refused as they
// are read). Memory: the floats (reserved ahead from the shapes, within one
// budget of JSON bytes / 2 floats for the whole body), plus O(depth); no
// copy of the body. Parameters, the outputs and their parameters are kept in the
// request (InferResponseToHttp reads them).
//
// Binary tensor data: with the header Inference-Header-Content-Length: N the
// body's first N bytes are the JSON above and the rest is the raw data of
// the inputs whose "parameters" hold "binary_data_size": B (such an input
// has no "data"), B bytes each, in input order, little-endian row-major. B
// must be the shape's element count × the datatype's size (4 for FP32; any
// B for BYTES), and the sizes must add up to exactly the bytes after the
// JSON. A binary input is copied into the contents of its datatype: FP32
// into fp32_contents, INT16 (widened) and INT32 into int_contents, INT64
// into int64_contents, and BYTES, whose data is the shape's element count of
// elements, each a 4-byte little-endian length and that many bytes filling B
// exactly, into bytes_contents (WAV files for a model of sound); others are
// checked and passed on without contents, like their JSON form.
//
// Errors: INVALID_ARGUMENT naming the member or header, the first problem
// in document order ("inputs[0].data[3]: expected a number, received a
// string"; "inputs[0].parameters.binary_data_size: expected 24 (shape [2, 3]
// × 4 bytes of FP32), received 20"; "Inference-Header-Content-Length:
// expected a decimal byte count ..."); a body whose JSON is malformed is
// "request body: byte N: expected ...". Client text quoted in a message
// (member names, number literals, header values) is cut by EchoInput
// (validation.h) to 64 bytes; shapes quote at most 8 dimensions.
//
// The pieces: rest_infer_request.cc reads the body's root and outputs and
// dispatches the rest to rest_infer_params.h (parameters),
// rest_infer_tensor.h (an input), rest_infer_data.h (its "data") and
// rest_infer_binary.h (the header and the binary part).
//
// Thread-safety: every function is pure and reentrant.
#ifndef INVARIANT_SERVER_REST_REST_INFER_REQUEST_H_
#define INVARIANT_SERVER_REST_REST_INFER_REQUEST_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "inference/grpc_service.pb.h"

namespace invariant::server {

// The protocol request of an infer call on model `name` at `version` ("" =
// the default version) whose body is `body`. `inference_header_content_length`
// is the value of the Inference-Header-Content-Length request header, or null
// when the request has none (then the whole body is JSON and no input may be
// binary). The value must be a decimal byte count of at most body.size()
// (surrounding spaces and tabs are ignored). `body` is only read during the
// call; the request owns everything it needs.
absl::StatusOr<inference::ModelInferRequest> InferRequestFromHttp(
    absl::string_view body, const std::string* inference_header_content_length,
    const std::string& name, const std::string& version);

// InferRequestFromHttp without the header: a body that is all JSON.
absl::StatusOr<inference::ModelInferRequest> InferRequestFromJson(absl::string_view body,
                                                                  const std::string& name,
                                                                  const std::string& version);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_REST_REST_INFER_REQUEST_H_
