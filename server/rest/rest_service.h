// rest_service.h: the Open Inference Protocol over HTTP/JSON (KServe v2 REST).
//
// Routes, answered by InferenceHandler (inference_handler.h) exactly as the
// gRPC service answers them, with the bodies of rest_codec.h:
//   GET  /v2/health/live                        200 {"live":true}
//   GET  /v2/health/ready                       200 {"ready":true}, 503 when not ready
//   GET  /v2                                    server metadata
//   GET  /v2/models/{name}[/versions/{v}]       model metadata
//   GET  /v2/models/{name}[/versions/{v}]/ready 200 {"name":…,"ready":true}; 503 when
//                                               that version is not ready (unknown
//                                               models included), with the reason
//   POST /v2/models/{name}[/versions/{v}]/infer infer (JSON tensors)
//   GET  /v2/models[/{name}[/versions/{v}]]/stats  the statistics extension
//                                               (rest_statistics.h; 501 when not served)
// {v} is the protocol's version string: a number, "latest" or a label.
// The routes are one table (rest_service.cc, RouteSpec): each row a protocol
// method, its HTTP method, its path pattern, who may call it and the
// function that answers it; Register creates the rows' metric series from it
// and Admit / Serve dispatch by it. A path that matches several rows takes
// the one with the fewest placeholders (/v2/models/stats is every model's
// statistics, not the metadata of a model named "stats").
// HEAD is accepted wherever GET is. Errors are {"error": "message"}, the
// message of the gRPC binding (with "inputs[0].data" where that one says
// "inputs[0].contents.fp32_contents"), with the
// status of HttpStatusCode (status_util.h): 400 bad request, 404 unknown
// model / version / path, 405 (with Allow) for a wrong method, 413 for a body
// over the server's limit, 429 full queue or budget (with Retry-After), 503
// not ready, 504 deadline.
//
// Deadline: an infer call's `timeout` counts from the request's arrival
// (HttpRequest::arrival), so one that waited for a handler thread past it is
// answered 504 without any work (counted as invariant_abandoned_total
// {stage="http_queue"}).
//
// Admission: an infer call tells the handler its answer's encoding (JSON
// numbers up to 16 bytes, binary 4, plus the protocol's copy of the outputs),
// so the memory budget covers the answer, and holds its memory lease until
// the answer is encoded; answers over `max_answer_bytes` are refused before
// any work.
//
// Auth: with a data token (the server's --data_token_file), every route but
// the two health routes needs the header "Authorization: Bearer <token>", as
// the gRPC data services need the same metadata; a missing or wrong one is 401
// with "WWW-Authenticate: Bearer". The health routes stay open, like
// grpc.health.v1 (probes send no credentials).
//
// Metrics: every call on a known route is counted by ServerMetrics::RpcStarted
// / RpcHandled with grpc_service="inference.REST", grpc_method the protocol's
// method name (ServerLive, ServerReady, ServerMetadata, ModelMetadata,
// ModelReady, ModelInfer, ModelStatistics), grpc_type="http" and grpc_code the canonical code
// name ("OK", "INVALID_ARGUMENT", ...), so one dashboard shows both transports.
// Register creates every route's series (each code) at 0; a path that is no
// route (404) or a wrong method (405) is not counted, so a client cannot add
// series.
//
// Request log: with RestExtensions::access_log, every call on a known route
// (health and refusals included) opens a RequestRecord from its
// `traceparent` / `tracestate` headers (a new trace when absent or
// malformed), the infer handler fills it, and the answer carries
// `traceparent` back (the trace id and this server's span id for the call);
// Finished closes it with the code, the HTTP status and the bytes.
//
// Thread-safety: Handle and Serve may run on many HTTP handler threads at once, Admit
// on the network thread; an infer call blocks its handler thread until the
// batcher answers, `timeout` passes or the client disconnects.
#ifndef INVARIANT_SERVER_REST_REST_SERVICE_H_
#define INVARIANT_SERVER_REST_REST_SERVICE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/access_log/access_log.h"
#include "server/common/auth.h"
#include "server/handlers/inference_handler.h"
#include "server/handlers/model_pages.h"
#include "server/handlers/repository_handler.h"
#include "server/http/http_server.h"
#include "server/metrics/metrics.h"

namespace invariant::server {

inline constexpr char kRestServiceLabel[] = "inference.REST";

// What the REST binding serves beyond the protocol's core: the repository
// extension's routes (no repository: 404) and their gate (the admin token,
// not the data token), and the model pages (no pages: 404; data token):
// GET /v2/report (the index page) and /v2/models/{name}[/versions/{v}]/report.
struct RestExtensions {
  const RepositoryHandler* repository = nullptr;
  AdminAccess access = AdminAccess::kDisabled;
  std::string admin_token;
  const ModelPages* pages = nullptr;
  AccessLog* access_log = nullptr;  // the request log; null: off
};

class RestInferenceService {
 public:
  // `handler` must outlive the service; `metrics` may be null (no metrics).
  // `timeout` is the deadline of every infer call; an empty `data_token`
  // leaves every route open.
  // `max_answer_bytes` (> 0) bounds one infer answer's encoded size: a call
  // whose answer could be larger (16 bytes per number in JSON, 4 in binary)
  // is refused before any work with 400 saying how to ask for less (the
  // server's --http_max_response_bytes).
  RestInferenceService(const InferenceHandler* handler, ServerMetrics* metrics,
                       absl::Duration timeout, std::string data_token = "",
                       int64_t max_answer_bytes = 0, RestExtensions extensions = {})
      : handler_(handler),
        metrics_(metrics),
        timeout_(timeout),
        data_token_(std::move(data_token)),
        max_answer_bytes_(max_answer_bytes),
        extensions_(std::move(extensions)) {}

  // Routes every path of `server` to Serve, with Admit as the route's admit
  // hook (so each check runs once per call). Call before server->Start(), on a server whose
  // options' error_response is ErrorResponse (so that its own answers are JSON too).
  void Register(HttpServer* server) const;

  // Before the body is read (network thread, must not block): 404 for a path
  // that is no route, 405 for a wrong method, 401 for a missing or wrong
  // token; the health routes are answered here too, so no handler thread,
  // busy or not, stands between a probe and its answer. nullopt = read the
  // body and call Serve.
  std::optional<HttpResponse> Admit(const HttpRequest& request) const;
  // Everything (Admit's answers included): Admit, then Serve. An infer call
  // whose client disconnects (request.cancellation) is cancelled: CANCELLED,
  // HTTP 499. The body of an infer call is freed once parsed.
  HttpResponse Handle(HttpRequest& request) const;
  // A call Admit let through (an existing route, its method, the token
  // checked): answered without checking them again.
  HttpResponse Serve(HttpRequest& request) const;

  // The options' error_response writing {"error": message}.
  static HttpResponse ErrorResponse(int status, const std::string& message);

  // One row of the route table (rest_service.cc): a protocol method, its
  // HTTP method and path pattern, who may call it and the function that
  // answers it. Register and Admit / Serve all read that one table.
  struct RouteSpec;
  // A path matched against the table: its row and the names it binds.
  struct Route {
    const RouteSpec* spec = nullptr;  // null: no route
    std::string model;                // {name}
    std::string version;              // {version}
    // The call's record for the request log (null: not logged), opened by
    // OpenRecord once the route is known.
    std::shared_ptr<RequestRecord> record;
  };

 private:
  // The route table, and the row `path` matches (Route::spec null for none).
  static absl::Span<const RouteSpec> RouteTable();
  static Route Match(const std::string& path);
  // Whether the row's extension is served (the core routes always are).
  bool Served(const RouteSpec& spec) const;
  // A response of `status` with a JSON `body`.
  static HttpResponse Json(int status, std::string body);
  // `status`, and when it is OK, `*response` 200 with the JSON `body()`.
  static absl::Status JsonAnswer(const absl::Status& status,
                                 const std::function<std::string()>& body, HttpResponse* response);
  // A model page (HTML) as `*response`, or the error of `page`.
  static absl::Status PageAnswer(absl::StatusOr<std::string> page, HttpResponse* response);

  // Runs `answer` between the call's RpcStarted and RpcHandled; an error
  // with no body of its own becomes ErrorResponse.
  HttpResponse Counted(const Route& route,
                       const std::function<absl::Status(HttpResponse*)>& answer) const;
  // Opens `route`'s record for `request` when the request log is on.
  void OpenRecord(const HttpRequest& request, Route* route) const;
  // The two halves of Counted, for an answer that comes later.
  absl::Time Started(const Route& route) const;
  HttpResponse Finished(const Route& route, absl::Time start, const absl::Status& status,
                        HttpResponse response) const;
  // Admit's gates: the admin token (repository routes) and the data token.
  std::optional<HttpResponse> AdmitAdmin(const Route& route, const HttpRequest& request) const;
  std::optional<HttpResponse> AdmitData(const Route& route, const HttpRequest& request) const;
  // A refusal of the gate, counted: 401 (with WWW-Authenticate) or 403.
  HttpResponse Refused(const Route& route, const absl::Status& refusal) const;

  // The routes, one function each (the table names them, rest_answers.cc).
  // The health routes need no request (Admit answers them before the body
  // is read).
  absl::Status AnswerServerLive(HttpResponse* response) const;
  absl::Status AnswerServerReady(HttpResponse* response) const;
  absl::Status AnswerServerMetadata(const Route&, HttpRequest&, HttpResponse*) const;
  absl::Status AnswerModelMetadata(const Route&, HttpRequest&, HttpResponse*) const;
  absl::Status AnswerModelReady(const Route&, HttpRequest&, HttpResponse*) const;
  absl::Status AnswerModelStatistics(const Route&, HttpRequest&, HttpResponse*) const;
  // Inference: the request is read and checked on the handler thread, then
  // answered through its deferred reply (HttpRequest::defer) when the call
  // ends, so no handler thread waits while clips or images are decoded or a
  // batch is computed; the answer is encoded on the thread that ends the
  // call (a compute, decoder or clock thread).
  HttpResponse ServeModelInfer(const Route& route, HttpRequest& request) const;
  // ServeModelInfer's work: `done` gets the call's status and its answer
  // (empty on an error), exactly once, possibly before this returns.
  void StartModelInfer(const Route& route, HttpRequest& request,
                       std::function<void(absl::Status, HttpResponse)> done) const;
  // The infer call's context: its answer's budget, leases and hint.
  CallContext InferCallContext() const;
  // The model pages (Serve answers 404 when none are served).
  absl::Status AnswerReportIndex(const Route&, HttpRequest&, HttpResponse*) const;
  absl::Status AnswerModelReport(const Route&, HttpRequest&, HttpResponse*) const;
  absl::Status AnswerRepositoryIndex(const Route&, HttpRequest&, HttpResponse*) const;
  // Repository loads and unloads: answered through the request's deferred
  // reply (HttpRequest::defer) once RepositoryHandler is done, so they hold
  // no handler thread while a bundle loads or a model drains.
  HttpResponse ServeRepositoryLoad(const Route& route, HttpRequest& request) const;

  const InferenceHandler* handler_;
  ServerMetrics* metrics_;
  const absl::Duration timeout_;
  const std::string data_token_;
  const int64_t max_answer_bytes_;
  const RestExtensions extensions_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_REST_REST_SERVICE_H_
