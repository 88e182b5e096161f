// statistics_handler.h: the Open Inference Protocol's statistics extension
// (Triton's ModelStatistics), free of any transport.
//
// Which (model, version) pairs a request names, each answered by `source`
// (in the server: ModelStatisticsTable::Fill, server/common/model_statistics.h,
// whose numbers are kept with the Prometheus series):
//   name ""                    every model with a ready version, each ready
//                              version; by name, then version ascending
//   name N, version ""         every ready version of N, ascending
//   name N, version V          the one version V resolves to ("latest", a
//                              number or a label, as ModelMetadata resolves it)
// Only versions loaded now are listed (an unloaded version's numbers are
// gone: a version loaded again starts at 0).
//
// Errors: INVALID_ARGUMENT naming the field: `version` set without a `name`,
// a malformed name or version (inference_tensors.h ModelSpecFromProtocol);
// NOT_FOUND naming `name` (no ready version of that model) or `version`
// (that version or label is not ready).
//
// Thread-safety: may be called from any thread at once, if `source` may.
#ifndef INVARIANT_SERVER_HANDLERS_STATISTICS_HANDLER_H_
#define INVARIANT_SERVER_HANDLERS_STATISTICS_HANDLER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "inference/grpc_service.pb.h"
#include "server/handlers/model_metadata.h"

namespace invariant::server {

// Sets `out` to the statistics of (name, version).
using StatisticsSource =
    std::function<void(const std::string& name, int64_t version, inference::ModelStatistics* out)>;

absl::Status AnswerModelStatistics(const Registry& registry, const StatisticsSource& source,
                                   const inference::ModelStatisticsRequest& request,
                                   inference::ModelStatisticsResponse* response);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_STATISTICS_HANDLER_H_
