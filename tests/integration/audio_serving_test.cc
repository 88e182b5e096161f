// A model of sound served by the REAL invariant-server on loopback: the same
// WAV file sent as an invariant.v1 clip over gRPC and as a BYTES tensor over
// REST with the binary data extension gives the same feature bits; 16-bit
// samples as an INT16 binary tensor give them too; the REST metadata names
// the audio inputs.
#include <grpcpp/grpcpp.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "invariant/v1/feature_service.grpc.pb.h"
#include "tests/integration/integration_env.h"
#include "tests/test_models/test_audio_model.h"
#include "tests/unit/server/audio_test_util.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_server::HttpExchange;
using namespace server::audio_test;  // NOLINT

class AudioServingTest : public testing_server::ServerTestBase {};

// The body of an HTTP response (after the blank line), and one header's value.
std::string BodyOf(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}
std::string HeaderOf(const std::string& response, const std::string& name) {
  const size_t at = response.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const size_t start = at + name.size() + 4;
  return response.substr(start, response.find("\r\n", start) - start);
}

// POSTs an infer body whose JSON part is `json` and binary part `binary`.
std::string PostInfer(int port, const std::string& model, const std::string& json,
                      const std::string& binary) {
  const std::string request = absl::StrCat(
      "POST /v2/models/", model, "/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n",
      "Content-Type: application/octet-stream\r\nInference-Header-Content-Length: ", json.size(),
      "\r\nContent-Length: ", json.size() + binary.size(), "\r\n\r\n", json, binary);
  absl::StatusOr<std::string> response = HttpExchange(port, request, absl::Seconds(30), false);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : "";
}

// The binary output after the JSON of a response asking for binary outputs.
std::string BinaryOutput(const std::string& response) {
  size_t json_size = 0;
  EXPECT_TRUE(absl::SimpleAtoi(HeaderOf(response, "Inference-Header-Content-Length"), &json_size))
      << response.substr(0, 2000);
  const std::string body = BodyOf(response);
  return json_size <= body.size() ? body.substr(json_size) : "";
}

TEST_F(AudioServingTest, OneWavOverGrpcV1AndRestBinaryGivesTheSameBits) {
  testing_models::TestAudioModelSpec spec;
  spec.num_classes = 0;  // features only: one output, easy to compare
  ASSERT_TRUE(testing_models::WriteTestAudioModel(models(), spec).ok());
  StartServer({"--http_port=0"});
  const std::vector<int16_t> pcm = Pcm16(3000, 3);
  const std::string wav = Wav16(pcm, 8000);

  // invariant.v1 over gRPC: the WAV as a clip.
  auto stub = v1::FeatureService::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("sound");
  request.mutable_inputs()->add_clips()->set_wav(wav);
  v1::FeaturizeResponse v1_response;
  grpc::ClientContext context;
  const grpc::Status status = stub->Featurize(&context, request, &v1_response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_GT(v1_response.features_size(), 0);
  const std::string expected =
      Bytes(v1_response.features().data(),
            sizeof(float) * static_cast<size_t>(v1_response.features_size()));

  // REST, binary extension: BYTES [1] = a 4-byte length and the WAV.
  std::string element;
  Put32(element, static_cast<uint32_t>(wav.size()));
  element += wav;
  const std::string wav_json =
      absl::StrCat(R"({"parameters": {"binary_data_output": true}, "inputs": [{"name": "input", )",
                   R"("datatype": "BYTES", "shape": [1], "parameters": {"binary_data_size": )",
                   element.size(), "}}]}");
  const std::string wav_response = PostInfer(server_->http_port(), "sound", wav_json, element);
  ASSERT_THAT(wav_response, StartsWith("HTTP/1.1 200")) << wav_response.substr(0, 2000);
  EXPECT_EQ(BinaryOutput(wav_response), expected);

  // REST, binary extension: the same samples as INT16 [1, 3000] at the model's rate.
  const std::string int16_json = absl::StrCat(
      R"({"parameters": {"binary_data_output": true}, "inputs": [{"name": "input", )",
      R"("datatype": "INT16", "shape": [1, 3000], "parameters": {"binary_data_size": )",
      2 * pcm.size(), "}}]}");
  const std::string int16_response =
      PostInfer(server_->http_port(), "sound", int16_json, Bytes(pcm));
  ASSERT_THAT(int16_response, StartsWith("HTTP/1.1 200")) << int16_response.substr(0, 2000);
  EXPECT_EQ(BinaryOutput(int16_response), expected);

  // A broken WAV is a 400 naming the element.
  std::string broken;
  Put32(broken, 4);
  broken += "RIFX";
  const std::string broken_json =
      absl::StrCat(R"({"inputs": [{"name": "input", "datatype": "BYTES", "shape": [1], )",
                   R"("parameters": {"binary_data_size": 8}}]})");
  const std::string refused = PostInfer(server_->http_port(), "sound", broken_json, broken);
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(BodyOf(refused), HasSubstr("inputs[0][0]"));

  // The metadata names the audio inputs and the rate.
  absl::StatusOr<std::string> metadata =
      testing_server::HttpGet(server_->http_port(), "/v2/models/sound");
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_THAT(*metadata, HasSubstr("input_lengths"));
  EXPECT_THAT(*metadata, HasSubstr("\"sample_rate\""));
}

}  // namespace
}  // namespace invariant
