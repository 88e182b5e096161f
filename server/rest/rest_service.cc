// rest_service.cc: the route table, and what reads it: Register (the
// metrics' series), Match, Admit (the gates) and Serve (dispatch). Each
// route's answer is a function of its own (rest_answers.cc).
#include "server/rest/rest_service.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "core/base/status_code_name.h"
#include "server/common/auth.h"
#include "server/common/status_util.h"
#include "server/handlers/validation.h"
#include "server/rest/rest_codec.h"
#include "server/rest/rest_repository.h"

namespace invariant::server {

using Route = RestInferenceService::Route;

// Who may call a route, and which extension serves it.
enum class RouteKind {
  kHealth,      // open (probes send no credentials); answered in Admit
  kData,        // the data token
  kPages,       // the data token; 404 without model pages
  kRepository,  // the admin gate; 404 without the repository extension
};

// How a route is answered: exactly one is set.
struct RouteAnswer {
  using Probe = absl::Status (RestInferenceService::*)(HttpResponse*) const;
  using Answer = absl::Status (RestInferenceService::*)(const Route&, HttpRequest&,
                                                        HttpResponse*) const;
  using Later = HttpResponse (RestInferenceService::*)(const Route&, HttpRequest&) const;
  constexpr RouteAnswer(Probe p) : probe(p) {}    // NOLINT: the table's rows convert
  constexpr RouteAnswer(Answer a) : answer(a) {}  // NOLINT
  constexpr RouteAnswer(Later l) : later(l) {}    // NOLINT
  Probe probe = nullptr;                          // needs no request: answered in Admit too
  Answer answer = nullptr;                        // on a handler thread, counted
  Later later = nullptr;  // counts and answers on its own (a deferred reply)
};

struct RestInferenceService::RouteSpec {
  const char* method;       // the protocol's method name: the metrics' grpc_method
  const char* http_method;  // "GET" (HEAD too) or "POST"
  // The path, segment by segment; {name} and {version} match any one
  // segment, and "[/versions/{version}]" may be left out.
  const char* pattern;
  RouteKind kind;
  RouteAnswer answer;
};

namespace {

using Spec = RestInferenceService::RouteSpec;

using Segments = absl::InlinedVector<absl::string_view, 8>;

// The segments of `piece` after its first (a piece that continues a path
// starts with '/') or all of them (`first`).
void AppendSegments(absl::string_view piece, bool first, Segments* out) {
  bool skip = !first;
  for (absl::string_view segment : absl::StrSplit(piece, '/')) {
    if (!skip) out->push_back(segment);
    skip = false;
  }
}

// Whether `path` has the segments of `pattern`, binding its placeholders
// into `route` and counting them.
bool MatchSegments(const Segments& pattern, const std::vector<absl::string_view>& path,
                   Route* route, int* placeholders) {
  if (pattern.size() != path.size()) return false;
  *route = Route();
  *placeholders = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == "{name}") {
      route->model = std::string(path[i]);
    } else if (pattern[i] == "{version}") {
      route->version = std::string(path[i]);
    } else if (pattern[i] != path[i]) {
      return false;
    }
    if (absl::StartsWith(pattern[i], "{")) ++*placeholders;
  }
  return true;
}

// MatchSegments, with the optional group "[...]" of `pattern` left out,
// then kept.
bool MatchPattern(absl::string_view pattern, const std::vector<absl::string_view>& path,
                  Route* route, int* placeholders) {
  const size_t open = pattern.find('[');
  const size_t close = pattern.find(']');
  Segments without, with;
  AppendSegments(pattern.substr(0, open), true, &without);
  if (open == absl::string_view::npos) return MatchSegments(without, path, route, placeholders);
  with = without;
  AppendSegments(pattern.substr(open + 1, close - open - 1), false, &with);
  AppendSegments(pattern.substr(close + 1), false, &without);
  AppendSegments(pattern.substr(close + 1), false, &with);
  return MatchSegments(without, path, route, placeholders) ||
         MatchSegments(with, path, route, placeholders);
}

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

bool MethodAllowed(const std::string& http_method, const Spec& spec) {
  if (http_method == spec.http_method) return true;
  return absl::string_view(spec.http_method) == "GET" && http_method == "HEAD";
}

}  // namespace

absl::Span<const Spec> RestInferenceService::RouteTable() {
  using R = RestInferenceService;
  using K = RouteKind;
  // The metrics' series are created in this order (Register).
  static constexpr Spec kRoutes[] = {
      {"ServerLive", "GET", "/v2/health/live", K::kHealth, &R::AnswerServerLive},
      {"ServerReady", "GET", "/v2/health/ready", K::kHealth, &R::AnswerServerReady},
      {"ServerMetadata", "GET", "/v2", K::kData, &R::AnswerServerMetadata},
      {"ModelMetadata", "GET", "/v2/models/{name}[/versions/{version}]", K::kData,
       &R::AnswerModelMetadata},
      {"ModelReady", "GET", "/v2/models/{name}[/versions/{version}]/ready", K::kData,
       &R::AnswerModelReady},
      {"ModelInfer", "POST", "/v2/models/{name}[/versions/{version}]/infer", K::kData,
       &R::ServeModelInfer},
      {"ModelStatistics", "GET", "/v2/models/stats", K::kData, &R::AnswerModelStatistics},
      {"ModelStatistics", "GET", "/v2/models/{name}[/versions/{version}]/stats", K::kData,
       &R::AnswerModelStatistics},
      {"ReportIndex", "GET", "/v2/report", K::kPages, &R::AnswerReportIndex},
      {"ModelReport", "GET", "/v2/models/{name}[/versions/{version}]/report", K::kPages,
       &R::AnswerModelReport},
      {"RepositoryIndex", "POST", "/v2/repository/index", K::kRepository,
       &R::AnswerRepositoryIndex},
      {"RepositoryModelLoad", "POST", "/v2/repository/models/{name}/load", K::kRepository,
       &R::ServeRepositoryLoad},
      {"RepositoryModelUnload", "POST", "/v2/repository/models/{name}/unload", K::kRepository,
       &R::ServeRepositoryLoad},
  };
  return kRoutes;
}

// A path matches the row with the fewest placeholders among those that
// match it (then the first): /v2/models/stats is the statistics of every
// model, so a model named "stats" has its metadata at
// /v2/models/stats/versions/{v} only, as in Triton.
Route RestInferenceService::Match(const std::string& path) {
  const std::vector<absl::string_view> segments = absl::StrSplit(path, '/');
  Route best;
  int fewest = 0;
  for (const Spec& spec : RouteTable()) {
    Route route;
    int placeholders = 0;
    if (!MatchPattern(spec.pattern, segments, &route, &placeholders)) continue;
    if (best.spec != nullptr && placeholders >= fewest) continue;
    best = std::move(route);
    best.spec = &spec;
    fewest = placeholders;
  }
  return best;
}

bool RestInferenceService::Served(const Spec& spec) const {
  if (spec.kind == RouteKind::kPages) return extensions_.pages != nullptr;
  if (spec.kind == RouteKind::kRepository) return extensions_.repository != nullptr;
  return true;
}

HttpResponse RestInferenceService::Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(body);
  return response;
}

HttpResponse RestInferenceService::ErrorResponse(int status, const std::string& message) {
  return Json(status, ErrorToJson(message));
}

void RestInferenceService::Register(HttpServer* server) const {
  if (metrics_ != nullptr) {
    std::vector<absl::string_view> known;
    for (const Spec& spec : RouteTable()) {
      if (!Served(spec) || std::find(known.begin(), known.end(), spec.method) != known.end()) {
        continue;
      }
      known.push_back(spec.method);
      for (int code = 0; code <= 16; ++code) {
        metrics_->RpcKnown(kRestServiceLabel, spec.method, "http", StatusCodeName(code));
      }
    }
  }
  server->Route(
      "/", [this](HttpRequest& request) { return Serve(request); },
      [this](const HttpRequest& request) { return Admit(request); });
}

std::optional<HttpResponse> RestInferenceService::Admit(const HttpRequest& request) const {
  Route route = Match(request.path);
  if (route.spec == nullptr) {
    return ErrorResponse(404, absl::StrCat("path: expected a route of the Open Inference "
                                           "Protocol under /v2, received '",
                                           EchoInput(request.path), "'"));
  }
  const Spec& spec = *route.spec;
  if (!MethodAllowed(request.method, spec)) {
    HttpResponse response = ErrorResponse(
        405, absl::StrCat("method: expected ", spec.http_method, " for ", EchoInput(request.path),
                          ", received ", EchoInput(request.method)));
    const bool get = absl::string_view(spec.http_method) == "GET";
    response.headers.emplace_back("Allow", get ? "GET, HEAD" : spec.http_method);
    return response;
  }
  // Health and refusals are answered here, on the network thread, before a
  // byte of the body is read; the rest goes to Serve on a handler thread.
  switch (spec.kind) {
    case RouteKind::kHealth:  // open, no token needed
      OpenRecord(request, &route);
      return Counted(route,
                     [&](HttpResponse* response) { return (this->*spec.answer.probe)(response); });
    case RouteKind::kRepository:
      return AdmitAdmin(route, request);
    case RouteKind::kData:
    case RouteKind::kPages:
      break;
  }
  return AdmitData(route, request);
}

std::optional<HttpResponse> RestInferenceService::AdmitAdmin(const Route& route,
                                                             const HttpRequest& request) const {
  if (extensions_.repository == nullptr) {
    return ErrorResponse(404, "path: the repository extension is not served");
  }
  std::string authorization;
  const absl::StatusOr<bool> sent = OneAuthorization(request, &authorization);
  const absl::Status admin = sent.ok() ? CheckAdmin(extensions_.access, extensions_.admin_token,
                                                    *sent ? &authorization : nullptr)
                                       : sent.status();
  if (admin.ok()) return std::nullopt;
  Route refused = route;
  OpenRecord(request, &refused);
  return Refused(refused, admin);
}

std::optional<HttpResponse> RestInferenceService::AdmitData(const Route& route,
                                                            const HttpRequest& request) const {
  if (data_token_.empty()) return std::nullopt;
  std::string authorization;
  const absl::StatusOr<bool> sent = OneAuthorization(request, &authorization);
  const absl::Status auth =
      sent.ok() ? CheckBearerToken(data_token_, *sent ? &authorization : nullptr, "data token")
                : sent.status();
  if (auth.ok()) return std::nullopt;
  Route refused = route;
  OpenRecord(request, &refused);
  return Refused(refused, auth);
}

HttpResponse RestInferenceService::Refused(const Route& route, const absl::Status& refusal) const {
  return Counted(route, [&](HttpResponse* response) {
    *response = ErrorResponse(HttpStatusCode(refusal), std::string(refusal.message()));
    if (refusal.code() == absl::StatusCode::kUnauthenticated) {
      response->headers.emplace_back("WWW-Authenticate", "Bearer");
    }
    return refusal;
  });
}

HttpResponse RestInferenceService::Handle(HttpRequest& request) const {
  if (std::optional<HttpResponse> refusal = Admit(request)) return *refusal;
  return Serve(request);
}

HttpResponse RestInferenceService::Serve(HttpRequest& request) const {
  Route route = Match(request.path);
  if (route.spec == nullptr) return *Admit(request);  // no route: Admit's 404
  OpenRecord(request, &route);
  const RouteAnswer& answer = route.spec->answer;
  if (answer.later != nullptr) return (this->*answer.later)(route, request);
  return Counted(route, [&](HttpResponse* response) {
    if (answer.probe != nullptr) return (this->*answer.probe)(response);
    if (route.spec->kind == RouteKind::kPages && extensions_.pages == nullptr) {
      return absl::NotFoundError("path: model pages are not served");
    }
    return (this->*answer.answer)(route, request, response);
  });
}

void RestInferenceService::OpenRecord(const HttpRequest& request, Route* route) const {
  if (extensions_.access_log == nullptr) return;
  auto record = std::make_shared<RequestRecord>();
  record->trace =
      NewTraceContext(request.Header(kTraceparentHeader), request.Header(kTracestateHeader));
  record->protocol = "http";
  record->method = absl::StrCat(request.method, " ", request.path);
  record->peer = request.peer;
  record->bytes_in = static_cast<int64_t>(request.body.size());
  if (request.arrival != std::chrono::steady_clock::time_point()) {
    record->wait_ns = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::steady_clock::now() - request.arrival)
                                               .count());
  }
  route->record = std::move(record);
}

absl::Time RestInferenceService::Started(const Route& route) const {
  if (metrics_ != nullptr) metrics_->RpcStarted(kRestServiceLabel, route.spec->method, "http");
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
    metrics_->RpcHandled(kRestServiceLabel, route.spec->method, "http",
                         StatusCodeName(static_cast<int>(status.code())),
                         absl::ToDoubleSeconds(absl::Now() - start));
  }
  if (RequestRecord* record = route.record.get(); record != nullptr) {
    response.headers.emplace_back(kTraceparentHeader, record->trace.Traceparent());
    record->bytes_out = static_cast<int64_t>(response.body.size());
    CallOutcome outcome;
    outcome.code = status.code();
    outcome.message = std::string(status.message());
    outcome.http_status = response.status;
    extensions_.access_log->Close(*record, std::move(outcome));
  }
  return response;
}

HttpResponse RestInferenceService::ServeRepositoryLoad(const Route& route,
                                                       HttpRequest& request) const {
  const absl::Time start = Started(route);
  // The request's deferred reply, so no handler thread waits for the load or
  // the drain; called directly (no server), the answer is waited for here.
  std::promise<HttpResponse> direct;
  const HttpReply reply = request.defer ? request.defer() : [&direct](HttpResponse response) {
    direct.set_value(std::move(response));
  };
  const bool load = absl::string_view(route.spec->method) == "RepositoryModelLoad";
  RestRepositoryLoad(*extensions_.repository, route.model, load, request.body,
                     [this, route, start, reply](absl::Status status) {
                       HttpResponse response;
                       if (status.ok()) response = Json(200, "{}");
                       reply(Finished(route, start, status, std::move(response)));
                     });
  if (request.defer) return {};  // ignored: the reply answers
  return direct.get_future().get();
}

}  // namespace invariant::server
