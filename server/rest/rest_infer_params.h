// rest_infer_params.h: the "parameters" objects of a REST infer request
// body (the request's, an input's, a requested output's), read member by
// member into the protocol's map of InferParameter.
//
// Contract: a boolean becomes bool_param, a string string_param, a number
// int64_param when it is an integer within int64, else uint64_param within
// uint64, else double_param. The binary tensor data extension's parameters
// are checked where they matter (protocol/binary_tensor_data.h): an input's
// "binary_data_size" must be an integer >= 0 and is handed to the input's
// reader; an output's "binary_data" and the request's "binary_data_output"
// must be booleans. Any other member is kept as it is, for the handler and
// for InferResponseToHttp (rest_codec.h) to read.
//
// Errors: INVALID_ARGUMENT naming the member, "<field>.<key>: expected a
// boolean, a number or a string, received an object" (arrays, objects and
// null refused), "... expected a finite number", "... expected a
// non-negative integer (bytes)", "... expected a boolean"; the key is cut by
// EchoInput.
//
// Thread-safety: one ParamsReader belongs to one request's reader.
#ifndef INVARIANT_SERVER_REST_REST_INFER_PARAMS_H_
#define INVARIANT_SERVER_REST_REST_INFER_PARAMS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "inference/grpc_service.pb.h"
#include "server/rest/rest_infer_events.h"

namespace invariant::server::rest_internal {

// Whose parameters: which of the binary extension's members apply.
enum class Params { kRequest, kInput, kOutput };

class ParamsReader {
 public:
  using Map = google::protobuf::Map<std::string, inference::InferParameter>;

  // A parameters object of `kind` opened: its members go into `target`,
  // `field` ("parameters", "inputs[0].parameters", ...) names them in
  // errors. For an input, `binary_data_size` receives its
  // "binary_data_size"; null otherwise. The caller pushes Frame::kParams.
  void Begin(Params kind, Map* target, std::string field,
             std::optional<int64_t>* binary_data_size = nullptr);

  // The name of the member whose value comes next.
  void Key(absl::string_view key) { key_.assign(key.data(), key.size()); }

  // The value of the member named by the last Key.
  absl::Status Read(const Value& v);

 private:
  Params kind_ = Params::kRequest;
  Map* target_ = nullptr;
  std::string field_;
  std::string key_;
  std::optional<int64_t>* binary_data_size_ = nullptr;
};

}  // namespace invariant::server::rest_internal

#endif  // INVARIANT_SERVER_REST_REST_INFER_PARAMS_H_
