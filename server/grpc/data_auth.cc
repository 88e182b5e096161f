#include "server/grpc/data_auth.h"

#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <grpc/support/log.h>

#include "absl/strings/str_cat.h"
#include "core/base/status_code_name.h"
#include "server/common/auth.h"
#include "server/grpc/metrics_interceptor.h"

namespace invariant::server {
namespace {

constexpr char kWhat[] = "data token";
constexpr char kUnknown[] = "unknown";  // metrics_interceptor.h's kUnknownRpcLabel

// "package.Service" of "/package.Service/Method", or empty when `path` is not
// of that form.
absl::string_view ServiceOf(absl::string_view path) {
  if (path.size() < 2 || path[0] != '/') return {};
  const size_t slash = path.find('/', 1);
  if (slash == absl::string_view::npos || slash == 1 || slash + 1 == path.size()) return {};
  if (path.find('/', slash + 1) != absl::string_view::npos) return {};
  return path.substr(1, slash - 1);
}

absl::string_view View(const grpc_slice& slice) {
  return absl::string_view(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(slice)),
                           GRPC_SLICE_LENGTH(slice));
}

// grpc_auth_metadata_processor.process: runs on a core thread with the call's
// initial metadata and answers at once (the gate never blocks).
void Process(void* state, grpc_auth_context* /*context*/, const grpc_metadata* md, size_t num_md,
             grpc_process_auth_metadata_done_cb done, void* user_data) {
  const auto& gate = *static_cast<std::shared_ptr<const DataTokenGate>*>(state);
  std::vector<DataTokenGate::Header> headers;
  headers.reserve(num_md);
  for (size_t i = 0; i < num_md; ++i) headers.emplace_back(View(md[i].key), View(md[i].value));
  const absl::Status status = gate->Admit(headers);
  // Nothing is consumed: "authorization" stays for the handlers (ModelAdmin).
  if (status.ok()) {
    done(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_OK, nullptr);
    return;
  }
  const std::string message(status.message());  // core copies it
  done(user_data, nullptr, 0, nullptr, 0, static_cast<grpc_status_code>(status.code()),
       message.c_str());
}

void Destroy(void* state) { delete static_cast<std::shared_ptr<const DataTokenGate>*>(state); }

}  // namespace

DataTokenGate::DataTokenGate(DataTokenPolicy policy)
    : policy_(std::move(policy)), unknown_{kUnknown, kUnknown, kUnknown} {
  for (const google::protobuf::ServiceDescriptor* service : policy_.labelled) {
    if (service == nullptr) continue;
    for (int m = 0; m < service->method_count(); ++m) {
      const google::protobuf::MethodDescriptor& method = *service->method(m);
      labels_.emplace(absl::StrCat("/", service->full_name(), "/", method.name()),
                      Labels{service->full_name(), method.name(), MethodTypeName(method)});
    }
  }
}

absl::Status DataTokenGate::Check(absl::Span<const Header> headers) const {
  const absl::string_view* path = nullptr;
  const absl::string_view* authorization = nullptr;
  int paths = 0, authorizations = 0;
  for (const Header& header : headers) {
    if (header.first == ":path") {
      ++paths;
      path = &header.second;
    } else if (header.first == "authorization") {
      ++authorizations;
      authorization = &header.second;
    }
  }
  if (paths != 1) {
    return absl::UnauthenticatedError(absl::StrCat(
        ":path: expected one method path before checking the ", kWhat, ", received ", paths));
  }
  for (const std::string& open : policy_.open_methods) {
    if (*path == open) return absl::OkStatus();
  }
  const absl::string_view service = ServiceOf(*path);
  if (!service.empty()) {
    for (const std::string& open : policy_.open_services) {
      if (service == open) return absl::OkStatus();
    }
  }
  if (authorizations > 1) {
    return absl::UnauthenticatedError(absl::StrCat("authorization: expected one 'Bearer <", kWhat,
                                                   ">', received ", authorizations,
                                                   " authorization entries"));
  }
  if (authorization == nullptr) return CheckBearerToken(policy_.token, nullptr, kWhat);
  const std::string presented(*authorization);
  return CheckBearerToken(policy_.token, &presented, kWhat);
}

absl::Status DataTokenGate::Admit(absl::Span<const Header> headers) const {
  absl::Status status = Check(headers);
  if (status.ok() || policy_.metrics == nullptr) return status;
  absl::string_view path;
  for (const Header& header : headers) {
    if (header.first == ":path") path = header.second;
  }
  const auto it = labels_.find(path);
  const Labels& labels = it != labels_.end() ? it->second : unknown_;
  policy_.metrics->RpcStarted(labels.service, labels.method, labels.type);
  policy_.metrics->RpcHandled(labels.service, labels.method, labels.type,
                              StatusCodeName(static_cast<int>(status.code())), 0.0);
  return status;
}

GrpcPortCredentials::GrpcPortCredentials(const std::optional<GrpcPortTls>& tls) {
  // The grpc::ServerCredentials base has initialized the library.
  if (!tls.has_value()) {
    credentials_ = grpc_insecure_server_credentials_create();
    return;
  }
  grpc_ssl_pem_key_cert_pair pair{tls->private_key_pem.c_str(), tls->cert_chain_pem.c_str()};
  // Copies the strings; the options own the config and the credentials the
  // options.
  grpc_ssl_server_certificate_config* config = grpc_ssl_server_certificate_config_create(
      tls->client_ca_pem.empty() ? nullptr : tls->client_ca_pem.c_str(), &pair, 1);
  grpc_ssl_server_credentials_options* options =
      grpc_ssl_server_credentials_create_options_using_config(
          tls->client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                     : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY,
          config);
  if (options != nullptr) credentials_ = grpc_ssl_server_credentials_create_with_options(options);
}

GrpcPortCredentials::~GrpcPortCredentials() {
  if (credentials_ != nullptr) grpc_server_credentials_release(credentials_);
}

void GrpcPortCredentials::RequireDataToken(std::shared_ptr<const DataTokenGate> gate) {
  grpc_server_credentials_set_auth_metadata_processor(
      credentials_,
      grpc_auth_metadata_processor{Process, Destroy,
                                   new std::shared_ptr<const DataTokenGate>(std::move(gate))});
}

void GrpcPortCredentials::SetAuthMetadataProcessor(
    const std::shared_ptr<grpc::AuthMetadataProcessor>& /*processor*/) {
  gpr_log(GPR_ERROR, "GrpcPortCredentials: SetAuthMetadataProcessor is not supported (ignored)");
}

int GrpcPortCredentials::AddPortToServer(const std::string& addr, grpc_server* server) {
  return grpc_server_add_http2_port(server, addr.c_str(), credentials_);
}

absl::StatusOr<std::shared_ptr<GrpcPortCredentials>> MakeGrpcPortCredentials(
    const std::optional<GrpcPortTls>& tls) {
  auto credentials = std::make_shared<GrpcPortCredentials>(tls);
  if (credentials->credentials_ == nullptr) {
    return absl::InternalError(absl::StrCat("gRPC port: cannot create the ",
                                            tls.has_value() ? "TLS" : "plaintext", " credentials"));
  }
  return credentials;
}

}  // namespace invariant::server
