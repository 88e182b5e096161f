#include "server/rest/rest_service.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/base/json.h"
#include "core/base/status_code_name.h"
#include "server/common/auth.h"
#include "server/common/status_util.h"
#include "server/handlers/validation.h"
#include "server/rest/rest_codec.h"
#include "server/rest/rest_infer_request.h"
#include "server/rest/rest_repository.h"
#include "server/rest/rest_statistics.h"

namespace invariant::server {
namespace {

constexpr char kJson[] = "application/json";
constexpr char kAnswerHint[] =
    "ask for the outputs in binary (\"parameters\": {\"binary_data_output\": true}), for fewer "
    "outputs (\"outputs\"), or send fewer rows";

HttpResponse Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = kJson;
  response.body = std::move(body);
  return response;
}

using Route = RestInferenceService::Route;

// /v2, /v2/health/{live,ready}, /v2/models/{name}[/versions/{v}][/ready|/infer],
// /v2/repository/index, /v2/repository/models/{name}/{load,unload},
// /v2/models[/{name}[/versions/{v}]]/stats (so a model named "stats" has its
// metadata at /v2/models/stats/versions/{v} only, as in Triton)
Route Match(const std::string& path) {
  std::vector<std::string> parts = absl::StrSplit(path, '/');
  Route route;
  if (parts.size() < 2 || !parts[0].empty() || parts[1] != "v2") return route;
  parts.erase(parts.begin(), parts.begin() + 2);
  if (parts.empty()) {
    route.method = "ServerMetadata";
  } else if (parts.size() == 1 && parts[0] == "report") {
    route.method = "ReportIndex";
  } else if (parts.size() == 2 && parts[0] == "health") {
    if (parts[1] == "live") route.method = "ServerLive";
    if (parts[1] == "ready") route.method = "ServerReady";
  } else if (parts.size() == 2 && parts[0] == "repository" && parts[1] == "index") {
    route.method = "RepositoryIndex";
    route.http_method = "POST";
  } else if (parts.size() == 4 && parts[0] == "repository" && parts[1] == "models" &&
             (parts[3] == "load" || parts[3] == "unload")) {
    route.method = parts[3] == "load" ? "RepositoryModelLoad" : "RepositoryModelUnload";
    route.http_method = "POST";
    route.model = parts[2];
  } else if (parts.size() == 2 && parts[0] == "models" && parts[1] == "stats") {
    route.method = "ModelStatistics";  // every model
  } else if (parts.size() >= 2 && parts[0] == "models") {
    route.model = parts[1];
    size_t next = 2;
    if (parts.size() >= 4 && parts[2] == "versions") {
      route.version = parts[3];
      next = 4;
    }
    if (parts.size() == next) {
      route.method = "ModelMetadata";
    } else if (parts.size() == next + 1 && parts[next] == "ready") {
      route.method = "ModelReady";
    } else if (parts.size() == next + 1 && parts[next] == "report") {
      route.method = "ModelReport";
    } else if (parts.size() == next + 1 && parts[next] == "stats") {
      route.method = "ModelStatistics";
    } else if (parts.size() == next + 1 && parts[next] == "infer") {
      route.method = "ModelInfer";
      route.http_method = "POST";
    }
  }
  return route;
}

// The deadline of a call whose request arrived at request.arrival (a request
// made in process, with no arrival, arrived now).
absl::Time DeadlineFromArrival(const HttpRequest& request, absl::Duration timeout) {
  const absl::Time now = absl::Now();
  if (request.arrival == std::chrono::steady_clock::time_point()) return now + timeout;
  const auto waited = std::chrono::steady_clock::now() - request.arrival;
  return now - absl::FromChrono(waited) + timeout;
}

bool IsRepositoryRoute(const Route& route) { return absl::StartsWith(route.method, "Repository"); }

// The request's Authorization header into `value` (false: none sent), or
// UNAUTHENTICATED when it sends several: which one is meant is not the
// server's guess (gRPC's gate refuses several authorization entries too).
absl::StatusOr<bool> OneAuthorization(const HttpRequest& request, std::string* value) {
  int count = 0;
  for (const auto& [name, header] : request.headers) {
    if (!absl::EqualsIgnoreCase(name, "Authorization")) continue;
    ++count;
    *value = header;
  }
  if (count > 1) {
    return absl::UnauthenticatedError(
        absl::StrCat("Authorization: expected one 'Bearer <token>' header, received ", count));
  }
  return count == 1;
}

bool MethodAllowed(const std::string& http_method, const Route& route) {
  if (http_method == route.http_method) return true;
  return route.http_method == "GET" && http_method == "HEAD";
}

}  // namespace

HttpResponse RestInferenceService::ErrorResponse(int status, const std::string& message) {
  return Json(status, ErrorToJson(message));
}

void RestInferenceService::Register(HttpServer* server) const {
  if (metrics_ != nullptr) {
    std::vector<const char*> methods = {"ServerLive",    "ServerReady", "ServerMetadata",
                                        "ModelMetadata", "ModelReady",  "ModelInfer"};
    methods.push_back("ModelStatistics");
    if (extensions_.pages != nullptr) methods.insert(methods.end(), {"ReportIndex", "ModelReport"});
    if (extensions_.repository != nullptr) {
      methods.insert(methods.end(),
                     {"RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload"});
    }
    for (const char* method : methods) {
      for (int code = 0; code <= 16; ++code) {
        metrics_->RpcKnown(kRestServiceLabel, method, "http", StatusCodeName(code));
      }
    }
  }
  server->Route(
      "/", [this](HttpRequest& request) { return Serve(request); },
      [this](const HttpRequest& request) { return Admit(request); });
}

std::optional<HttpResponse> RestInferenceService::Admit(const HttpRequest& request) const {
  const Route route = Match(request.path);
  if (route.method.empty()) {
    return ErrorResponse(404, absl::StrCat("path: expected a route of the Open Inference "
                                           "Protocol under /v2, received '",
                                           EchoInput(request.path), "'"));
  }
  if (!MethodAllowed(request.method, route)) {
    HttpResponse response = ErrorResponse(
        405, absl::StrCat("method: expected ", route.http_method, " for ", EchoInput(request.path),
                          ", received ", EchoInput(request.method)));
    response.headers.emplace_back("Allow",
                                  route.http_method == "GET" ? "GET, HEAD" : route.http_method);
    return response;
  }
  // Health and refusals are answered here, on the network thread, before a
  // byte of the body is read; the rest goes to Handle on a handler thread.
  const bool health = route.method == "ServerLive" || route.method == "ServerReady";
  if (IsRepositoryRoute(route)) {
    if (extensions_.repository == nullptr) {
      return ErrorResponse(404, "path: the repository extension is not served");
    }
    std::string authorization;
    const absl::StatusOr<bool> sent = OneAuthorization(request, &authorization);
    const absl::Status admin = sent.ok() ? CheckAdmin(extensions_.access, extensions_.admin_token,
                                                      *sent ? &authorization : nullptr)
                                         : sent.status();
    if (admin.ok()) return std::nullopt;
    return Counted(route, [&](HttpResponse* response) {
      *response = ErrorResponse(HttpStatusCode(admin), std::string(admin.message()));
      if (admin.code() == absl::StatusCode::kUnauthenticated) {
        response->headers.emplace_back("WWW-Authenticate", "Bearer");
      }
      return admin;
    });
  }
  if (!health && data_token_.empty()) return std::nullopt;
  absl::Status auth;
  if (!health) {
    std::string authorization;
    const absl::StatusOr<bool> sent = OneAuthorization(request, &authorization);
    auth = sent.ok() ? CheckBearerToken(data_token_, *sent ? &authorization : nullptr, "data token")
                     : sent.status();
    if (auth.ok()) return std::nullopt;
  }
  return Counted(route, [&](HttpResponse* response) {
    if (!auth.ok()) {
      *response = ErrorResponse(HttpStatusCode(auth), std::string(auth.message()));
      response->headers.emplace_back("WWW-Authenticate", "Bearer");
      return auth;
    }
    return AnswerHealth(route, response);  // a health route: open, no token needed
  });
}

HttpResponse RestInferenceService::Handle(HttpRequest& request) const {
  if (std::optional<HttpResponse> refusal = Admit(request)) return *refusal;
  return Serve(request);
}

HttpResponse RestInferenceService::Serve(HttpRequest& request) const {
  const Route route = Match(request.path);
  if (route.method == "RepositoryModelLoad" || route.method == "RepositoryModelUnload") {
    return ServeLater(route, request);
  }
  return Counted(route, [&](HttpResponse* response) { return Answer(route, request, response); });
}

HttpResponse RestInferenceService::ServeLater(const Route& route, HttpRequest& request) const {
  const absl::Time start = Started(route);
  // The request's deferred reply, so no handler thread waits for the load or
  // the drain; called directly (no server), the answer is waited for here.
  std::promise<HttpResponse> direct;
  const HttpReply reply = request.defer ? request.defer() : [&direct](HttpResponse response) {
    direct.set_value(std::move(response));
  };
  RestRepositoryLoad(*extensions_.repository, route.model, route.method == "RepositoryModelLoad",
                     request.body, [this, route, start, reply](absl::Status status) {
                       HttpResponse response;
                       if (status.ok()) response = Json(200, "{}");
                       reply(Finished(route, start, status, std::move(response)));
                     });
  if (request.defer) return {};  // ignored: the reply answers
  return direct.get_future().get();
}

absl::Time RestInferenceService::Started(const Route& route) const {
  if (metrics_ != nullptr) metrics_->RpcStarted(kRestServiceLabel, route.method, "http");
  return absl::Now();
}

HttpResponse RestInferenceService::Counted(
    const Route& route, const std::function<absl::Status(HttpResponse*)>& answer) const {
  const absl::Time start = Started(route);
  HttpResponse response;
  const absl::Status status = answer(&response);
  return Finished(route, start, status, std::move(response));
}

HttpResponse RestInferenceService::Finished(const Route& route, absl::Time start,
                                            const absl::Status& status,
                                            HttpResponse response) const {
  if (!status.ok() && response.body.empty()) {
    response = ErrorResponse(HttpStatusCode(status), std::string(status.message()));
    // A full queue or budget frees as other calls end.
    if (status.code() == absl::StatusCode::kResourceExhausted) {
      response.headers.emplace_back("Retry-After", "1");
    }
  }
  if (metrics_ != nullptr) {
    metrics_->RpcHandled(kRestServiceLabel, route.method, "http",
                         StatusCodeName(static_cast<int>(status.code())),
                         absl::ToDoubleSeconds(absl::Now() - start));
  }
  return response;
}

absl::Status RestInferenceService::AnswerHealth(const Route& route, HttpResponse* response) const {
  absl::Status status;
  if (route.method == "ServerLive") {
    inference::ServerLiveResponse live;
    status = handler_->ServerLive({}, &live);
    if (status.ok()) {
      *response =
          live.live() ? Json(200, "{\"live\":true}") : ErrorResponse(503, "the server is not live");
    }
  } else {
    inference::ServerReadyResponse ready;
    status = handler_->ServerReady({}, &ready);
    if (status.ok()) {
      *response = ready.ready() ? Json(200, "{\"ready\":true}")
                                : ErrorResponse(503,
                                                "the server is not ready: a model has no "
                                                "ready version, or the server is stopping");
    }
  }
  return status;
}

absl::Status RestInferenceService::Answer(const Route& route, HttpRequest& request,
                                          HttpResponse* response) const {
  absl::Status status;
  if (route.method == "ServerLive" || route.method == "ServerReady") {
    status = AnswerHealth(route, response);
  } else if (route.method == "ReportIndex" || route.method == "ModelReport") {
    if (extensions_.pages == nullptr)
      return absl::NotFoundError("path: model pages are not served");
    absl::StatusOr<std::string> page =
        route.method == "ReportIndex" ? extensions_.pages->IndexPage()
                                      : extensions_.pages->ReportPage(route.model, route.version);
    status = page.status();
    if (status.ok()) {
      *response = Json(200, *std::move(page));
      response->content_type = "text/html; charset=utf-8";
    }
  } else if (route.method == "RepositoryIndex") {  // loads and unloads: ServeLater
    std::string answer;
    status = RestRepositoryIndex(*extensions_.repository, request.body, &answer);
    if (status.ok()) *response = Json(200, std::move(answer));
  } else if (route.method == "ServerMetadata") {
    inference::ServerMetadataResponse metadata;
    status = handler_->ServerMetadata({}, &metadata);
    // The binary tensor extension is a property of this binding, not of gRPC's.
    metadata.add_extensions("binary_tensor_data");
    if (status.ok()) *response = Json(200, ServerMetadataToJson(metadata));
  } else if (route.method == "ModelMetadata") {
    inference::ModelMetadataRequest metadata_request;
    metadata_request.set_name(route.model);
    metadata_request.set_version(route.version);
    inference::ModelMetadataResponse metadata;
    status = handler_->ModelMetadata(metadata_request, &metadata);
    if (status.ok()) *response = Json(200, ModelMetadataToJson(metadata));
  } else if (route.method == "ModelStatistics") {
    inference::ModelStatisticsRequest statistics_request;
    statistics_request.set_name(route.model);
    statistics_request.set_version(route.version);
    inference::ModelStatisticsResponse statistics;
    status = handler_->ModelStatistics(statistics_request, &statistics);
    if (status.ok()) *response = Json(200, ModelStatisticsToJson(statistics));
  } else if (route.method == "ModelReady") {
    inference::ModelReadyRequest ready_request;
    ready_request.set_name(route.model);
    ready_request.set_version(route.version);
    inference::ModelReadyResponse ready;
    status = handler_->ModelReady(ready_request, &ready);
    if (status.ok() && ready.ready()) {
      *response =
          Json(200, absl::StrCat("{\"name\":", JsonString(route.model), ",\"ready\":true}"));
    } else if (status.ok()) {
      // Not ready: the metadata lookup says why (unknown model, version, label).
      inference::ModelMetadataRequest why;
      why.set_name(route.model);
      why.set_version(route.version);
      inference::ModelMetadataResponse ignored;
      const absl::Status reason = handler_->ModelMetadata(why, &ignored);
      *response = ErrorResponse(
          503, reason.ok() ? absl::StrCat("model '", EchoInput(route.model), "' is not ready")
                           : std::string(reason.message()));
    }
  } else {  // ModelInfer
    // The client going away cancels the call wherever it is (queue or batch).
    auto cancel = std::make_shared<CancelToken>();
    if (request.cancellation != nullptr) {
      request.cancellation->OnCancel(
          [cancel] { cancel->Cancel(absl::CancelledError("the client closed the connection")); });
    }
    // A client that left while the call waited for a handler thread: no work.
    if (request.cancellation != nullptr && request.cancellation->cancelled()) {
      const absl::Status gone = absl::CancelledError("the client closed the connection");
      if (metrics_ != nullptr) metrics_->Abandoned("http_queue", gone);
      return gone;
    }
    const std::string header_length = request.Header(kInferenceHeaderContentLength);
    // Given back once the answer is encoded (the handler hands its leases here).
    CallContext call;
    call.answer_leases = std::make_shared<LeaseBag>();
    call.max_answer_bytes = max_answer_bytes_;
    call.answer_limit_name = "http_max_response_bytes";
    call.answer_hint = kAnswerHint;
    absl::StatusOr<inference::ModelInferRequest> infer_request = InferRequestFromHttp(
        request.body, request.HasHeader(kInferenceHeaderContentLength) ? &header_length : nullptr,
        route.model, route.version);
    std::string().swap(request.body);  // the tensor holds what is needed now
    status = infer_request.status();
    // The timeout counts from the request's arrival, not from when a handler
    // thread took it: a call that waited out its time in the queue is
    // answered 504 without any work.
    const absl::Time deadline = DeadlineFromArrival(request, timeout_);
    if (status.ok() && absl::Now() >= deadline) {
      status = absl::DeadlineExceededError(
          absl::StrCat("deadline: the request waited longer than the server's timeout (",
                       absl::FormatDuration(timeout_), ") for a handler thread; try again later"));
      if (metrics_ != nullptr) metrics_->Abandoned("http_queue", status);
    }
    if (status.ok()) {
      // Answers count 4 bytes a value in the protocol's response (computed
      // in place: no copy), plus 16 (the longest float and a comma) in JSON
      // or 4 in binary.
      call.answer_bytes_per_value = WantsAllBinary(*infer_request) ? 4 : 16;
      call.json_tensor_data = true;
      absl::StatusOr<inference::ModelInferResponse> infer_response =
          handler_->ModelInfer(*infer_request, deadline, cancel, call);
      status = infer_response.status();
      if (status.ok()) {
        RestBody body = InferResponseToHttp(*infer_response, *infer_request);
        *response = Json(200, std::move(body.body));
        if (body.json_size.has_value()) {
          response->content_type = "application/octet-stream";
          response->headers.emplace_back(kInferenceHeaderContentLength,
                                         std::to_string(*body.json_size));
        }
      }
    }
    call.answer_leases->Clear();
  }
  return status;
}

}  // namespace invariant::server
