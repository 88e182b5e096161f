// The REAL invariant-server on 127.0.0.1, called through invariant::Client.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

using ::testing::HasSubstr;
using testing_models::TestModelSpec;

TestModelSpec Classifier(int64_t version = 1) {
  TestModelSpec spec;
  spec.name = "clf";
  spec.version = version;
  spec.input_dim = 32;
  spec.num_features = 16;
  spec.num_group_elements = 8;
  spec.num_classes = 4;
  spec.seed = 100 + static_cast<uint64_t>(version);
  return spec;
}

TestModelSpec Featurizer() {
  TestModelSpec spec;
  spec.name = "feat";
  spec.input_dim = 32;
  spec.num_features = 24;
  spec.num_group_elements = 8;
  spec.num_classes = 0;
  spec.seed = 7;
  return spec;
}

std::shared_ptr<const Model> LoadLocal(const std::string& models, const std::string& name,
                                       int64_t version) {
  auto model =
      Model::Load(models + "/" + name + "/" + std::to_string(version) + "/" + kBundleFileName);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

class ServerTest : public ServerTestBase {};

TEST_F(ServerTest, FeaturizeEqualsInProcessBitForBitUnderConcurrentBatching) {
  WriteModel(Featurizer());
  StartServer({"--max_batch_size=16", "--max_batch_delay_us=2000", "--threads=2"});
  auto local = LoadLocal(models(), "feat", 1);
  ASSERT_NE(local, nullptr);
  const int64_t d = local->input_dim();
  const int64_t f = local->feature_dim();
  // 24 concurrent single-row calls (merged by the batcher) and one 40-row call (split).
  constexpr int kCalls = 24;
  std::vector<std::vector<float>> rows(kCalls);
  std::vector<std::future<CallResult<v1::FeaturizeResponse>>> futures;
  for (int i = 0; i < kCalls; ++i) {
    rows[i] = RandomRows(1, d, 1000 + i);
    v1::FeaturizeRequest request;
    request.mutable_model()->set_name("feat");
    *request.mutable_inputs()->mutable_values() = {rows[i].begin(), rows[i].end()};
    futures.push_back(client_->FeaturizeAsync(request));
  }
  const std::vector<float> big = RandomRows(40, d, 77);
  std::vector<float> big_features;
  ASSERT_TRUE(client_->Featurize("feat", 40, big, &big_features).ok());
  std::vector<float> expected(static_cast<size_t>(40 * f));
  local->Featurize(40, big.data(), expected.data());
  ASSERT_EQ(big_features.size(), expected.size());
  EXPECT_EQ(std::memcmp(big_features.data(), expected.data(), expected.size() * 4), 0);
  for (int i = 0; i < kCalls; ++i) {
    CallResult<v1::FeaturizeResponse> result = futures[i].get();
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    std::vector<float> one(static_cast<size_t>(f));
    local->Featurize(1, rows[i].data(), one.data());
    ASSERT_EQ(result.response.features_size(), f);
    EXPECT_EQ(std::memcmp(result.response.features().data(), one.data(), one.size() * 4), 0)
        << "row " << i;
    EXPECT_EQ(result.response.model_version(), 1);
  }
}

TEST_F(ServerTest, PredictEqualsInProcessAndStreamsAgree) {
  WriteModel(Classifier());
  StartServer({});
  auto local = LoadLocal(models(), "clf", 1);
  ASSERT_NE(local, nullptr);
  const std::vector<float> x = RandomRows(5, 32, 5);
  std::vector<float> scores;
  std::vector<std::string> classes;
  ASSERT_TRUE(client_->Predict("clf", 5, x, &scores, &classes).ok());
  std::vector<float> expected(static_cast<size_t>(5 * 4));
  local->Predict(5, x.data(), expected.data());
  ASSERT_EQ(scores.size(), expected.size());
  EXPECT_EQ(std::memcmp(scores.data(), expected.data(), expected.size() * 4), 0);
  ASSERT_EQ(classes.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const float* row = expected.data() + i * 4;
    EXPECT_EQ(classes[i], "class_" + std::to_string(std::max_element(row, row + 4) - row));
  }
  // The same through a stream, one row per message, and through the callback API.
  auto stream = client_->OpenPredictStream();
  for (int i = 0; i < 5; ++i) {
    v1::PredictRequest request;
    request.mutable_model()->set_name("clf");
    request.mutable_inputs()->mutable_values()->Add(x.begin() + i * 32, x.begin() + (i + 1) * 32);
    v1::PredictResponse response;
    ASSERT_TRUE(stream->Call(request, &response));
    EXPECT_EQ(std::memcmp(response.scores().data(), expected.data() + i * 4, 16), 0);
    EXPECT_EQ(response.predicted_classes(0), classes[i]);
  }
  EXPECT_TRUE(stream->Finish().ok());
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  request.mutable_inputs()->mutable_values()->Add(x.begin(), x.begin() + 32);
  CallResult<v1::PredictResponse> async = client_->PredictAsync(request).get();
  ASSERT_TRUE(async.status.ok());
  EXPECT_EQ(std::memcmp(async.response.scores().data(), expected.data(), 16), 0);
}

TEST_F(ServerTest, MetadataListHealthAndReflection) {
  WriteModel(Classifier());
  WriteModel(Featurizer());
  StartServer({});
  v1::GetModelMetadataResponse metadata;
  ASSERT_TRUE(client_->GetModelMetadata("clf", 0, &metadata).ok());
  EXPECT_EQ(metadata.model_version(), 1);
  EXPECT_EQ(metadata.input_dim(), 32);
  EXPECT_EQ(metadata.feature_dim(), 32);
  EXPECT_EQ(metadata.output_dim(), 4);
  EXPECT_EQ(metadata.encoder_kind(), "random_fourier");
  EXPECT_EQ(metadata.encoder().random_fourier().num_features(), 16);
  EXPECT_EQ(metadata.encoder().group().cyclic_shift().length(), 32);
  ASSERT_EQ(metadata.head().class_names_size(), 4);
  EXPECT_EQ(metadata.head().class_names(3), "class_3");
  EXPECT_DOUBLE_EQ(metadata.metrics().at("test_accuracy"), 0.875);
  EXPECT_EQ(metadata.certificate().num_points(), 32);

  v1::ListModelsResponse list;
  ASSERT_TRUE(client_->ListModels(&list).ok());
  ASSERT_EQ(list.models_size(), 2);
  EXPECT_EQ(list.models(0).name(), "clf");
  EXPECT_EQ(list.models(1).name(), "feat");

  bool serving = false;
  ASSERT_TRUE(client_->Health("", &serving).ok());
  EXPECT_TRUE(serving);
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_TRUE(serving);

  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(client_->channel());
  grpc::ClientContext context;
  auto stream = reflection->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("*");
  ASSERT_TRUE(stream->Write(request));
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> services;
  for (const auto& s : response.list_services_response().service()) services.push_back(s.name());
  EXPECT_THAT(services,
              ::testing::IsSupersetOf({"invariant.v1.FeatureService", "invariant.v1.ModelAdmin",
                                       "grpc.health.v1.Health"}));
  // Every listed service is described too, grpc.health.v1 included (grpcurl
  // and Postman need the descriptor, not only the name).
  for (const std::string& service : services) {
    grpc::reflection::v1alpha::ServerReflectionRequest describe;
    describe.set_file_containing_symbol(service);
    ASSERT_TRUE(stream->Write(describe));
    grpc::reflection::v1alpha::ServerReflectionResponse described;
    ASSERT_TRUE(stream->Read(&described));
    EXPECT_FALSE(described.has_error_response())
        << service << ": " << described.error_response().error_message();
  }
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServerTest, ReflectionV1ListsAndDescribesTheServices) {
  WriteModel(Classifier());
  StartServer({});
  namespace rv1 = grpc::reflection::v1;
  auto reflection = rv1::ServerReflection::NewStub(client_->channel());
  grpc::ClientContext context;
  auto stream = reflection->ServerReflectionInfo(&context);
  rv1::ServerReflectionRequest request;
  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  rv1::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> services;
  for (const auto& s : response.list_services_response().service()) services.push_back(s.name());
  EXPECT_THAT(services, ::testing::IsSupersetOf({"invariant.v1.FeatureService",
                                                 "invariant.v1.ModelAdmin", "grpc.health.v1.Health",
                                                 "grpc.reflection.v1.ServerReflection"}));

  request.set_file_containing_symbol("invariant.v1.FeatureService");
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(stream->Read(&response));
  const auto& files = response.file_descriptor_response().file_descriptor_proto();
  ASSERT_GT(files.size(), 0) << response.error_response().error_message();
  google::protobuf::FileDescriptorProto last;  // the file itself comes after its imports
  ASSERT_TRUE(last.ParseFromString(files[files.size() - 1]));
  EXPECT_EQ(last.name(), "invariant/v1/feature_service.proto");
  EXPECT_EQ(last.service(0).name(), "FeatureService");

  request.set_file_containing_symbol("no.such.Symbol");
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.error_response().error_code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

struct BadCase {
  std::string what;
  grpc::StatusCode code;
  std::string message;
};

TEST_F(ServerTest, EveryBadInputGetsItsCodeAndMessage) {
  WriteModel(Classifier());
  WriteModel(Featurizer());
  StartServer({"--max_request_rows=8"});
  auto predict = [&](const std::function<void(v1::PredictRequest&)>& edit) {
    v1::PredictRequest request;
    request.mutable_model()->set_name("clf");
    for (int i = 0; i < 32; ++i) request.mutable_inputs()->add_values(0.25f);
    edit(request);
    v1::PredictResponse response;
    return client_->Predict(request, &response);
  };
  const std::vector<std::pair<std::function<void(v1::PredictRequest&)>, BadCase>> cases = {
      {[](v1::PredictRequest& r) { r.mutable_model()->set_name("nope"); },
       {"unknown model", grpc::StatusCode::NOT_FOUND, "no model named 'nope'"}},
      {[](v1::PredictRequest& r) { r.mutable_model()->set_version(7); },
       {"unknown version", grpc::StatusCode::NOT_FOUND, "version 7 is not ready"}},
      {[](v1::PredictRequest& r) { r.mutable_model()->set_version_label("gold"); },
       {"unknown label", grpc::StatusCode::NOT_FOUND, "has no label 'gold'"}},
      {[](v1::PredictRequest& r) { r.mutable_model()->clear_name(); },
       {"no name", grpc::StatusCode::INVALID_ARGUMENT, "model.name"}},
      {[](v1::PredictRequest& r) { r.mutable_inputs()->add_values(1.0f); },
       {"row length", grpc::StatusCode::INVALID_ARGUMENT,
        "inputs.values: expected a multiple of input_dim=32 floats, received 33"}},
      {[](v1::PredictRequest& r) { r.mutable_inputs()->clear_values(); },
       {"empty", grpc::StatusCode::INVALID_ARGUMENT, "empty batch"}},
      {[](v1::PredictRequest& r) { r.mutable_inputs()->set_values(5, std::nanf("")); },
       {"NaN", grpc::StatusCode::INVALID_ARGUMENT,
        "inputs.values[row 0, column 5]: expected a finite float, received nan"}},
      {[](v1::PredictRequest& r) { r.mutable_inputs()->set_values(0, INFINITY); },
       {"Inf", grpc::StatusCode::INVALID_ARGUMENT, "received inf"}},
      {[](v1::PredictRequest& r) {
         for (int i = 0; i < 32 * 8; ++i) r.mutable_inputs()->add_values(0.0f);
       },
       {"too many rows", grpc::StatusCode::INVALID_ARGUMENT,
        "expected at most 8 rows per request, received 9"}},
      {[](v1::PredictRequest& r) {
         r.mutable_inputs()->clear_values();
         r.mutable_inputs()->set_raw_values(std::string(130, '\0'));
       },
       {"raw bytes", grpc::StatusCode::INVALID_ARGUMENT,
        "inputs.raw_values: expected a multiple of 4 bytes (little-endian float32), received "
        "130 bytes"}},
      {[](v1::PredictRequest& r) { r.mutable_model()->set_name("feat"); },
       {"no head", grpc::StatusCode::FAILED_PRECONDITION, "has no linear head"}},
  };
  for (const auto& [edit, expected] : cases) {
    const grpc::Status status = predict(edit);
    EXPECT_EQ(status.error_code(), expected.code)
        << expected.what << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(expected.message)) << expected.what;
  }
  // A garbage stream message ends that stream with the error; the server lives on.
  auto stream = client_->OpenFeaturizeStream();
  v1::FeaturizeRequest bad;
  bad.mutable_model()->set_name("feat");
  bad.mutable_inputs()->add_values(1.0f);
  v1::FeaturizeResponse response;
  EXPECT_FALSE(stream->Call(bad, &response));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  bool serving = false;
  EXPECT_TRUE(client_->Health("", &serving).ok());
  EXPECT_TRUE(serving);
}

TEST_F(ServerTest, CorruptNewVersionIsRefusedWhileOldKeepsAnswering) {
  WriteModel(Classifier(1));
  StartServer({"--poll_seconds=0"});
  ASSERT_TRUE(testing_models::WriteCorruptModel(models(), "clf", 2).ok());
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  EXPECT_EQ(reload.versions_failed(), 1);
  EXPECT_EQ(reload.versions_unloaded(), 0);
  std::vector<float> scores;
  const std::vector<float> x = RandomRows(2, 32, 3);
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  v1::PredictResponse response;
  ASSERT_TRUE(client_->Predict(request, &response).ok());
  EXPECT_EQ(response.model_version(), 1);
  v1::GetModelStatusResponse status;
  ASSERT_TRUE(client_->GetModelStatus("clf", &status).ok());
  ASSERT_EQ(status.models_size(), 1);
  ASSERT_EQ(status.models(0).versions_size(), 2);
  EXPECT_EQ(status.models(0).versions(0).version(), 2);
  EXPECT_EQ(status.models(0).versions(0).state(), v1::VERSION_STATE_FAILED);
  EXPECT_THAT(status.models(0).versions(0).error(), HasSubstr("model.bundle"));
  EXPECT_EQ(status.models(0).versions(1).state(), v1::VERSION_STATE_READY);
  auto metrics = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(*metrics, HasSubstr("invariant_model_load_failures_total{model=\"clf\"} 1"));
  EXPECT_THAT(server_->Log(), HasSubstr("version 2 failed to load"));
  // A good version 3 then replaces version 1.
  WriteModel(Classifier(3));
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  EXPECT_EQ(reload.versions_loaded(), 1);
  ASSERT_TRUE(client_->Predict(request, &response).ok());
  EXPECT_EQ(response.model_version(), 3);
}

TEST_F(ServerTest, HotReloadUnderConcurrentLoadLosesNoRequest) {
  WriteModel(Classifier(1));
  StartServer({"--poll_seconds=0", "--max_batch_size=8", "--max_batch_delay_us=200"});
  // Callers keep calling until every reload is done (at least kMinCalls each,
  // at most kMaxCalls), so the reloads always overlap live traffic.
  constexpr int kThreads = 4;
  constexpr int kMinCalls = 50;
  constexpr int kMaxCalls = 20000;
  std::atomic<bool> reloads_done{false};
  std::atomic<int> failures{0};
  std::atomic<int> calls{0};
  std::vector<std::thread> callers;
  const std::vector<float> x = RandomRows(1, 32, 9);
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < kMaxCalls && (i < kMinCalls || !reloads_done.load()); ++i) {
        v1::PredictRequest request;
        request.mutable_model()->set_name("clf");
        *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
        v1::PredictResponse response;
        const grpc::Status status = client_->Predict(request, &response);
        if (!status.ok() || response.scores_size() != 4 || response.model_version() < 1) {
          ++failures;
        }
        ++calls;
      }
    });
  }
  for (int64_t v = 2; v <= 4; ++v) {
    WriteModel(Classifier(v));
    v1::ReloadModelsResponse reload;
    EXPECT_TRUE(client_->ReloadModels(&reload).ok());
    EXPECT_EQ(reload.versions_loaded(), 1);
    EXPECT_EQ(reload.versions_unloaded(), 1);
  }
  reloads_done = true;
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0) << "of " << calls.load() << " calls";
  EXPECT_GE(calls.load(), kThreads * kMinCalls);
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  v1::PredictResponse response;
  ASSERT_TRUE(client_->Predict(request, &response).ok());
  EXPECT_EQ(response.model_version(), 4);
}

TEST_F(ServerTest, SigtermDrainsInFlightCallsAndExitsZero) {
  WriteModel(Classifier(1));
  // The paused batcher holds the call in its queue until SIGTERM's drain
  // releases it: the signal always lands while the call is in flight.
  StartServer({"--testonly_start_paused", "--drain_seconds=60"});
  const std::vector<float> x = RandomRows(1, 32, 4);
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  auto in_flight = client_->PredictAsync(request);
  bool queued = false;
  for (int i = 0; i < 240 && !queued; ++i) {  // bounded: ≤ 240 polls of the queue gauge
    auto metrics = HttpGet(server_->metrics_port(), "/metrics");
    queued =
        metrics.ok() && metrics->find("invariant_queue_rows{model=\"clf\"} 1") != std::string::npos;
    if (!queued) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(queued) << "the call never reached the batch queue";
  server_->Signal(SIGTERM);
  CallResult<v1::PredictResponse> result = in_flight.get();
  EXPECT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_EQ(result.response.scores_size(), 4);
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(60)), 0);
  EXPECT_THAT(server_->Log(), HasSubstr("draining"));
}

TEST_F(ServerTest, AdminServiceRefusesCallsWithoutTheToken) {
  WriteModel(Classifier(1));
  const std::string token_file = (dir_ / "token").string();
  std::ofstream(token_file) << "let-me-in\n";
  StartServer({"--admin_token_file=" + token_file});
  v1::ReloadModelsResponse reload;
  grpc::Status status = client_->ReloadModels(&reload);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("authorization"));
  v1::GetModelStatusResponse model_status;
  EXPECT_EQ(client_->GetModelStatus("", &model_status).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  ClientOptions wrong;
  wrong.bearer_token = "guess";
  EXPECT_EQ(Client::Create(server_->target(), wrong)->ReloadModels(&reload).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  ClientOptions right;
  right.bearer_token = "let-me-in";
  auto admin = Client::Create(server_->target(), right);
  EXPECT_TRUE(admin->ReloadModels(&reload).ok());
  ASSERT_TRUE(admin->GetModelStatus("", &model_status).ok());
  EXPECT_EQ(model_status.models(0).versions(0).state(), v1::VERSION_STATE_READY);
  // An unknown model is NOT_FOUND (not an empty OK), echoing a bounded prefix.
  const std::string long_name(5000, 'z');
  const grpc::Status unknown = admin->GetModelStatus(long_name, &model_status);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(unknown.error_message(), HasSubstr("model_name: no model named 'zzz"));
  EXPECT_LT(unknown.error_message().size(), 200u);
  // The feature service needs no token.
  v1::ListModelsResponse list;
  EXPECT_TRUE(client_->ListModels(&list).ok());
}

TEST_F(ServerTest, SighupRescansTheModels) {
  WriteModel(Classifier(1));
  StartServer({"--poll_seconds=0"});
  WriteModel(Classifier(2));
  server_->Signal(SIGHUP);
  int64_t version = 0;
  for (int i = 0; i < 500 && version != 2; ++i) {  // bounded wait for the rescan
    v1::GetModelMetadataResponse metadata;
    if (client_->GetModelMetadata("clf", 0, &metadata).ok()) version = metadata.model_version();
    if (version != 2) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(version, 2);
}

// Polls the metrics (bounded) until `name{labels}` equals `value`; the last value read.
double WaitForMetric(int metrics_port, const std::string& name,
                     const std::vector<std::string>& labels, double value) {
  double seen = -1;
  for (int i = 0; i < 1000 && seen != value; ++i) {  // bounded: ≤ 1000 polls
    auto metrics = HttpGet(metrics_port, "/metrics");
    seen = metrics.ok() ? MetricValue(*metrics, name, labels) : -1;
    if (seen != value) absl::SleepFor(absl::Milliseconds(10));
  }
  return seen;
}

TEST_F(ServerTest, FullQueueIsResourceExhaustedAndExpiredCallIsDroppedBeforeCompute) {
  WriteModel(Classifier(1));
  // Test hook: the batcher starts paused, so every call stays queued (no
  // timing involved) until SIGUSR1 resumes it.
  StartServer({"--testonly_start_paused", "--max_queue_rows=2"});
  const std::vector<float> x = RandomRows(1, 32, 6);
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  const std::vector<std::string> queue_labels = {"model=\"clf\""};
  auto live = client_->PredictAsync(request);
  ASSERT_EQ(WaitForMetric(server_->metrics_port(), "invariant_queue_rows", queue_labels, 1), 1);
  // A second call, which this test cancels later, fills the queue.
  auto stub = v1::FeatureService::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext cancelled_context;
  v1::PredictResponse cancelled_response;
  std::promise<grpc::Status> cancelled;
  stub->async()->Predict(&cancelled_context, &request, &cancelled_response,
                         [&cancelled](grpc::Status status) { cancelled.set_value(status); });
  ASSERT_EQ(WaitForMetric(server_->metrics_port(), "invariant_queue_rows", queue_labels, 2), 2);
  // The queue holds max_queue_rows=2 live rows: a third call is refused at once.
  v1::PredictResponse refused;
  const grpc::Status full = client_->Predict(request, &refused);
  EXPECT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << full.error_message();
  EXPECT_THAT(full.error_message(), HasSubstr("max_queue_rows=2"));
  // A cancelled call leaves the queue at once: its row no longer counts.
  cancelled_context.TryCancel();
  EXPECT_EQ(cancelled.get_future().get().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(WaitForMetric(server_->metrics_port(), "invariant_queue_rows", queue_labels, 1), 1);
  // So does a call whose deadline passes while it waits (the batcher stays paused).
  ClientOptions impatient;
  impatient.deadline = std::chrono::milliseconds(500);
  v1::PredictResponse expired_response;
  const grpc::Status expired =
      Client::Create(server_->target(), impatient)->Predict(request, &expired_response);
  EXPECT_EQ(expired.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(WaitForMetric(server_->metrics_port(), "invariant_queue_rows", queue_labels, 1), 1);
  server_->Signal(SIGUSR1);  // resume: only the live call is computed
  CallResult<v1::PredictResponse> ok = live.get();
  EXPECT_TRUE(ok.status.ok()) << ok.status.error_message();
  EXPECT_EQ(ok.response.scores_size(), 4);
  const int port = server_->metrics_port();
  EXPECT_EQ(WaitForMetric(port, "invariant_rows_total", {"model=\"clf\"", "method=\"Predict\""}, 1),
            1);
  EXPECT_EQ(WaitForMetric(port, "invariant_batch_rows_count", queue_labels, 1), 1);
  // Each outcome under its own code: the served call OK, the refused one
  // RESOURCE_EXHAUSTED, and the two abandoned ones neither OK nor UNIMPLEMENTED.
  // The expired call is DEADLINE_EXCEEDED when the server's deadline passes
  // first, but CANCELLED when the client's own deadline timer (which starts
  // earlier) cancels it first: which one wins is not deterministic, so only
  // their sum is asserted.
  auto handled = [port](const char* code) {
    absl::StatusOr<std::string> metrics = HttpGet(port, "/metrics");
    return metrics.ok()
               ? MetricValue(*metrics, "grpc_server_handled_total",
                             {"grpc_method=\"Predict\"", absl::StrCat("grpc_code=\"", code, "\"")})
               : -1;
  };
  EXPECT_EQ(WaitForMetric(port, "grpc_server_handled_total",
                          {"grpc_method=\"Predict\"", "grpc_code=\"OK\""}, 1),
            1);
  EXPECT_EQ(handled("RESOURCE_EXHAUSTED"), 1);
  double abandoned = 0;
  for (int i = 0; i < 1000 && abandoned != 2; ++i) {  // bounded: ≤ 1000 polls
    abandoned = handled("CANCELLED") + handled("DEADLINE_EXCEEDED");
    if (abandoned != 2) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(abandoned, 2);
  EXPECT_GE(handled("CANCELLED"), 1);  // the call this test cancelled
  EXPECT_EQ(handled("UNIMPLEMENTED"), 0);
  EXPECT_EQ(WaitForMetric(port, "invariant_queue_rows", queue_labels, 0), 0);
}

TEST_F(ServerTest, PollerLoadsNewVersionsAndUnloadsARemovedOneAfterTheGrace) {
  WriteModel(Classifier(1));
  StartServer({"--poll_seconds=0.05", "--removal_grace_seconds=0.2", "--version_policy=all"});
  WriteModel(Classifier(2));
  int64_t version = 0;
  for (int i = 0; i < 1000 && version != 2; ++i) {  // bounded wait for the poller
    v1::GetModelMetadataResponse metadata;
    if (client_->GetModelMetadata("clf", 0, &metadata).ok()) version = metadata.model_version();
    if (version != 2) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(version, 2) << "the poller never loaded version 2";
  // A version label picks an older ready version.
  std::ofstream(std::filesystem::path(models()) / "clf" / "labels.txt") << "stable 1\n";
  v1::ReloadModelsResponse relabel;
  ASSERT_TRUE(client_->ReloadModels(&relabel).ok());
  v1::ModelSpec stable;
  stable.set_name("clf");
  stable.set_version_label("stable");
  v1::GetModelMetadataResponse labelled;
  ASSERT_TRUE(client_->GetModelMetadata(stable, &labelled).ok());
  EXPECT_EQ(labelled.model_version(), 1);
  std::filesystem::remove_all(std::filesystem::path(models()) / "clf" / "2");
  v1::VersionState state = v1::VERSION_STATE_READY;
  for (int i = 0; i < 1000 && state != v1::VERSION_STATE_UNLOADED; ++i) {
    v1::GetModelStatusResponse status;
    ASSERT_TRUE(client_->GetModelStatus("clf", &status).ok());
    ASSERT_EQ(status.models(0).versions(0).version(), 2);
    state = status.models(0).versions(0).state();
    if (state != v1::VERSION_STATE_UNLOADED) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(state, v1::VERSION_STATE_UNLOADED);
  v1::GetModelMetadataResponse metadata;
  ASSERT_TRUE(client_->GetModelMetadata("clf", 0, &metadata).ok());
  EXPECT_EQ(metadata.model_version(), 1);
  EXPECT_EQ(client_->GetModelMetadata("clf", 2, &metadata).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // Removing the last version too never unloads it: it keeps answering.
  std::filesystem::remove_all(std::filesystem::path(models()) / "clf");
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  absl::SleepFor(absl::Milliseconds(400));  // > grace: the rule, not the timer, keeps it
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  EXPECT_EQ(reload.versions_unloaded(), 0);
  ASSERT_TRUE(client_->GetModelMetadata("clf", 0, &metadata).ok());
  EXPECT_EQ(metadata.model_version(), 1);
  EXPECT_THAT(server_->Log(), HasSubstr("version 2 unloaded"));
}

TEST_F(ServerTest, StreamsCallbacksRetryPolicyAndRegressorsAgreeWithInProcess) {
  WriteModel(Featurizer());
  TestModelSpec regressor = Classifier(1);
  regressor.name = "reg";
  regressor.num_classes = 2;
  regressor.regression = true;
  WriteModel(regressor);
  ClientOptions options;
  options.service_config_json = DefaultRetryServiceConfig();
  StartServer({}, options);
  auto feat = LoadLocal(models(), "feat", 1);
  auto reg = LoadLocal(models(), "reg", 1);
  ASSERT_NE(feat, nullptr);
  ASSERT_NE(reg, nullptr);
  const std::vector<float> x = RandomRows(6, 32, 12);
  std::vector<float> expected(static_cast<size_t>(6 * feat->feature_dim()));
  feat->Featurize(6, x.data(), expected.data());
  const int64_t f = feat->feature_dim();
  // A Featurize stream, two rows per message, sent as raw bytes.
  auto stream = client_->OpenFeaturizeStream();
  for (int m = 0; m < 3; ++m) {
    v1::FeaturizeRequest request;
    request.mutable_model()->set_name("feat");
    request.mutable_inputs()->set_raw_values(
        std::string(reinterpret_cast<const char*>(x.data() + m * 64), 64 * sizeof(float)));
    v1::FeaturizeResponse response;
    ASSERT_TRUE(stream->Call(request, &response)) << "message " << m;
    EXPECT_EQ(response.num_rows(), 2);
    ASSERT_EQ(response.features_size(), 2 * f);
    EXPECT_EQ(std::memcmp(response.features().data(), expected.data() + m * 2 * f, 2 * f * 4), 0);
  }
  EXPECT_TRUE(stream->Finish().ok());
  // The callback flavour of the asynchronous API.
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("feat");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  std::promise<std::pair<grpc::Status, v1::FeaturizeResponse>> done;
  client_->FeaturizeAsync(request, [&done](grpc::Status status, v1::FeaturizeResponse response) {
    done.set_value({status, std::move(response)});
  });
  auto [status, response] = done.get_future().get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.features_size(), 6 * f);
  EXPECT_EQ(std::memcmp(response.features().data(), expected.data(), expected.size() * 4), 0);
  // A regressor answers values and no class names.
  std::vector<float> values;
  std::vector<std::string> classes;
  ASSERT_TRUE(client_->Predict("reg", 6, x, &values, &classes).ok());
  std::vector<float> expected_values(12);
  reg->Predict(6, x.data(), expected_values.data());
  ASSERT_EQ(values.size(), expected_values.size());
  EXPECT_EQ(std::memcmp(values.data(), expected_values.data(), 12 * 4), 0);
  EXPECT_TRUE(classes.empty());
  v1::GetModelMetadataResponse metadata;
  ASSERT_TRUE(client_->GetModelMetadata("reg", 1, &metadata).ok());
  EXPECT_EQ(metadata.head().task(), v1::TASK_REGRESSION);
  EXPECT_EQ(metadata.output_dim(), 2);
}

TEST_F(ServerTest, SeededRandomMalformedRequestsNeverCrashTheServer) {
  WriteModel(Classifier(1));
  WriteModel(Featurizer());
  StartServer({"--max_request_rows=16"});
  Rng rng(2024);
  const auto pick = [&rng](uint64_t n) { return static_cast<int>(rng.UniformInt(n)); };
  const std::vector<std::string> names = {"clf", "feat", "", "nope", std::string(300, 'x')};
  const std::vector<std::string> labels = {"", "latest", "stable", "v\n1"};
  const std::vector<float> specials = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e38f, -1e-38f};
  std::map<grpc::StatusCode, int> codes;
  for (int i = 0; i < 300; ++i) {
    v1::ModelSpec spec;
    // Each field is usually valid, so that whole valid requests occur too.
    spec.set_name(pick(4) != 0 ? names[pick(2)] : names[pick(names.size())]);
    spec.set_version(pick(3) != 0 ? 0 : pick(7) - 3);
    spec.set_version_label(pick(3) != 0 ? "" : labels[pick(labels.size())]);
    v1::InputBatch inputs;
    inputs.set_num_rows(pick(2) == 0 ? 0 : pick(40) - 5);
    const int encoding = pick(4);  // 0, 1: values; 2: raw bytes; 3: both
    if (encoding != 2) {           // packed values: often a whole number of rows
      const int count = pick(3) != 0 ? 32 * pick(20) : pick(700);
      for (int k = 0; k < count; ++k) {
        inputs.add_values(pick(3000) == 0 ? specials[pick(specials.size())]
                                          : static_cast<float>(rng.Normal()));
      }
    }
    if (encoding >= 2) {  // raw bytes of random content (NaNs likely)
      std::string raw(static_cast<size_t>(pick(2) == 0 ? 128 * pick(20) : pick(3000)), '\0');
      for (char& c : raw) c = static_cast<char>(pick(256));
      inputs.set_raw_values(raw);
    }
    grpc::Status status;
    if (pick(2) == 0) {
      v1::PredictRequest request;
      *request.mutable_model() = spec;
      *request.mutable_inputs() = inputs;
      v1::PredictResponse response;
      status = client_->Predict(request, &response);
    } else {
      v1::FeaturizeRequest request;
      *request.mutable_model() = spec;
      *request.mutable_inputs() = inputs;
      v1::FeaturizeResponse response;
      status = client_->Featurize(request, &response);
      if (status.ok()) {
        EXPECT_EQ(response.feature_dim(), spec.name() == "feat" ? 48 : 32) << i;
        EXPECT_EQ(response.features_size(), response.num_rows() * response.feature_dim()) << i;
      }
    }
    ++codes[status.error_code()];
    EXPECT_THAT(
        status.error_code(),
        ::testing::AnyOf(grpc::StatusCode::OK, grpc::StatusCode::INVALID_ARGUMENT,
                         grpc::StatusCode::NOT_FOUND, grpc::StatusCode::FAILED_PRECONDITION))
        << "request " << i << ": " << status.error_message();
  }
  // A message that does not parse (invalid UTF-8 in a string field) is refused
  // by gRPC itself before any handler runs; the server lives on.
  v1::PredictRequest unparsable;
  unparsable.mutable_model()->set_name("clf\xff\xfe");
  unparsable.mutable_inputs()->add_values(1.0f);
  v1::PredictResponse ignored;
  EXPECT_FALSE(client_->Predict(unparsable, &ignored).ok());
  // The generator reaches the valid and the invalid paths alike.
  EXPECT_GT(codes[grpc::StatusCode::OK], 0);
  EXPECT_GT(codes[grpc::StatusCode::INVALID_ARGUMENT], 0);
  EXPECT_GT(codes[grpc::StatusCode::NOT_FOUND], 0);
  bool serving = false;
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_TRUE(serving);
}

TEST_F(ServerTest, StreamRequestsArePipelinedIntoOneBatchAndAnsweredInOrder) {
  WriteModel(Featurizer());
  // A batch is cut only when 8 rows are queued (or after 30 s, past the 20 s
  // deadline): a stream that handled one request at a time would never fill it.
  ClientOptions options;
  options.deadline = std::chrono::milliseconds(20000);
  StartServer({"--batch_wait_when_idle", "--max_batch_size=8", "--max_batch_delay_us=30000000",
               "--threads=1"},
              options);
  auto local = LoadLocal(models(), "feat", 1);
  ASSERT_NE(local, nullptr);
  const int64_t f = local->feature_dim();
  const std::vector<float> x = RandomRows(8, 32, 21);
  std::vector<float> expected(static_cast<size_t>(8 * f));
  local->Featurize(8, x.data(), expected.data());
  const auto row_request = [&](int i) {
    v1::FeaturizeRequest request;
    request.mutable_model()->set_name("feat");
    request.mutable_inputs()->mutable_values()->Add(x.begin() + i * 32, x.begin() + (i + 1) * 32);
    return request;
  };
  // Eight one-row requests written before any response is read.
  auto stream = client_->OpenFeaturizeStream();
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(stream->Write(row_request(i))) << i;
  for (int i = 0; i < 8; ++i) {
    v1::FeaturizeResponse response;
    ASSERT_TRUE(stream->Read(&response)) << i;
    ASSERT_EQ(response.features_size(), f);
    EXPECT_EQ(std::memcmp(response.features().data(), expected.data() + i * f, f * 4), 0) << i;
  }
  const grpc::Status finished = stream->Finish();
  EXPECT_TRUE(finished.ok()) << finished.error_message();
  auto metrics = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "invariant_batch_rows_count", {"model=\"feat\""}), 1);
  EXPECT_EQ(MetricValue(*metrics, "invariant_batch_rows_sum", {"model=\"feat\""}), 8);
  // A bad fifth request: the four before it are answered, then the stream ends
  // with its error (the four after it still fill the batch of eight).
  auto failing = client_->OpenFeaturizeStream();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(failing->Write(row_request(i)));
  v1::FeaturizeRequest bad = row_request(0);
  bad.mutable_inputs()->add_values(1.0f);
  ASSERT_TRUE(failing->Write(bad));
  for (int i = 4; i < 8; ++i) failing->Write(row_request(i));  // may fail once the stream ends
  for (int i = 0; i < 4; ++i) {
    v1::FeaturizeResponse response;
    ASSERT_TRUE(failing->Read(&response)) << i;
    EXPECT_EQ(std::memcmp(response.features().data(), expected.data() + i * f, f * 4), 0) << i;
  }
  v1::FeaturizeResponse none;
  EXPECT_FALSE(failing->Read(&none));
  const grpc::Status failed = failing->Finish();
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << failed.error_message();
  EXPECT_THAT(failed.error_message(), HasSubstr("input_dim=32 floats, received 33"));
}

TEST_F(ServerTest, StreamsCutShortByTheirDeadlineAreCleanedUpAndTheServerDrains) {
  WriteModel(Featurizer());
  // Nothing is computed before a batch is cut 3 s after its first request, so
  // every stream below (deadline 300 ms) expires with its requests queued.
  StartServer({"--batch_wait_when_idle", "--max_batch_size=1000", "--max_batch_delay_us=3000000",
               "--drain_seconds=20"});
  ClientOptions hasty;
  hasty.deadline = std::chrono::milliseconds(300);
  auto hasty_client = Client::Create(server_->target(), hasty);
  const std::vector<float> x = RandomRows(4, 32, 8);
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("feat");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  for (int s = 0; s < 4; ++s) {
    auto stream = hasty_client->OpenFeaturizeStream();
    for (int i = 0; i < 10 && stream->Write(request); ++i) {
    }
    v1::FeaturizeResponse response;
    EXPECT_FALSE(stream->Read(&response));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s;
  }
  // A normal call joins the same batch; only its 4 rows are computed, the
  // expired streams' rows are dropped before compute.
  std::vector<float> features;
  ASSERT_TRUE(client_->Featurize("feat", 4, x, &features).ok());
  EXPECT_EQ(features.size(), 4u * 48);
  auto metrics = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "invariant_rows_total", {"model=\"feat\""}), 4);
  // The abandoned streams were finished: SIGTERM drains and exits 0.
  server_->Signal(SIGTERM);
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(60)), 0);
}

}  // namespace
}  // namespace invariant::testing_server
