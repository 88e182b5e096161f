// Smaller rules the REAL invariant-server broke in issue 50's attack run,
// each stated as a test:
//   * a version unloaded and loaded again starts its statistics at 0, though
//     a call in flight on the old load recorded after the unload;
//   * a FIFO in place of a model page is "no page" at once, holding no
//     HTTP handler thread waiting for a writer;
//   * the index page's links are percent-encoded path segments;
//   * --load_model naming no model directory is refused at start;
//   * several Authorization headers are refused on REST, as gRPC refuses
//     several authorization entries;
//   * hidden directories are not models, and "01" is not version 1.
// No timing: the in-flight call is held by the paused batcher until SIGUSR1.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "inference/grpc_service.grpc.pb.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kAdminToken[] = "admin-secret";

testing_models::TestModelSpec Model(const std::string& name, int num_classes = 3) {
  testing_models::TestModelSpec spec;
  spec.name = name;
  spec.num_classes = num_classes;
  return spec;
}

class ServerRulesTest : public ServerTestBase {
 protected:
  std::unique_ptr<grpc::ClientContext> AdminContext() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    context->AddMetadata("authorization", std::string("Bearer ") + kAdminToken);
    return context;
  }
  // A REST call: the status line, headers and body.
  std::string Rest(const std::string& method, const std::string& path,
                   const std::string& headers = "") {
    const std::string request = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: x\r\n", headers,
                                             "Content-Length: 0\r\nConnection: close\r\n\r\n");
    absl::StatusOr<std::string> answer = HttpExchange(server_->http_port(), request);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : "";
  }
};

TEST_F(ServerRulesTest, AVersionLoadedAgainStartsItsStatisticsAtZero) {
  WriteModel(Model("a"));
  std::ofstream(dir_ / "admin") << kAdminToken;
  StartServer({"--testonly_start_paused", "--model_control=explicit", "--load_model=a",
               "--admin_token_file=" + (dir_ / "admin").string()});
  auto stub = inference::GRPCInferenceService::NewStub(client_->channel());
  v1::PredictRequest predict;
  predict.mutable_model()->set_name("a");
  const std::vector<float> x = RandomRows(1, 16, 9);
  *predict.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  auto in_flight = client_->PredictAsync(predict);
  ASSERT_TRUE(Eventually([&] {
    auto metrics = HttpGet(server_->metrics_port(), "/metrics");
    return metrics.ok() && MetricValue(*metrics, "invariant_queue_rows", {"model=\"a\""}) == 1;
  }));
  std::future<grpc::Status> unload = std::async(std::launch::async, [&] {
    inference::RepositoryModelUnloadRequest request;
    request.set_model_name("a");
    inference::RepositoryModelUnloadResponse response;
    return stub->RepositoryModelUnload(AdminContext().get(), request, &response);
  });
  ASSERT_TRUE(Eventually([&] {
    grpc::ClientContext context;
    inference::ModelReadyRequest request;
    request.set_name("a");
    inference::ModelReadyResponse response;
    return stub->ModelReady(&context, request, &response).ok() && !response.ready();
  })) << "the model was never unloaded";
  server_->Signal(SIGUSR1);  // the held call is computed and recorded, after the unload
  EXPECT_TRUE(in_flight.get().status.ok());
  EXPECT_TRUE(unload.get().ok());
  inference::RepositoryModelLoadRequest load;
  load.set_model_name("a");
  inference::RepositoryModelLoadResponse loaded;
  ASSERT_TRUE(stub->RepositoryModelLoad(AdminContext().get(), load, &loaded).ok());
  inference::ModelStatisticsRequest request;
  request.set_name("a");
  inference::ModelStatisticsResponse statistics;
  grpc::ClientContext context;
  ASSERT_TRUE(stub->ModelStatistics(&context, request, &statistics).ok());
  ASSERT_EQ(statistics.model_stats_size(), 1);
  EXPECT_EQ(statistics.model_stats(0).inference_count(), 0u);
  EXPECT_EQ(statistics.model_stats(0).inference_stats().success().count(), 0u);
}

TEST_F(ServerRulesTest, AFifoInPlaceOfAModelPageIsNoPageAtOnce) {
  WriteModel(Model("a"));
  const fs::path page = fs::path(models()) / "a" / "1" / "report.html";
  ASSERT_EQ(::mkfifo(page.c_str(), 0644), 0);
  StartServer({"--http_port=0", "--http_threads=1"});
  for (int i = 0; i < 3; ++i) {  // one handler thread: a blocked one would stop the second
    EXPECT_THAT(Rest("GET", "/v2/models/a/versions/1/report"), HasSubstr("404 Not Found"));
  }
}

TEST_F(ServerRulesTest, IndexLinksArePercentEncodedPathSegments) {
  WriteModel(Model("p%41"));
  StartServer({"--http_port=0"});
  const std::string index = Rest("GET", "/v2/report");
  EXPECT_THAT(index, HasSubstr("href=\"/v2/models/p%2541/versions/1/report\""));
  // The link leads to "p%41" (which has no page), not to "pA".
  EXPECT_THAT(Rest("GET", "/v2/models/p%2541/versions/1/report"),
              HasSubstr("model 'p%41' version 1 has no model page"));
}

TEST_F(ServerRulesTest, LoadModelNamingNoModelDirectoryIsRefusedAtStart) {
  WriteModel(Model("a"));
  ServerProcess server;
  const absl::Status started =
      server.Start({"--model_control=explicit", "--load_model=a,typo", "--models=" + models()},
                   (dir_ / "server.log").string());
  EXPECT_FALSE(started.ok()) << "the server started ready with a model that does not exist";
  EXPECT_THAT(server.Log(), HasSubstr("load_model: model 'typo' is not a model directory"));
  EXPECT_THAT(server.Log(), HasSubstr("(it holds: a)"));
}

TEST_F(ServerRulesTest, SeveralAuthorizationHeadersAreRefusedOnRest) {
  WriteModel(Model("a"));
  std::ofstream(dir_ / "data") << "data-secret";
  ClientOptions options;
  options.bearer_token = "data-secret";
  StartServer({"--http_port=0", "--data_token_file=" + (dir_ / "data").string()}, options);
  const std::string one = "Authorization: Bearer data-secret\r\n";
  EXPECT_THAT(Rest("GET", "/v2/models/a", one), HasSubstr("200 OK"));
  const std::string twice = Rest("GET", "/v2/models/a", one + one);
  EXPECT_THAT(twice, HasSubstr("401 Unauthorized"));
  EXPECT_THAT(twice, HasSubstr("expected one 'Bearer <token>' header, received 2"));
}

TEST_F(ServerRulesTest, HiddenDirectoriesAreNotModelsAndZeroPaddedNamesAreNotVersions) {
  WriteModel(Model("a", 3));
  testing_models::TestModelSpec hidden = Model(".hidden");
  WriteModel(hidden);
  testing_models::TestModelSpec padded = Model("a", 5);  // 5 classes: told apart by its scores
  padded.version = 1;
  ASSERT_TRUE(testing_models::WriteTestModel((dir_ / "padded").string(), padded).ok());
  fs::create_directories(fs::path(models()) / "a" / "01");
  fs::copy_file(dir_ / "padded" / "a" / "1" / "model.bundle",
                fs::path(models()) / "a" / "01" / "model.bundle");
  StartServer({});
  v1::ListModelsResponse list;
  ASSERT_TRUE(client_->ListModels(&list).ok());
  ASSERT_EQ(list.models_size(), 1);
  EXPECT_EQ(list.models(0).name(), "a");
  std::vector<float> scores;
  ASSERT_TRUE(client_->Predict("a", 1, RandomRows(1, 16, 3), &scores).ok());
  EXPECT_EQ(scores.size(), 3u) << "\"01\" was served as version 1";
}

}  // namespace
}  // namespace invariant::testing_server
