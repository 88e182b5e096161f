// The client library without invariant-server: an in-process fake
// FeatureService records what the client sends and answers with chosen
// statuses, so request encoding, call options and status pass-through are
// checked directly.
#include "client/client.h"

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

class FakeFeatureService final : public v1::FeatureService::Service {
 public:
  grpc::Status Featurize(grpc::ServerContext* context, const v1::FeaturizeRequest* request,
                         v1::FeaturizeResponse* response) override {
    last_request = *request;
    auto auth = context->client_metadata().find("authorization");
    authorization = auth == context->client_metadata().end()
                        ? ""
                        : std::string(auth->second.data(), auth->second.size());
    had_deadline = context->deadline() != std::chrono::system_clock::time_point::max();
    if (!reply.ok()) return reply;
    for (int i = 0; i < 3; ++i) response->add_features(0.5f * static_cast<float>(i));
    return grpc::Status::OK;
  }
  v1::FeaturizeRequest last_request;
  std::string authorization;
  bool had_deadline = false;
  grpc::Status reply = grpc::Status::OK;
};

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override { server_->Shutdown(); }
  std::unique_ptr<Client> MakeClient(const ClientOptions& options) {
    return std::make_unique<Client>(server_->InProcessChannel(grpc::ChannelArguments()), options);
  }

  FakeFeatureService service_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(ClientTest, FeaturizeSendsRawLittleEndianRowsTheModelAndTheOptions) {
  ClientOptions options;
  options.bearer_token = "s3cret";
  const std::vector<float> x = {1.f, -2.f, 3.5f, 0.25f};
  std::vector<float> features;
  ASSERT_TRUE(MakeClient(options)->Featurize("digits", 2, x, &features).ok());
  EXPECT_EQ(service_.last_request.model().name(), "digits");
  EXPECT_EQ(service_.last_request.inputs().num_rows(), 2);
  const std::string& raw = service_.last_request.inputs().raw_values();
  ASSERT_EQ(raw.size(), x.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(raw.data(), x.data(), raw.size()), 0);
  EXPECT_EQ(service_.authorization, "Bearer s3cret");
  EXPECT_TRUE(service_.had_deadline);
  EXPECT_EQ(features, (std::vector<float>{0.f, 0.5f, 1.f}));
}

TEST_F(ClientTest, NoTokenAndNoDeadlineWhenTheOptionsSayNone) {
  ClientOptions options;
  options.deadline = std::chrono::milliseconds(0);
  std::vector<float> features;
  ASSERT_TRUE(MakeClient(options)->Featurize("m", 1, {1.f}, &features).ok());
  EXPECT_EQ(service_.authorization, "");
  EXPECT_FALSE(service_.had_deadline);
}

TEST_F(ClientTest, ServerStatusIsReturnedAsIsAndOutputsAreLeftUntouched) {
  service_.reply = grpc::Status(grpc::StatusCode::NOT_FOUND, "model.name: no model named 'x'");
  std::vector<float> features = {42.f};
  const grpc::Status s = MakeClient({})->Featurize("x", 1, {1.f}, &features);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model.name: no model named 'x'");
  EXPECT_EQ(features, std::vector<float>{42.f});
}

TEST_F(ClientTest, UnimplementedMethodAndUnreachableTargetAreErrorsNotCrashes) {
  v1::ListModelsResponse models;  // the fake does not implement ListModels
  EXPECT_EQ(MakeClient({})->ListModels(&models).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  ClientOptions options;
  options.deadline = std::chrono::milliseconds(200);
  std::vector<float> features;
  const grpc::Status s = Client::Create("unix:/nonexistent/invariant.sock", options)
                             ->Featurize("m", 1, {1.f}, &features);
  EXPECT_THAT(s.error_code(),
              ::testing::AnyOf(grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::DEADLINE_EXCEEDED));
}

TEST_F(ClientTest, FeaturizeClipsSendsEachClipAsIsInOrder) {
  const std::vector<v1::AudioClip> clips = {WavClip("RIFF....WAVE"), FloatClip({0.5f, -1.f}, 16000),
                                            Int16Clip({1, -2, 32767, -32768})};
  std::vector<float> features;
  ASSERT_TRUE(MakeClient({})->FeaturizeClips("words", clips, &features).ok());
  const v1::InputBatch& inputs = service_.last_request.inputs();
  EXPECT_EQ(service_.last_request.model().name(), "words");
  EXPECT_EQ(inputs.num_rows(), 3);
  EXPECT_EQ(inputs.raw_values(), "");
  EXPECT_EQ(inputs.values_size(), 0);
  ASSERT_EQ(inputs.clips_size(), 3);
  EXPECT_EQ(inputs.clips(0).wav(), "RIFF....WAVE");
  EXPECT_EQ(inputs.clips(0).sample_rate(), 0);
  EXPECT_EQ(features, (std::vector<float>{0.f, 0.5f, 1.f}));
  // float32_le: 0.5 = 0x3F000000, −1 = 0xBF800000, least significant byte first.
  EXPECT_EQ(inputs.clips(1).float32_le(), std::string("\0\0\0\x3F\0\0\x80\xBF", 8));
  EXPECT_EQ(inputs.clips(1).sample_rate(), 16000);
  // int16_le: two's complement, least significant byte first; rate 0 = the model's.
  EXPECT_EQ(inputs.clips(2).int16_le(), std::string("\x01\x00\xFE\xFF\xFF\x7F\x00\x80", 8));
  EXPECT_EQ(inputs.clips(2).sample_rate(), 0);
}

TEST_F(ClientTest, ClipCallsPassTheServerStatusThrough) {
  service_.reply =
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "inputs.clips[0].wav: not a WAV file");
  std::vector<float> features = {42.f};
  const grpc::Status s = MakeClient({})->FeaturizeClips("words", {WavClip("x")}, &features);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "inputs.clips[0].wav: not a WAV file");
  EXPECT_EQ(features, std::vector<float>{42.f});
}

TEST(ClientOptionsTest, DefaultRetryConfigRetriesOnlyUnavailableFeatureServiceCalls) {
  const std::string config = DefaultRetryServiceConfig();
  EXPECT_THAT(config, ::testing::HasSubstr("\"service\": \"invariant.v1.FeatureService\""));
  EXPECT_THAT(config, ::testing::HasSubstr("\"retryableStatusCodes\": [\"UNAVAILABLE\"]"));
  EXPECT_THAT(config, ::testing::HasSubstr("\"maxAttempts\": 3"));
}

}  // namespace
}  // namespace invariant
