// loadgen_audio_test.cc: invariant-loadgen's clips for models of sound.
// First the packing without a server (clip_codec.h: REST bodies, v1 clips,
// seeded clips, metadata, option checks), then the REAL invariant-loadgen
// binary against the REAL invariant-server serving tests/test_models' audio
// model (8 kHz, 0.25 s clips) beside a model of rows: seeded clips and WAV
// files, every clip encoding, gRPC unary and stream, REST JSON and binary.
// The JSON report's counts must equal the server's Prometheus counters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/loadgen/clip_codec.h"
#include "client/loadgen/loadgen.h"
#include "core/audio/wav.h"
#include "tests/cli/cli_test_support.h"
#include "tests/integration/integration_env.h"
#include "tests/test_models/test_audio_model.h"

namespace invariant::cli_test {
namespace {

using loadgen::ClipEncoding;
using loadgen::LoadClip;
using loadgen::RestEncoding;
using ::testing::HasSubstr;

LoadClip MakeClip(std::vector<float> samples, int rate) {
  LoadClip clip;
  clip.sample_rate = rate;
  clip.samples = std::move(samples);
  clip.wav = audio::EncodeWav16({rate, clip.samples});
  return clip;
}

// ---- Packing, no server.

TEST(LoadgenClipCodecTest, RestJsonInt16PadsRaggedClipsAndSendsTheirLengths) {
  const LoadClip a = MakeClip({0.5f, -1.0f, 1.0f}, 16000), b = MakeClip({0.25f}, 16000);
  const loadgen::EncodedInferRequest r = loadgen::EncodeClipInferRequest(
      {&a, &b}, {"scores"}, ClipEncoding::kInt16, RestEncoding::kJson);
  EXPECT_EQ(r.body,
            "{\"parameters\":{\"sample_rate\":16000},\"inputs\":[{\"name\":\"input\","
            "\"datatype\":\"INT16\",\"shape\":[2,3],\"data\":[16384,-32768,32767,8192,0,0]},"
            "{\"name\":\"input_lengths\",\"datatype\":\"INT64\",\"shape\":[2],\"data\":[3,1]}],"
            "\"outputs\":[{\"name\":\"scores\"}]}");
  EXPECT_EQ(r.json_bytes, static_cast<int64_t>(r.body.size()));
  EXPECT_EQ(r.content_type, "application/json");
}

TEST(LoadgenClipCodecTest, RestBinaryFp32OfEqualClipsHasNoLengths) {
  const LoadClip a = MakeClip({0.5f, -0.25f}, 8000), b = MakeClip({1.0f, 0.0f}, 8000);
  const loadgen::EncodedInferRequest r = loadgen::EncodeClipInferRequest(
      {&a, &b}, {"features"}, ClipEncoding::kFloat32, RestEncoding::kBinary);
  const std::string json = r.body.substr(0, static_cast<size_t>(r.json_bytes));
  EXPECT_EQ(json,
            "{\"parameters\":{\"sample_rate\":8000},\"inputs\":[{\"name\":\"input\","
            "\"datatype\":\"FP32\",\"shape\":[2,2],\"parameters\":{\"binary_data_size\":16}}],"
            "\"outputs\":[{\"name\":\"features\",\"parameters\":{\"binary_data\":true}}]}");
  ASSERT_EQ(r.body.size(), json.size() + 16);
  float values[4];
  std::memcpy(values, r.body.data() + json.size(), 16);  // little-endian host
  EXPECT_EQ(values[0], 0.5f);
  EXPECT_EQ(values[1], -0.25f);
  EXPECT_EQ(values[2], 1.0f);
  EXPECT_EQ(values[3], 0.0f);
  EXPECT_EQ(r.content_type, "application/octet-stream");
}

TEST(LoadgenClipCodecTest, RestWavIsBytesWithLengthPrefixes) {
  const LoadClip a = MakeClip({0.5f, -0.25f}, 8000);
  const loadgen::EncodedInferRequest r = loadgen::EncodeClipInferRequest(
      {&a, &a}, {"scores"}, ClipEncoding::kWav, RestEncoding::kBinary);
  const size_t n = a.wav.size();
  const std::string json = r.body.substr(0, static_cast<size_t>(r.json_bytes));
  EXPECT_EQ(json, absl::StrCat("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"BYTES\","
                               "\"shape\":[2],\"parameters\":{\"binary_data_size\":",
                               2 * (n + 4),
                               "}}],\"outputs\":[{\"name\":\"scores\",\"parameters\":"
                               "{\"binary_data\":true}}]}"));
  ASSERT_EQ(r.body.size(), json.size() + 2 * (n + 4));
  const std::string tail = r.body.substr(json.size());
  EXPECT_EQ(static_cast<uint8_t>(tail[0]), n & 0xff);
  EXPECT_EQ(static_cast<uint8_t>(tail[1]), (n >> 8) & 0xff);
  EXPECT_EQ(tail.substr(4, n), a.wav);
  EXPECT_EQ(tail.substr(n + 8), a.wav);
}

TEST(LoadgenClipCodecTest, V1ClipsCarryTheSamplesInEachEncoding) {
  const LoadClip a = MakeClip({0.5f, -1.5f}, 11025);
  const v1::AudioClip wav = loadgen::ToAudioClip(a, ClipEncoding::kWav);
  EXPECT_EQ(wav.wav(), a.wav);
  const v1::AudioClip f = loadgen::ToAudioClip(a, ClipEncoding::kFloat32);
  ASSERT_EQ(f.float32_le().size(), 8u);
  EXPECT_EQ(f.sample_rate(), 11025);
  const v1::AudioClip i = loadgen::ToAudioClip(a, ClipEncoding::kInt16);
  ASSERT_EQ(i.int16_le().size(), 4u);
  EXPECT_EQ(i.sample_rate(), 11025);
  EXPECT_EQ(static_cast<uint8_t>(i.int16_le()[1]), 0x40);  // 0.5 → 16384 = 0x4000
  EXPECT_EQ(static_cast<uint8_t>(i.int16_le()[3]), 0x80);  // −1.5 clamped → −32768 = 0x8000
}

TEST(LoadgenClipCodecTest, SyntheticClipsAreSeededAndHaveTheirLength) {
  const std::vector<LoadClip> a = loadgen::SyntheticClips(3, 0.5, 16000, 9);
  const std::vector<LoadClip> b = loadgen::SyntheticClips(3, 0.5, 16000, 9);
  const std::vector<LoadClip> c = loadgen::SyntheticClips(3, 0.5, 16000, 10);
  ASSERT_EQ(a.size(), 3u);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].sample_rate, 16000);
    ASSERT_EQ(a[k].samples.size(), 8000u);
    EXPECT_EQ(a[k].samples, b[k].samples);
    EXPECT_NE(a[k].samples, c[k].samples);
    float edge = 0, middle = 0;
    for (size_t i = 0; i < 800; ++i) edge = std::max(edge, std::fabs(a[k].samples[i]));
    for (size_t i = 3600; i < 4400; ++i) middle = std::max(middle, std::fabs(a[k].samples[i]));
    EXPECT_LT(edge, 0.02f);   // faint noise before the voiced part
    EXPECT_GT(middle, 0.1f);  // the voiced part
    const absl::StatusOr<audio::Clip> decoded = audio::DecodeWav(a[k].wav, 8000, "wav");
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->sample_rate, 16000);
    EXPECT_EQ(decoded->samples.size(), 8000u);
  }
  EXPECT_NE(a[0].samples, a[1].samples);
}

TEST(LoadgenClipCodecTest, SampleRateFromRestMetadata) {
  EXPECT_EQ(*loadgen::SampleRateFromModelMetadata(
                R"({"name":"m","properties":{"sample_rate":"8000","audio":"{}"}})"),
            8000);
  EXPECT_EQ(*loadgen::SampleRateFromModelMetadata(R"({"name":"m","inputs":[]})"), 0);
  EXPECT_THAT(loadgen::SampleRateFromModelMetadata(R"({"properties":{"sample_rate":"-3"}})")
                  .status()
                  .message(),
              HasSubstr("properties.sample_rate"));
  EXPECT_FALSE(loadgen::SampleRateFromModelMetadata("{").ok());
}

TEST(LoadgenClipCodecTest, OptionChecks) {
  loadgen::LoadOptions o;
  o.model = "m";
  o.max_requests = 1;
  o.clips.push_back(MakeClip({0.1f}, 8000));
  EXPECT_TRUE(loadgen::ValidateLoadOptions(o).ok());
  o.rows = {1.0f};
  o.input_dim = 1;
  EXPECT_THAT(loadgen::ValidateLoadOptions(o).message(), HasSubstr("got both"));
  o.rows.clear();
  o.protocol = loadgen::Protocol::kRest;
  EXPECT_THAT(loadgen::ValidateLoadOptions(o).message(), HasSubstr("--rest_encoding=binary"));
  o.rest_encoding = RestEncoding::kBinary;
  EXPECT_TRUE(loadgen::ValidateLoadOptions(o).ok());
  o.clip_encoding = ClipEncoding::kFloat32;
  o.clips.push_back(MakeClip({0.1f}, 16000));
  EXPECT_THAT(loadgen::ValidateLoadOptions(o).message(), HasSubstr("one sample_rate"));
  o.clip_encoding = ClipEncoding::kWav;  // each WAV names its own rate
  EXPECT_TRUE(loadgen::ValidateLoadOptions(o).ok());
  o.clips.push_back(LoadClip{});
  EXPECT_THAT(loadgen::ValidateLoadOptions(o).message(), HasSubstr("clip 2 has no samples"));
}

// ---- The real binary against the real server.

constexpr char kService[] = "grpc_service=\"invariant.v1.FeatureService\"";
constexpr char kRestService[] = "grpc_service=\"inference.REST\"";

class LoadgenAudioTest : public testing_server::ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    testing_models::TestAudioModelSpec sound;  // "sound": 8 kHz, 0.25 s, 3 classes
    ASSERT_TRUE(testing_models::WriteTestAudioModel(models(), sound).ok());
    testing_models::TestModelSpec rows;
    rows.name = "rows";
    WriteModel(rows);
    StartServer({"--http_port=0"});
    ASSERT_GT(server_->http_port(), 0);
  }

  ToolResult Loadgen(std::vector<std::string> args) {
    args.push_back("--target=" + server_->target());
    args.push_back("--json_out=" + JsonPath());
    return RunTool(INVARIANT_LOADGEN_BINARY, args, dir_.string());
  }
  ToolResult RestLoadgen(std::vector<std::string> args) {
    args.push_back("--protocol=rest");
    args.push_back("--target=127.0.0.1:" + std::to_string(server_->http_port()));
    args.push_back("--json_out=" + JsonPath());
    return RunTool(INVARIANT_LOADGEN_BINARY, args, dir_.string());
  }
  std::string JsonPath() const { return (dir_ / "report.json").string(); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a 16-bit WAV of a seeded clip of `seconds` at `rate`.
  void WriteWav(const std::string& name, double seconds, int rate, uint64_t seed) {
    WriteFile(Path(name), loadgen::SyntheticClips(1, seconds, rate, seed)[0].wav);
  }

  google::protobuf::Struct Report() {
    google::protobuf::Struct json;
    const std::string text = ReadFile(JsonPath());
    EXPECT_TRUE(ParseJson(text, &json)) << text;
    return json;
  }
  static double Requests(const google::protobuf::Struct& json, const std::string& key) {
    return json.fields().at("requests").struct_value().fields().at(key).number_value();
  }

  std::string Metrics() {
    auto body = testing_server::HttpGet(server_->metrics_port(), "/metrics");
    EXPECT_TRUE(body.ok()) << body.status();
    return body.ok() ? *body : "";
  }
  static double Handled(const std::string& metrics, const std::string& service,
                        const std::string& method, const std::string& code) {
    return MetricValue(metrics, "grpc_server_handled_total",
                       {service, "grpc_method=\"" + method + "\"", "grpc_code=\"" + code + "\""});
  }
  static double Rows(const std::string& metrics, const std::string& method) {
    return MetricValue(metrics, "invariant_rows_total",
                       {"model=\"sound\"", "method=\"" + method + "\""});
  }
};

TEST_F(LoadgenAudioTest, SeededClipsForAModelOfSoundOverGrpcInEveryEncoding) {
  double predicts = 0;
  for (const std::string encoding : {"wav", "float32", "int16"}) {
    const ToolResult r = Loadgen({"--model=sound", "--requests=30", "--concurrency=2", "--batch=3",
                                  "--clip_encoding=" + encoding});
    ASSERT_EQ(r.exit_code, 0) << encoding << r.err << r.out;
    EXPECT_THAT(r.out, HasSubstr("clips=" + encoding));
    const google::protobuf::Struct json = Report();
    EXPECT_EQ(Requests(json, "ok"), 30) << encoding;
    EXPECT_EQ(Requests(json, "failed"), 0) << encoding;
    EXPECT_EQ(json.fields().at("rows_ok").number_value(), 90);
    EXPECT_EQ(json.fields().at("input").string_value(), "clips");
    EXPECT_EQ(json.fields().at("clip_encoding").string_value(), encoding);
    predicts += 30;
  }
  const std::string metrics = Metrics();
  EXPECT_EQ(Handled(metrics, kService, "Predict", "OK"), predicts) << metrics;
  EXPECT_EQ(Rows(metrics, "Predict"), 3 * predicts) << metrics;
  EXPECT_EQ(Handled(metrics, kService, "Predict", "INVALID_ARGUMENT"), 0);
}

TEST_F(LoadgenAudioTest, WavFilesOfOtherRatesAndLengthsOverAStream) {
  WriteWav("a.wav", 0.25, 8000, 1);
  WriteWav("b.wav", 0.4, 16000, 2);  // resampled and cropped by the server
  WriteWav("c.wav", 0.1, 11025, 3);  // padded
  const ToolResult r =
      Loadgen({"--model=sound", "--method=featurize", "--mode=stream", "--requests=20", "--batch=2",
               "--clip=" + Path("a.wav") + "," + Path("b.wav") + "," + Path("c.wav")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(Requests(json, "ok"), 20);
  EXPECT_EQ(json.fields().at("streams").number_value(), 1);
  const std::string metrics = Metrics();
  EXPECT_EQ(Rows(metrics, "Featurize"), 40) << metrics;
  EXPECT_EQ(Handled(metrics, kService, "GetModelMetadata", "OK"), 0);  // --clip: no lookup
}

TEST_F(LoadgenAudioTest, RestBinaryAndJsonClips) {
  WriteWav("a.wav", 0.25, 8000, 1);
  WriteWav("b.wav", 0.2, 8000, 2);  // shorter: the request carries input_lengths
  const std::string clips = "--clip=" + Path("a.wav") + "," + Path("b.wav");
  struct Case {
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {{"--model=sound", "--rest_encoding=binary", "--clip_encoding=wav", "--batch=2", clips}},
      {{"--model=sound", "--rest_encoding=binary", "--clip_encoding=int16", "--batch=2", clips}},
      {{"--model=sound", "--rest_encoding=json", "--clip_encoding=float32", "--batch=2", clips}},
      {{"--model=sound", "--rest_encoding=binary", "--clip_encoding=float32"}},  // seeded clips
      {{"--model=sound", "--rest_encoding=json", "--clip_encoding=int16", "--method=featurize"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("--requests=12");
    const ToolResult r = RestLoadgen(args);
    ASSERT_EQ(r.exit_code, 0) << args[1] << " " << args[2] << r.err << r.out;
    const google::protobuf::Struct json = Report();
    EXPECT_EQ(Requests(json, "ok"), 12) << args[2] << r.out;
    EXPECT_EQ(json.fields().at("input").string_value(), "clips");
  }
  const std::string metrics = Metrics();
  EXPECT_EQ(Handled(metrics, kRestService, "ModelInfer", "OK"), 12 * cases.size()) << metrics;
  EXPECT_EQ(Rows(metrics, "Predict"), 12 * (2 + 2 + 2 + 1)) << metrics;
  EXPECT_EQ(Rows(metrics, "Featurize"), 12) << metrics;
}

TEST_F(LoadgenAudioTest, ClipsToAModelOfRowsFailAndAreCounted) {
  WriteWav("a.wav", 0.25, 8000, 1);
  const ToolResult r = Loadgen({"--model=rows", "--requests=5", "--clip=" + Path("a.wav")});
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(Requests(json, "failed"), 5);
  EXPECT_EQ(
      json.fields().at("errors").struct_value().fields().at("INVALID_ARGUMENT").number_value(), 5);
  EXPECT_EQ(Handled(Metrics(), kService, "Predict", "INVALID_ARGUMENT"), 5);
}

TEST_F(LoadgenAudioTest, UsageErrorsSendNothing) {
  WriteWav("a.wav", 0.25, 8000, 1);
  WriteFile(Path("rows.csv"), "1,2\n");
  WriteFile(Path("not.wav"), "RIFX but not really");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--clip_encoding=mp3"}, "--clip_encoding"},
      {{"--clip_seconds=0"}, "--clip_seconds"},
      {{"--clip_rate=500"}, "--clip_rate"},
      {{"--clip=" + Path("missing.wav")}, "missing.wav"},
      {{"--clip=" + Path("not.wav")}, "not.wav"},
      {{"--clip=" + Path("a.wav"), "--input=" + Path("rows.csv")}, "got both"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = flags;
    args.push_back("--model=sound");
    args.push_back("--requests=1");
    const ToolResult r = Loadgen(args);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << r.out;
    EXPECT_THAT(r.err, HasSubstr(message)) << flags[0];
  }
  const ToolResult rest = RestLoadgen({"--model=sound", "--requests=1", "--clip_encoding=wav"});
  EXPECT_EQ(rest.exit_code, 2) << rest.err << rest.out;
  EXPECT_THAT(rest.err, HasSubstr("--rest_encoding=binary"));
  const std::string metrics = Metrics();
  EXPECT_EQ(Handled(metrics, kService, "Predict", "OK") +
                Handled(metrics, kService, "Predict", "INVALID_ARGUMENT"),
            0);
  EXPECT_EQ(Handled(metrics, kRestService, "ModelInfer", "OK"), 0);
}

}  // namespace
}  // namespace invariant::cli_test
