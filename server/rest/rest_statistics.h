// rest_statistics.h: the JSON body of the statistics extension's REST routes
// (GET /v2/models[/{name}[/versions/{v}]]/stats), in Triton's shape:
//   {"model_stats":[{"name":"m","version":"1","last_inference":1700000000000,
//     "inference_count":12,"execution_count":3,
//     "inference_stats":{"success":{"count":2,"ns":81000},"fail":{...},"queue":{...},
//       "compute_input":{...},"compute_infer":{...},"compute_output":{...},
//       "cache_hit":{...},"cache_miss":{...}},
//     "batch_stats":[{"batch_size":4,"compute_input":{...},"compute_infer":{...},
//       "compute_output":{...}}]}]}
// Every member is always written (zeros included); counts and nanoseconds are
// JSON integers (uint64, written exactly). What the numbers mean:
// server/common/model_statistics.h. Pure function, thread-safe.
#ifndef INVARIANT_SERVER_REST_REST_STATISTICS_H_
#define INVARIANT_SERVER_REST_REST_STATISTICS_H_

#include <string>

#include "inference/grpc_service.pb.h"

namespace invariant::server {

std::string ModelStatisticsToJson(const inference::ModelStatisticsResponse& response);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_REST_REST_STATISTICS_H_
