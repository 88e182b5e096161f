// What an operator or a client does to the REAL invariant-server that must
// not take it down or lie: bundles changed in place, one broken model among
// good ones, unparseable stream messages, metrics scraped before any event.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/impl/codegen/sync_stream.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_models::TestModelSpec;

TestModelSpec Classifier(uint64_t seed) {
  TestModelSpec spec;
  spec.name = "clf";
  spec.input_dim = 32;
  spec.num_features = 16;
  spec.num_group_elements = 8;
  spec.num_classes = 4;
  spec.seed = seed;
  return spec;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Overwrites `path` in place (same inode, no rename) with `bytes`, cuts it to
// their length, and moves its mtime `seconds` ahead so the poll sees a new
// file whatever the file system's timestamp granularity.
void OverwriteInPlace(const fs::path& path, const std::string& bytes, int seconds) {
  {
    std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << path;
  }
  fs::resize_file(path, bytes.size());
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(seconds));
}

class LoadHardeningTest : public ServerTestBase {
 protected:
  // Scores of `x` (2 rows) from the served "clf".
  std::vector<float> Scores(const std::vector<float>& x) {
    std::vector<float> scores;
    const grpc::Status status = client_->Predict("clf", 2, x, &scores);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return scores;
  }
};

TEST_F(LoadHardeningTest, BundleOverwrittenOrTruncatedInPlaceNeverCrashesTheServer) {
  WriteModel(Classifier(1));
  const fs::path bundle = fs::path(models()) / "clf" / "1" / kBundleFileName;
  const fs::path other_root = dir_ / "other";
  ASSERT_TRUE(testing_models::WriteTestModel(other_root.string(), Classifier(2)).ok());
  const std::string other_bytes = ReadAll(other_root / "clf" / "1" / kBundleFileName);
  StartServer({"--poll_seconds=0"});
  const std::vector<float> x = RandomRows(2, 32, 5);
  const std::vector<float> original = Scores(x);

  // Overwritten in place with another model: the loaded bits answer until a
  // rescan, which loads the new file as this version's new bits.
  OverwriteInPlace(bundle, other_bytes, 5);
  EXPECT_EQ(Scores(x), original);
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  EXPECT_EQ(reload.versions_loaded(), 1);
  const std::vector<float> replaced = Scores(x);
  EXPECT_NE(replaced, original);

  // Truncated in place (was SIGBUS on the next Predict): the loaded bits
  // answer; the rescan refuses the cut file and they keep answering.
  OverwriteInPlace(bundle, other_bytes.substr(0, other_bytes.size() / 2), 10);
  EXPECT_EQ(Scores(x), replaced);
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  EXPECT_EQ(reload.versions_failed(), 1);
  EXPECT_EQ(reload.versions_unloaded(), 0);
  EXPECT_EQ(Scores(x), replaced);
  v1::GetModelStatusResponse status;
  ASSERT_TRUE(client_->GetModelStatus("clf", &status).ok());
  ASSERT_EQ(status.models_size(), 1);
  ASSERT_EQ(status.models(0).versions_size(), 1);
  EXPECT_EQ(status.models(0).versions(0).state(), v1::VERSION_STATE_READY);
  EXPECT_THAT(status.models(0).versions(0).error(), HasSubstr("changed in place and was refused"));
  EXPECT_THAT(status.models(0).versions(0).error(), HasSubstr("truncated"));
  // Emptied: the same.
  OverwriteInPlace(bundle, "", 15);
  EXPECT_EQ(Scores(x), replaced);
  bool serving = false;
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_TRUE(serving);
}

TEST_F(LoadHardeningTest, ABrokenModelKeepsTheReplicaReadyAndEachModelHasItsOwnHealth) {
  WriteModel(Classifier(1));
  ASSERT_TRUE(testing_models::WriteCorruptModel(models(), "broken", 1).ok());
  StartServer({"--poll_seconds=0"});
  bool serving = false;
  ASSERT_TRUE(client_->Health("", &serving).ok());
  EXPECT_TRUE(serving);
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_TRUE(serving);  // "broken" never loaded: it does not take the replica out
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService/clf", &serving).ok());
  EXPECT_TRUE(serving);
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService/broken", &serving).ok());
  EXPECT_FALSE(serving);
  EXPECT_EQ(client_->Health("invariant.v1.FeatureService/nope", &serving).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // The broken model gets a good version: its own health follows.
  TestModelSpec fixed = Classifier(3);
  fixed.name = "broken";
  fixed.version = 2;
  WriteModel(fixed);
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService/broken", &serving).ok());
  EXPECT_TRUE(serving);
}

TEST_F(LoadHardeningTest, AServerWithNothingLoadedIsNotReady) {
  ASSERT_TRUE(testing_models::WriteCorruptModel(models(), "broken", 1).ok());
  StartServer({"--poll_seconds=0"});
  bool serving = true;
  ASSERT_TRUE(client_->Health("", &serving).ok());
  EXPECT_TRUE(serving);
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_FALSE(serving);
}

// Raw bytes on StreamPredict: a valid request, then one that does not parse.
TEST_F(LoadHardeningTest, AnUnparseableStreamMessageEndsTheStreamWithInvalidArgument) {
  WriteModel(Classifier(1));
  StartServer({"--poll_seconds=0"});
  for (const char* method : {"/invariant.v1.FeatureService/StreamPredict",
                             "/invariant.v1.FeatureService/StreamFeaturize"}) {
    v1::PredictRequest good;  // the same fields in both request messages
    good.mutable_model()->set_name("clf");
    const std::vector<float> x = RandomRows(1, 32, 9);
    *good.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
    const std::string good_bytes = good.SerializeAsString();
    // Field 1 (model) claims 5 bytes, 2 follow.
    const std::string garbage(
        "\x0a\x05"
        "ab",
        4);

    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
        grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
            client_->channel().get(),
            grpc::internal::RpcMethod(method, grpc::internal::RpcMethod::BIDI_STREAMING),
            &context));
    for (const std::string* bytes : {&good_bytes, &garbage, &good_bytes}) {
      grpc::Slice slice(*bytes);
      grpc::ByteBuffer buffer(&slice, 1);
      if (!stream->Write(buffer)) break;  // the server may have finished already
    }
    stream->WritesDone();
    std::vector<grpc::ByteBuffer> responses;
    grpc::ByteBuffer response;
    while (stream->Read(&response)) responses.push_back(response);
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(responses.size(), 1u) << method;  // the valid request before the garbage
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_THAT(status.error_message(), HasSubstr("request: stream message 2 (4 bytes)"));
    EXPECT_THAT(status.error_message(), HasSubstr("does not parse"));
  }
  bool serving = false;
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_TRUE(serving);
}

// Raw bytes on unary methods: gRPC's own empty UNIMPLEMENTED becomes
// INVALID_ARGUMENT naming the request type; an unknown method stays UNIMPLEMENTED.
TEST_F(LoadHardeningTest, AnUnparseableUnaryRequestIsInvalidArgumentNamingTheType) {
  WriteModel(Classifier(1));
  StartServer({"--poll_seconds=0"});
  const auto call = [&](const std::string& method) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    const std::string garbage(
        "\x0a\x05"
        "ab",
        4);
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
        client_->channel().get(),
        grpc::internal::RpcMethod(method.c_str(), grpc::internal::RpcMethod::NORMAL_RPC), &context,
        request, &response);
  };
  for (const auto& [method, type] : std::vector<std::pair<std::string, std::string>>{
           {"/invariant.v1.FeatureService/Predict", "invariant.v1.PredictRequest"},
           {"/invariant.v1.FeatureService/Featurize", "invariant.v1.FeaturizeRequest"},
           {"/invariant.v1.ModelAdmin/GetModelStatus", "invariant.v1.GetModelStatusRequest"}}) {
    const grpc::Status status = call(method);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_EQ(status.error_message(), "request: the message does not parse as " + type);
  }
  EXPECT_EQ(call("/invariant.v1.FeatureService/NoSuchMethod").error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  // A valid call still works.
  std::vector<float> scores;
  EXPECT_TRUE(client_->Predict("clf", 1, RandomRows(1, 32, 4), &scores).ok());
}

TEST_F(LoadHardeningTest, KnownCountersAreZeroBeforeAnyEvent) {
  WriteModel(Classifier(1));
  StartServer({"--poll_seconds=0"});
  auto text = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(MetricValue(*text, "invariant_model_load_failures_total", {"model=\"clf\""}), 0);
  EXPECT_EQ(MetricValue(*text, "invariant_queue_rows", {"model=\"clf\""}), 0);
  for (const char* code : {"OK", "INVALID_ARGUMENT", "NOT_FOUND", "RESOURCE_EXHAUSTED"}) {
    EXPECT_EQ(
        MetricValue(*text, "grpc_server_handled_total",
                    {"grpc_service=\"invariant.v1.FeatureService\"", "grpc_method=\"Predict\"",
                     "grpc_type=\"unary\"", absl::StrCat("grpc_code=\"", code, "\"")}),
        0)
        << code;
  }
  EXPECT_EQ(MetricValue(*text, "grpc_server_handled_total",
                        {"grpc_method=\"StreamPredict\"", "grpc_type=\"bidi_stream\"",
                         "grpc_code=\"INVALID_ARGUMENT\""}),
            0);
  EXPECT_EQ(
      MetricValue(*text, "grpc_server_started_total",
                  {"grpc_service=\"invariant.v1.ModelAdmin\"", "grpc_method=\"ReloadModels\""}),
      0);
  // A model that fails later starts its counter at 0 and counts from there.
  ASSERT_TRUE(testing_models::WriteCorruptModel(models(), "late", 1).ok());
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(client_->ReloadModels(&reload).ok());
  text = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(MetricValue(*text, "invariant_model_load_failures_total", {"model=\"late\""}), 1);
  EXPECT_EQ(MetricValue(*text, "grpc_server_handled_total",
                        {"grpc_method=\"ReloadModels\"", "grpc_code=\"OK\""}),
            1);
}

}  // namespace
}  // namespace invariant::testing_server
