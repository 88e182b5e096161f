// rest_infer_binary.h: the framing of a REST infer request body under
// Triton's binary tensor data extension (protocol/binary_tensor_data.h):
// the JSON length the Inference-Header-Content-Length header announces, and
// the binary part after the JSON sliced into the inputs whose parameters
// hold "binary_data_size", B bytes each, in input order.
//
// Contract: an input's B must be the shape's element count × the datatype's
// size (BinaryElementBytes; any B for BYTES and unknown datatypes), and the
// sizes must add up to exactly the bytes after the JSON. The bytes are
// little-endian row-major and are copied once, straight into the contents
// of the datatype: FP32 into fp32_contents, INT16 (widened) and INT32 into
// int_contents, INT64 into int64_contents; BYTES, shape-many elements each a
// 4-byte little-endian length and that many bytes filling B exactly, into
// bytes_contents (at most 65536 elements); others are checked and passed on
// without contents. The body is only viewed, never copied.
//
// Errors: INVALID_ARGUMENT naming the header or the member:
// "Inference-Header-Content-Length: expected a decimal byte count of at most
// N (the body's size), received \"...\"", "inputs[0].parameters.binary_data_size:
// expected 24 (shape [2, 3] × 4 bytes of FP32), received 20", a binary input
// without the header, a size beyond the bytes left, a malformed BYTES
// element, and (Finish) "request body: expected N bytes of binary tensor
// data after the JSON ..., received M bytes after the J-byte JSON ...".
//
// Thread-safety: a BinarySection belongs to one request's reader; JsonLength
// is pure.
#ifndef INVARIANT_SERVER_REST_REST_INFER_BINARY_H_
#define INVARIANT_SERVER_REST_REST_INFER_BINARY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "inference/grpc_service.pb.h"

namespace invariant::server::rest_internal {

// The JSON length an Inference-Header-Content-Length value announces: a
// decimal byte count of at most `body_size`, spaces and tabs around it
// ignored.
absl::StatusOr<size_t> JsonLength(const std::string& header, size_t body_size);

// The bytes of a body after its JSON, taken input by input.
class BinarySection {
 public:
  // `binary`: the body after its `json_size` bytes of JSON (viewed, must
  // outlive this); `has_header`: the request has the header (else no input
  // may be binary).
  BinarySection(absl::string_view binary, size_t json_size, bool has_header)
      : binary_(binary), json_size_(json_size), has_header_(has_header) {}

  // The next `size` bytes as the contents of `tensor` (its name, datatype and
  // shape read), the input `field` ("inputs[i]") whose parameters said
  // binary_data_size: `size`. Checks the size against the shape and against
  // the bytes left.
  absl::Status Take(const std::string& field, int64_t size,
                    inference::ModelInferRequest::InferInputTensor* tensor);

  // After the JSON: every byte was taken.
  absl::Status Finish() const;

 private:
  absl::string_view binary_;
  size_t json_size_;
  bool has_header_;
  size_t offset_ = 0;  // taken by the binary inputs so far
};

}  // namespace invariant::server::rest_internal

#endif  // INVARIANT_SERVER_REST_REST_INFER_BINARY_H_
