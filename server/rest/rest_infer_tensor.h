// rest_infer_tensor.h: one input tensor of a REST infer request body, an
// object {"name", "shape", "datatype", "data", "parameters"?}, read into a
// new input of the protocol's request.
//
// Contract: "name" and "datatype" are strings, "shape" an array of integers
// (within int64; the shared validation checks the values), "parameters" an
// object (rest_infer_params.h), "data" an array (rest_infer_data.h). Members
// come in any order. When the input closes, name, datatype and shape must
// have been given, and either "data" or, for a binary input,
// parameters.binary_data_size (then no "data"): its bytes are taken from the
// binary part after the JSON (rest_infer_binary.h). At most kMaxTensors
// inputs, refused as they are read.
//
// Errors: INVALID_ARGUMENT naming the member, the first in document order:
// "inputs[0].name: expected a string, received nothing", "inputs[0].shape[1]:
// expected an integer, received 2.5", "inputs: expected at most 64 tensors,
// received more", "inputs[0].data: expected no data for a binary input
// (parameters.binary_data_size is set), received an array", and the errors
// of the data, the parameters and the binary part.
//
// Thread-safety: an InputReader belongs to one request's reader.
#ifndef INVARIANT_SERVER_REST_REST_INFER_TENSOR_H_
#define INVARIANT_SERVER_REST_REST_INFER_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "inference/grpc_service.pb.h"
#include "server/rest/rest_infer_binary.h"
#include "server/rest/rest_infer_data.h"
#include "server/rest/rest_infer_events.h"
#include "server/rest/rest_infer_params.h"

namespace invariant::server::rest_internal {

class InputReader {
 public:
  // The reader's frames, its parameters reader and binary part (all must
  // outlive this); `json_size` as DataReader's.
  InputReader(FrameStack* stack, ParamsReader* params, BinarySection* binary, size_t json_size)
      : stack_(stack), params_(params), binary_(binary), data_(stack, json_size) {}

  // Item `index` of "inputs" began with `v`: an object becomes a new input
  // of `request` (Frame::kInput pushed).
  absl::Status Begin(size_t index, const Value& v, inference::ModelInferRequest* request);

  // "inputs[i]", the input being read, for errors.
  const std::string& field() const { return field_; }

  // The value of the input's member `member` (kName, kShape, kDatatype,
  // kData or kParameters).
  absl::Status ReadMember(Member member, const Value& v);

  // Item `index` of the input's "shape".
  absl::Status ShapeItem(size_t index, const Value& v);

  // The reader of the input's "data" arrays (their items and ends).
  DataReader& data() { return data_; }

  // The input's object closed: required members, then its data or its
  // binary bytes.
  absl::Status Finish();

 private:
  FrameStack* stack_;
  ParamsReader* params_;
  BinarySection* binary_;
  inference::ModelInferRequest::InferInputTensor* tensor_ = nullptr;
  std::string field_;
  bool has_name_ = false, has_datatype_ = false, has_shape_ = false, has_data_ = false;
  std::optional<int64_t> binary_size_;  // parameters.binary_data_size
  DataReader data_;
};

}  // namespace invariant::server::rest_internal

#endif  // INVARIANT_SERVER_REST_REST_INFER_TENSOR_H_
