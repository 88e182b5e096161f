// inference_images.h: Open Inference Protocol tensors → image files, for a
// model of image files.
//
// Such a model takes one input "input" BYTES of shape [n] or [n, 1]: each
// element a whole encoded JPEG or PNG file, as typed contents
// (bytes_contents) or as raw_input_contents (each element a 4-byte
// little-endian length, then the bytes: the protocol's binary form, and what
// REST's binary tensor data extension carries). The result is n images
// viewed in place in the transport-free InferRequest, checked further by
// the shared image checks (image_files.h) under the protocol's field names:
// the file of element i is "inputs[0][i]".
//
// Errors: INVALID_ARGUMENT naming the protocol field ("inputs[0].datatype:
// expected BYTES (encoded JPEG or PNG files) for a model of image files ...",
// "inputs[0].shape: expected [n] or [n, 1] ..."). Pure functions.
#ifndef INVARIANT_SERVER_HANDLERS_INFERENCE_IMAGES_H_
#define INVARIANT_SERVER_HANDLERS_INFERENCE_IMAGES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "inference/grpc_service.pb.h"
#include "server/handlers/infer_request.h"

namespace invariant::server {

// The request's tensor as image files in `*out` (declared_rows, fields, raw
// set): views into `request`, which must outlive `*out`. At most `max_rows`
// images, checked from the shape before the contents are looked at.
// `json`: the typed data came as REST's "data" arrays.
absl::Status DecodeImageInferInput(const inference::ModelInferRequest& request, int64_t max_rows,
                                   InferRequest* out, bool json = false);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_INFERENCE_IMAGES_H_
