// reflection_v1.h: the grpc.reflection.v1 server reflection service.
//
// gRPC 1.51 (Debian 12) serves reflection only as grpc.reflection.v1alpha;
// clients that try v1 first (grpcurl, Postman, grpcui) then fall back or
// fail. This service answers v1 from the same source as v1alpha: the
// process's generated descriptor pool. list_services names the services
// given at construction; file requests return the file and the imports not
// yet sent on this stream; unknown names are NOT_FOUND error responses on
// the stream (the stream itself stays OK).
#ifndef INVARIANT_SERVER_GRPC_REFLECTION_V1_H_
#define INVARIANT_SERVER_GRPC_REFLECTION_V1_H_

#include <string>
#include <utility>
#include <vector>

#include "grpc/reflection/v1/reflection.grpc.pb.h"

namespace invariant::server {

class ReflectionV1Service final : public grpc::reflection::v1::ServerReflection::Service {
 public:
  // `services`: the full names list_services reports.
  explicit ReflectionV1Service(std::vector<std::string> services)
      : services_(std::move(services)) {}

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1::ServerReflectionResponse,
                               grpc::reflection::v1::ServerReflectionRequest>* stream) override;

 private:
  const std::vector<std::string> services_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_REFLECTION_V1_H_
