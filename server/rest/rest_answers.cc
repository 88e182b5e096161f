// rest_answers.cc: the answer of each REST route (rest_service.h), one
// function per route of the table in rest_service.cc, each over
// InferenceHandler as the gRPC binding answers the same method.
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/base/json.h"
#include "server/handlers/validation.h"
#include "server/rest/rest_codec.h"
#include "server/rest/rest_infer_request.h"
#include "server/rest/rest_repository.h"
#include "server/rest/rest_service.h"
#include "server/rest/rest_statistics.h"

namespace invariant::server {
namespace {

constexpr char kAnswerHint[] =
    "ask for the outputs in binary (\"parameters\": {\"binary_data_output\": true}), for fewer "
    "outputs (\"outputs\"), or send fewer rows";

// The deadline of a call whose request arrived at request.arrival (a request
// made in process, with no arrival, arrived now).
absl::Time DeadlineFromArrival(const HttpRequest& request, absl::Duration timeout) {
  const absl::Time now = absl::Now();
  if (request.arrival == std::chrono::steady_clock::time_point()) return now + timeout;
  const auto waited = std::chrono::steady_clock::now() - request.arrival;
  return now - absl::FromChrono(waited) + timeout;
}

// A token the client going away cancels, wherever the call is (queue or batch).
std::shared_ptr<CancelToken> CancelOnDisconnect(const HttpRequest& request) {
  auto cancel = std::make_shared<CancelToken>();
  if (request.cancellation != nullptr) {
    request.cancellation->OnCancel(
        [cancel] { cancel->Cancel(absl::CancelledError("the client closed the connection")); });
  }
  return cancel;
}

// The request of the protocol naming `route`'s model and version.
template <typename Request>
Request NamedRequest(const RestInferenceService::Route& route) {
  Request request;
  request.set_name(route.model);
  request.set_version(route.version);
  return request;
}

}  // namespace

absl::Status RestInferenceService::JsonAnswer(const absl::Status& status,
                                              const std::function<std::string()>& body,
                                              HttpResponse* response) {
  if (status.ok()) *response = Json(200, body());
  return status;
}

absl::Status RestInferenceService::PageAnswer(absl::StatusOr<std::string> page,
                                              HttpResponse* response) {
  if (!page.ok()) return page.status();
  *response = Json(200, *std::move(page));
  response->content_type = "text/html; charset=utf-8";
  return absl::OkStatus();
}

absl::Status RestInferenceService::AnswerServerLive(HttpResponse* response) const {
  inference::ServerLiveResponse live;
  const absl::Status status = handler_->ServerLive({}, &live);
  if (status.ok()) {
    *response =
        live.live() ? Json(200, "{\"live\":true}") : ErrorResponse(503, "the server is not live");
  }
  return status;
}

absl::Status RestInferenceService::AnswerServerReady(HttpResponse* response) const {
  inference::ServerReadyResponse ready;
  const absl::Status status = handler_->ServerReady({}, &ready);
  if (status.ok()) {
    *response = ready.ready() ? Json(200, "{\"ready\":true}")
                              : ErrorResponse(503,
                                              "the server is not ready: a model has no "
                                              "ready version, or the server is stopping");
  }
  return status;
}

absl::Status RestInferenceService::AnswerServerMetadata(const Route&, HttpRequest&,
                                                        HttpResponse* response) const {
  inference::ServerMetadataResponse metadata;
  const absl::Status status = handler_->ServerMetadata({}, &metadata);
  // The binary tensor extension is a property of this binding, not of gRPC's.
  metadata.add_extensions("binary_tensor_data");
  return JsonAnswer(
      status, [&] { return ServerMetadataToJson(metadata); }, response);
}

absl::Status RestInferenceService::AnswerModelMetadata(const Route& route, HttpRequest&,
                                                       HttpResponse* response) const {
  inference::ModelMetadataResponse metadata;
  return JsonAnswer(
      handler_->ModelMetadata(NamedRequest<inference::ModelMetadataRequest>(route), &metadata),
      [&] { return ModelMetadataToJson(metadata); }, response);
}

absl::Status RestInferenceService::AnswerModelStatistics(const Route& route, HttpRequest&,
                                                         HttpResponse* response) const {
  inference::ModelStatisticsResponse statistics;
  return JsonAnswer(
      handler_->ModelStatistics(NamedRequest<inference::ModelStatisticsRequest>(route),
                                &statistics),
      [&] { return ModelStatisticsToJson(statistics); }, response);
}

absl::Status RestInferenceService::AnswerModelReady(const Route& route, HttpRequest&,
                                                    HttpResponse* response) const {
  inference::ModelReadyResponse ready;
  const absl::Status status =
      handler_->ModelReady(NamedRequest<inference::ModelReadyRequest>(route), &ready);
  if (status.ok() && ready.ready()) {
    *response = Json(200, absl::StrCat("{\"name\":", JsonString(route.model), ",\"ready\":true}"));
  } else if (status.ok()) {
    // Not ready: the metadata lookup says why (unknown model, version, label).
    inference::ModelMetadataResponse ignored;
    const absl::Status reason =
        handler_->ModelMetadata(NamedRequest<inference::ModelMetadataRequest>(route), &ignored);
    *response = ErrorResponse(
        503, reason.ok() ? absl::StrCat("model '", EchoInput(route.model), "' is not ready")
                         : std::string(reason.message()));
  }
  return status;
}

absl::Status RestInferenceService::AnswerReportIndex(const Route&, HttpRequest&,
                                                     HttpResponse* response) const {
  return PageAnswer(extensions_.pages->IndexPage(), response);
}

absl::Status RestInferenceService::AnswerModelReport(const Route& route, HttpRequest&,
                                                     HttpResponse* response) const {
  return PageAnswer(extensions_.pages->ReportPage(route.model, route.version), response);
}

absl::Status RestInferenceService::AnswerRepositoryIndex(const Route&, HttpRequest& request,
                                                         HttpResponse* response) const {
  std::string answer;
  return JsonAnswer(
      RestRepositoryIndex(*extensions_.repository, request.body, &answer),
      [&] { return std::move(answer); }, response);
}

CallContext RestInferenceService::InferCallContext() const {
  // Given back once the answer is encoded (the handler hands its leases here).
  CallContext call;
  call.answer_leases = std::make_shared<LeaseBag>();
  call.max_answer_bytes = max_answer_bytes_;
  call.answer_limit_name = "http_max_response_bytes";
  call.answer_hint = kAnswerHint;
  return call;
}

HttpResponse RestInferenceService::ServeModelInfer(const Route& route, HttpRequest& request) const {
  const absl::Time start = Started(route);
  // Called directly (no server), the answer is waited for here.
  std::promise<HttpResponse> direct;
  const HttpReply reply = request.defer ? request.defer() : [&direct](HttpResponse response) {
    direct.set_value(std::move(response));
  };
  StartModelInfer(route, request,
                  [this, route, start, reply](absl::Status status, HttpResponse response) {
                    reply(Finished(route, start, status, std::move(response)));
                  });
  if (request.defer) return {};  // ignored: the reply answers
  return direct.get_future().get();
}

namespace {

// What an infer call holds until it ends: `request` and `response` must stay
// valid until InferenceHandler::ModelInfer's `done`.
struct RestInferCall {
  inference::ModelInferRequest request;
  inference::ModelInferResponse response;
  CallContext call;
};

}  // namespace

void RestInferenceService::StartModelInfer(
    const Route& route, HttpRequest& request,
    std::function<void(absl::Status, HttpResponse)> done) const {
  std::shared_ptr<CancelToken> cancel = CancelOnDisconnect(request);
  // A client that left while the call waited for a handler thread: no work.
  if (request.cancellation != nullptr && request.cancellation->cancelled()) {
    const absl::Status gone = absl::CancelledError("the client closed the connection");
    if (metrics_ != nullptr) metrics_->Abandoned("http_queue", gone);
    return done(gone, {});
  }
  const std::string header_length = request.Header(kInferenceHeaderContentLength);
  absl::StatusOr<inference::ModelInferRequest> infer_request = InferRequestFromHttp(
      request.body, request.HasHeader(kInferenceHeaderContentLength) ? &header_length : nullptr,
      route.model, route.version);
  std::string().swap(request.body);  // the tensor holds what is needed now
  if (!infer_request.ok()) return done(infer_request.status(), {});
  // The timeout counts from the request's arrival, not from when a handler
  // thread took it: a call that waited out its time in the queue is
  // answered 504 without any work.
  const absl::Time deadline = DeadlineFromArrival(request, timeout_);
  if (absl::Now() >= deadline) {
    const absl::Status late = absl::DeadlineExceededError(
        absl::StrCat("deadline: the request waited longer than the server's timeout (",
                     absl::FormatDuration(timeout_), ") for a handler thread; try again later"));
    if (metrics_ != nullptr) metrics_->Abandoned("http_queue", late);
    return done(late, {});
  }
  auto state = std::make_shared<RestInferCall>();
  state->request = *std::move(infer_request);
  state->call = InferCallContext();
  state->call.record = route.record;
  // Answers count 4 bytes a value in the protocol's response (computed in
  // place: no copy), plus 16 (the longest float and a comma) in JSON or 4 in
  // binary.
  state->call.answer_bytes_per_value = WantsAllBinary(state->request) ? 4 : 16;
  state->call.json_tensor_data = true;
  handler_->ModelInfer(
      state->request, &state->response, deadline,
      [state, done = std::move(done)](absl::Status status) {
        HttpResponse response;
        if (status.ok()) {
          RestBody body = InferResponseToHttp(state->response, state->request);
          response = Json(200, std::move(body.body));
          if (body.json_size.has_value()) {
            response.content_type = "application/octet-stream";
            response.headers.emplace_back(kInferenceHeaderContentLength,
                                          std::to_string(*body.json_size));
          }
        }
        // Given back once the answer is encoded (the HTTP server charges it
        // from here until it is written).
        state->call.answer_leases->Clear();
        done(std::move(status), std::move(response));
      },
      cancel, state->call);
}

}  // namespace invariant::server
