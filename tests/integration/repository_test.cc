// The model repository extension and explicit model control on the REAL
// invariant-server (issue 35): models loaded and unloaded by request over
// gRPC and REST while another model is under load (no call of it fails), a
// call in flight on a model being unloaded finishes, a corrupt bundle's load
// refused with its reason in the index while the served version stays, the
// admin token required (the data token is not enough), and the model pages
// served for a loaded version. No timing: the in-flight call is held by the
// paused batcher (--testonly_start_paused) until SIGUSR1, and the test waits
// for the queue gauge that shows it queued.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <fstream>
#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "inference/grpc_service.grpc.pb.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

using ::testing::HasSubstr;

constexpr char kAdminToken[] = "admin-secret";
constexpr char kDataToken[] = "data-secret";

testing_models::TestModelSpec Model(const std::string& name, int64_t version = 1) {
  testing_models::TestModelSpec spec;
  spec.name = name;
  spec.version = version;
  return spec;
}

class RepositoryExtensionTest : public ServerTestBase {
 protected:
  // Starts the server under explicit control serving `a`, with both tokens.
  void Start(std::vector<std::string> flags = {}) {
    std::ofstream(dir_ / "admin") << kAdminToken;
    std::ofstream(dir_ / "data") << kDataToken;
    flags.insert(flags.end(), {"--model_control=explicit", "--load_model=a", "--http_port=0",
                               "--admin_token_file=" + (dir_ / "admin").string(),
                               "--data_token_file=" + (dir_ / "data").string()});
    ClientOptions data;
    data.bearer_token = kDataToken;
    StartServer(flags, data);
    stub_ = inference::GRPCInferenceService::NewStub(client_->channel());
  }

  // A context carrying `token` (empty: none).
  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    return context;
  }

  grpc::Status Load(const std::string& name, bool load = true,
                    const std::string& token = kAdminToken) {
    if (load) {
      inference::RepositoryModelLoadRequest request;
      request.set_model_name(name);
      inference::RepositoryModelLoadResponse response;
      return stub_->RepositoryModelLoad(Context(token).get(), request, &response);
    }
    inference::RepositoryModelUnloadRequest request;
    request.set_model_name(name);
    inference::RepositoryModelUnloadResponse response;
    return stub_->RepositoryModelUnload(Context(token).get(), request, &response);
  }

  // "name/version:STATE" of every index entry, and the reasons by entry.
  std::vector<std::string> Index(std::map<std::string, std::string>* reasons = nullptr) {
    inference::RepositoryIndexRequest request;
    inference::RepositoryIndexResponse response;
    const grpc::Status status =
        stub_->RepositoryIndex(Context(kAdminToken).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<std::string> out;
    for (const auto& m : response.models()) {
      const std::string key = m.name() + "/" + m.version();
      out.push_back(key + ":" + m.state());
      if (reasons != nullptr) (*reasons)[key] = m.reason();
    }
    return out;
  }

  grpc::Status Predict(const std::string& model) {
    std::vector<float> scores;
    return client_->Predict(model, 1, RandomRows(1, 16, 3), &scores);
  }

  // A REST call to the server: the status line and body.
  std::string Rest(const std::string& method, const std::string& path, const std::string& token,
                   const std::string& body = "") {
    std::string request = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: x\r\n");
    if (!token.empty()) absl::StrAppend(&request, "Authorization: Bearer ", token, "\r\n");
    absl::StrAppend(&request, "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n",
                    body);
    absl::StatusOr<std::string> answer = HttpExchange(server_->http_port(), request);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : "";
  }

  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(RepositoryExtensionTest, LoadAndUnloadByRequestWhileAnotherModelIsUnderLoad) {
  WriteModel(Model("a"));
  WriteModel(Model("b"));
  Start();
  EXPECT_THAT(Index(), ::testing::ElementsAre("a/1:READY", "b/1:UNAVAILABLE"));
  EXPECT_EQ(Predict("b").error_code(), grpc::StatusCode::NOT_FOUND);

  // Model a under load all along: every call must succeed.
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0}, failures{0};
  std::string first_failure;
  std::thread load([&] {
    auto client = Client::Create(server_->target(), [] {
      ClientOptions o;
      o.bearer_token = kDataToken;
      return o;
    }());
    while (!stop.load() || calls.load() < 20) {
      std::vector<float> scores;
      const grpc::Status s = client->Predict("a", 2, RandomRows(2, 16, calls.load()), &scores);
      ++calls;
      if (!s.ok() && failures++ == 0) first_failure = s.error_message();
    }
  });
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(Load("b").ok());
    EXPECT_TRUE(Predict("b").ok());
    ASSERT_TRUE(Load("b", /*load=*/false).ok());
    EXPECT_EQ(Predict("b").error_code(), grpc::StatusCode::NOT_FOUND);
  }
  // Over REST as well.
  EXPECT_THAT(Rest("POST", "/v2/repository/models/b/load", kAdminToken), HasSubstr("200 OK"));
  EXPECT_TRUE(Predict("b").ok());
  EXPECT_THAT(Rest("POST", "/v2/repository/index", kAdminToken, R"({"ready": true})"),
              HasSubstr(R"([{"name":"a","version":"1","state":"READY","reason":""},)"
                        R"({"name":"b","version":"1","state":"READY","reason":""}])"));
  EXPECT_THAT(Rest("POST", "/v2/repository/models/b/unload", kAdminToken), HasSubstr("200 OK"));
  stop = true;
  load.join();
  EXPECT_EQ(failures.load(), 0) << first_failure;
  EXPECT_GE(calls.load(), 20);
}

TEST_F(RepositoryExtensionTest, ACallInFlightOnAnUnloadedModelFinishes) {
  WriteModel(Model("a"));
  Start({"--testonly_start_paused"});
  v1::PredictRequest request;
  request.mutable_model()->set_name("a");
  const std::vector<float> x = RandomRows(1, 16, 9);
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  auto in_flight = client_->PredictAsync(request);
  bool queued = false;
  for (int i = 0; i < 240 && !queued; ++i) {  // bounded polls of the queue gauge
    auto metrics = HttpGet(server_->metrics_port(), "/metrics");
    queued =
        metrics.ok() && metrics->find("invariant_queue_rows{model=\"a\"} 1") != std::string::npos;
    if (!queued) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(queued) << "the call never reached the batch queue";
  // The unload takes the model out of lookups at once and answers once the
  // call it holds has drained, which the paused batcher keeps in flight.
  std::future<grpc::Status> unload =
      std::async(std::launch::async, [this] { return Load("a", /*load=*/false); });
  bool gone = false;
  // Bounded polls of the index: no batcher on its path (a Predict sent before
  // the unload would wait in the paused queue).
  for (int i = 0; i < 240 && !gone; ++i) {
    gone = Index() == std::vector<std::string>{"a/1:UNAVAILABLE"};
    if (!gone) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(gone) << "the model was never taken out of lookups";
  EXPECT_EQ(Predict("a").error_code(), grpc::StatusCode::NOT_FOUND);  // new calls: gone
  EXPECT_EQ(unload.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the unload answered before its call in flight ended";
  server_->Signal(SIGUSR1);  // the batcher runs
  CallResult<v1::PredictResponse> result = in_flight.get();
  EXPECT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_EQ(result.response.scores_size(), 3);
  EXPECT_TRUE(unload.get().ok());  // drained
}

TEST_F(RepositoryExtensionTest, ACorruptBundleIsRefusedWithItsReasonAndTheServedVersionStays) {
  WriteModel(Model("a"));
  Start();
  std::filesystem::create_directories(dir_ / "models" / "a" / "2");
  std::ofstream(dir_ / "models" / "a" / "2" / "model.bundle") << "not a bundle";
  const grpc::Status refused = Load("a");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("version 2"));
  EXPECT_THAT(refused.error_message(), HasSubstr("still serving version(s) 1"));
  std::map<std::string, std::string> reasons;
  EXPECT_THAT(Index(&reasons), ::testing::ElementsAre("a/2:UNAVAILABLE", "a/1:READY"));
  EXPECT_THAT(reasons["a/2"], HasSubstr("model.bundle"));
  EXPECT_TRUE(Predict("a").ok());
  // The data path's index page shows the state, not the load error.
  const std::string page = Rest("GET", "/v2/report", kDataToken);
  EXPECT_THAT(page, HasSubstr("failed to load"));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("model.bundle")));
}

// --max_model_bytes: a version whose stated bytes (model_footprint.h) would
// pass the limit is refused from its manifest, at a load and at a reload,
// with the figures in the index; the served version keeps answering, and an
// unloaded version's bytes are given back.
TEST_F(RepositoryExtensionTest,
       AVersionOverMaxModelBytesIsRefusedWithTheFiguresAndTheServedOneStays) {
  const std::string small = *testing_models::WriteTestModel((dir_ / "models").string(), Model("a"));
  testing_models::TestModelSpec large = Model("big");
  large.num_features = 600;
  const std::string big = *testing_models::WriteTestModel((dir_ / "models").string(), large);
  // The server computes on one thread, so the totals are the test's.
  const int64_t small_bytes = static_cast<int64_t>((*Model::Load(small))->footprint().total(1));
  const int64_t big_bytes = static_cast<int64_t>((*Model::Load(big))->footprint().total(1));
  ASSERT_GT(big_bytes, 2 * small_bytes);
  const int64_t limit = small_bytes + big_bytes - 1;  // one of each does not fit
  Start({"--compute_threads=1", absl::StrCat("--max_model_bytes=", limit)});
  const grpc::Status refused = Load("big");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  std::map<std::string, std::string> reasons;
  Index(&reasons);
  EXPECT_THAT(reasons["big/1"], HasSubstr(absl::StrCat("states ", big_bytes, " bytes")));
  EXPECT_THAT(reasons["big/1"],
              HasSubstr(absl::StrCat("hold ", small_bytes, " of max_model_bytes=", limit)));
  // A reload of "a" to a version as large: refused, version 1 serves.
  large.name = "a";
  large.version = 2;
  ASSERT_TRUE(testing_models::WriteTestModel((dir_ / "models").string(), large).ok());
  EXPECT_FALSE(Load("a").ok());
  EXPECT_THAT(Index(&reasons),
              ::testing::ElementsAre("a/2:UNAVAILABLE", "a/1:READY", "big/1:UNAVAILABLE"));
  EXPECT_THAT(reasons["a/2"], HasSubstr("max_model_bytes"));
  EXPECT_TRUE(Predict("a").ok());
  // Once "a" is unloaded its bytes are free: "big" fits.
  ASSERT_TRUE(Load("a", false).ok());
  const grpc::Status loaded = Load("big");  // a refusal for room is tried again
  EXPECT_TRUE(loaded.ok()) << loaded.error_message();
  EXPECT_TRUE(Predict("big").ok());
}

TEST_F(RepositoryExtensionTest, TheAdminTokenIsRequiredAndTheDataTokenIsNotEnough) {
  WriteModel(Model("a"));
  WriteModel(Model("b"));
  Start();
  for (const std::string token : {std::string(), std::string(kDataToken)}) {
    EXPECT_EQ(Load("b", true, token).error_code(), grpc::StatusCode::UNAUTHENTICATED) << token;
    EXPECT_EQ(Load("a", false, token).error_code(), grpc::StatusCode::UNAUTHENTICATED) << token;
    inference::RepositoryIndexResponse index;
    EXPECT_EQ(
        stub_->RepositoryIndex(Context(token).get(), inference::RepositoryIndexRequest(), &index)
            .error_code(),
        grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_THAT(Rest("POST", "/v2/repository/models/b/load", token), HasSubstr("401"));
    EXPECT_THAT(Rest("POST", "/v2/repository/index", token), HasSubstr("401"));
  }
  EXPECT_EQ(Predict("b").error_code(), grpc::StatusCode::NOT_FOUND);  // nothing was loaded
  EXPECT_TRUE(Predict("a").ok());
  // Malformed requests name the field.
  const grpc::Status empty = Load("");
  EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(empty.error_message(), HasSubstr("model_name"));
  EXPECT_THAT(Rest("POST", "/v2/repository/index", kAdminToken, R"({"ready": 1})"),
              HasSubstr("ready: expected a boolean"));
  // ServerMetadata lists the extension.
  inference::ServerMetadataResponse metadata;
  ASSERT_TRUE(stub_->ServerMetadata(Context(kDataToken).get(), {}, &metadata).ok());
  EXPECT_THAT(metadata.extensions(), ::testing::Contains("model_repository"));
}

}  // namespace
}  // namespace invariant::testing_server
