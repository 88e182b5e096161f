// A model of sound served by the REAL invariant-server on loopback: the same
// WAV file sent as an invariant.v1 clip over gRPC and as a BYTES tensor over
// REST with the binary data extension gives the same feature bits; 16-bit
// samples as an INT16 binary tensor give them too; the REST metadata names
// the audio inputs.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cmath>
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
#include "tests/unit/server/testing/audio_test_util.h"

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

// Silence, a steady sound alone (a tone in noise: no onset above its own
// floor), and a syllable-like burst (that tone under a sin² envelope) in
// silence, as 16-bit samples at 8 kHz.
std::vector<std::vector<int16_t>> SpeechAndNone() {
  std::vector<int16_t> noise = Pcm16(8000, 5);
  for (int16_t& v : noise) v = static_cast<int16_t>(v / 8);
  std::vector<int16_t> sound(8000, 0);
  const std::vector<int16_t> burst = Pcm16(4000, 6);
  for (size_t i = 0; i < burst.size(); ++i) {
    const double envelope = std::sin(3.14159265358979 * static_cast<double>(i) / burst.size());
    sound[2000 + i] = static_cast<int16_t>(std::lround(burst[i] * envelope * envelope));
  }
  return {std::vector<int16_t>(4000, 0), noise, sound};
}

TEST_F(AudioServingTest, ClipsWithoutSpeechGetAStatusNotAClassOverGrpcAndRest) {
  testing_models::TestAudioModelSpec spec;
  spec.voice_activity = true;
  ASSERT_TRUE(testing_models::WriteTestAudioModel(models(), spec).ok());
  StartServer({"--http_port=0"});
  const std::vector<std::vector<int16_t>> clips = SpeechAndNone();

  // invariant.v1 over gRPC: speech per clip, NaN scores and no class for the two.
  auto stub = v1::FeatureService::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  v1::PredictRequest request;
  request.mutable_model()->set_name("sound");
  for (const auto& pcm : clips) request.mutable_inputs()->add_clips()->set_int16_le(Bytes(pcm));
  v1::PredictResponse response;
  grpc::ClientContext context;
  const grpc::Status status = stub->Predict(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.speech_size(), 3);
  EXPECT_FALSE(response.speech(0).found());
  EXPECT_FALSE(response.speech(1).found());
  EXPECT_TRUE(response.speech(2).found());
  // The envelope's first and last 40 ms are more than 20 dB under its peak.
  EXPECT_NEAR(response.speech(2).start_seconds(), 0.25, 0.06);
  EXPECT_NEAR(response.speech(2).end_seconds(), 0.75, 0.06);
  EXPECT_EQ(response.predicted_indices(0), -1);
  EXPECT_EQ(response.predicted_indices(1), -1);
  EXPECT_EQ(response.predicted_classes(0), "");
  EXPECT_GE(response.predicted_indices(2), 0);
  EXPECT_NE(response.predicted_classes(2), "");
  EXPECT_TRUE(std::isnan(response.scores(0)));
  EXPECT_FALSE(std::isnan(response.scores(2 * response.output_dim())));

  // REST, the Open Inference Protocol: clip_status and speech_seconds.
  std::string json = R"({"inputs": [{"name": "input", "datatype": "INT16", "shape": [3, 8000], )"
                     R"("data": [)";
  for (size_t c = 0; c < clips.size(); ++c) {
    for (int64_t i = 0; i < 8000; ++i) {
      const int v = i < static_cast<int64_t>(clips[c].size()) ? clips[c][i] : 0;
      absl::StrAppend(&json, c + i == 0 ? "" : ",", v);
    }
  }
  json += R"(]}, {"name": "input_lengths", "datatype": "INT64", "shape": [3], )"
          R"("data": [4000, 8000, 8000]}]})";
  const std::string rest = PostInfer(server_->http_port(), "sound", json, "");
  ASSERT_THAT(rest, StartsWith("HTTP/1.1 200")) << rest.substr(0, 2000);
  EXPECT_THAT(BodyOf(rest), HasSubstr(R"("data":["no_speech","no_speech","ok"])"));
  EXPECT_THAT(BodyOf(rest), HasSubstr(R"("name":"speech_seconds")"));
  absl::StatusOr<std::string> metadata =
      testing_server::HttpGet(server_->http_port(), "/v2/models/sound");
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_THAT(*metadata, HasSubstr("clip_status"));
}

}  // namespace
}  // namespace invariant
