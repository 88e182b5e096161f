// parse_error_interceptor.h: a unary request that does not parse is
// INVALID_ARGUMENT, not an empty UNIMPLEMENTED.
//
// gRPC 1.51's callback API deserializes a unary request before any handler
// runs and, when the bytes do not parse, answers UNIMPLEMENTED with an empty
// message — which reads as "no such method". Our handlers never answer an
// empty UNIMPLEMENTED, so for a method of the given services this interceptor
// rewrites that status, just before it is sent, to INVALID_ARGUMENT
// "request: the message does not parse as <request type>". Calls to methods
// the services do not declare are left alone (UNIMPLEMENTED is right there).
// Install it before the metrics interceptor so the metrics see the new code.
// (Streams parse their own messages: feature_service.h.)
#ifndef INVARIANT_SERVER_GRPC_PARSE_ERROR_INTERCEPTOR_H_
#define INVARIANT_SERVER_GRPC_PARSE_ERROR_INTERCEPTOR_H_

#include <google/protobuf/descriptor.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <vector>

namespace invariant::server {

// `services` must outlive the server (generated descriptors do).
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeParseErrorInterceptorFactory(std::vector<const google::protobuf::ServiceDescriptor*> services);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_PARSE_ERROR_INTERCEPTOR_H_
