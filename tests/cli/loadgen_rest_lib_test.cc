// loadgen_rest_lib_test.cc: the REST side of invariant-loadgen's engine
// without a server — option validation, the infer request bodies (JSON and
// Triton's binary tensor extension) and the decoding of hand-built responses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/loadgen/loadgen.h"
#include "client/loadgen/oip_codec.h"
#include "client/loadgen/rest_client.h"
#include "core/base/json.h"

namespace invariant::loadgen {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

LoadOptions ValidRest() {
  LoadOptions o;
  o.model = "m";
  o.max_requests = 10;
  o.input_dim = 2;
  o.rows = {1, 2, 3, 4};
  o.protocol = Protocol::kRest;
  return o;
}

std::string LittleEndian(const std::vector<float>& values) {
  std::string out;
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
  }
  return out;
}

TEST(LoadgenRestOptionsTest, StreamsVersionsAndEncodingsAreCheckedPerProtocol) {
  LoadOptions o = ValidRest();
  EXPECT_TRUE(ValidateLoadOptions(o).ok());
  o.rest_encoding = RestEncoding::kBinary;
  EXPECT_TRUE(ValidateLoadOptions(o).ok());

  o.mode = Mode::kStream;
  EXPECT_THAT(ValidateLoadOptions(o).message(), HasSubstr("--mode=stream: streams are gRPC-only"));
  o.mode = Mode::kUnary;

  o.version = 3;
  EXPECT_TRUE(ValidateLoadOptions(o).ok());
  o.version_label = "blue";
  EXPECT_THAT(ValidateLoadOptions(o).message(), HasSubstr("--version / --version_label"));
  o.version = 0;
  EXPECT_TRUE(ValidateLoadOptions(o).ok());

  o.protocol = Protocol::kGrpc;  // binary is a REST encoding
  EXPECT_THAT(ValidateLoadOptions(o).message(), HasSubstr("--rest_encoding=binary"));
  o.rest_encoding = RestEncoding::kJson;
  o.mode = Mode::kStream;
  EXPECT_TRUE(ValidateLoadOptions(o).ok());
}

TEST(LoadgenRestOptionsTest, EachRunnerRefusesTheOtherProtocol) {
  LoadOptions o = ValidRest();
  o.protocol = Protocol::kGrpc;
  RestTarget target;
  target.target = "127.0.0.1:1";
  const auto report = RunRestLoad(target, o);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(report.status().message(), HasSubstr("--protocol=rest"));
}

TEST(LoadgenRestOptionsTest, PathsAndOutputNames) {
  LoadOptions o = ValidRest();
  o.model = "my model/x";
  EXPECT_EQ(RestModelPath(o), "/v2/models/my%20model%2Fx");
  o.version = 7;
  EXPECT_EQ(RestModelPath(o), "/v2/models/my%20model%2Fx/versions/7");
  o.version = 0;
  o.version_label = "blue-2";
  EXPECT_EQ(RestModelPath(o), "/v2/models/my%20model%2Fx/versions/blue-2");
  EXPECT_EQ(InferOutputNames(Method::kPredict), std::vector<std::string>{"scores"});
  EXPECT_EQ(InferOutputNames(Method::kFeaturize), std::vector<std::string>{"features"});
  EXPECT_EQ(InferOutputNames(Method::kFeaturizePredict),
            (std::vector<std::string>{"features", "scores"}));
  EXPECT_STREQ(ProtocolName(Protocol::kRest), "rest");
  EXPECT_STREQ(EncodingName(o), "json");
  o.rest_encoding = RestEncoding::kBinary;
  EXPECT_STREQ(EncodingName(o), "binary");
  o.protocol = Protocol::kGrpc;
  EXPECT_STREQ(EncodingName(o), "protobuf");
  o.protocol = Protocol::kOipGrpc;
  EXPECT_STREQ(ProtocolName(o.protocol), "oip_grpc");
}

TEST(LoadgenRestCodecTest, JsonRequestCarriesTheRowsAndAsksForOneOutput) {
  const std::vector<float> values = {1.0f, 0.5f, -2.0f, 0.1f};
  const EncodedInferRequest r =
      EncodeInferRequest(values.data(), 2, 2, {"scores"}, RestEncoding::kJson);
  EXPECT_EQ(r.body,
            "{\"inputs\":[{\"name\":\"input\",\"shape\":[2,2],\"datatype\":\"FP32\","
            "\"data\":[1,0.5,-2,0.1]}],\"outputs\":[{\"name\":\"scores\"}]}");
  EXPECT_EQ(r.json_bytes, static_cast<int64_t>(r.body.size()));
  EXPECT_EQ(r.content_type, "application/json");
  // Valid JSON whose numbers read back to the same floats.
  const auto json = ParseJson(r.body);
  ASSERT_TRUE(json.ok()) << json.status();
  const JsonValue& data = json->Find("inputs")->items()[0].Find("data")->items().at(3);
  float back = 0;
  ASSERT_TRUE(data.NumberAsFloat(&back));
  EXPECT_EQ(back, 0.1f);
}

TEST(LoadgenRestCodecTest, ARequestMayAskForSeveralOutputs) {
  const std::vector<float> values = {1.0f, 2.0f};
  EncodedInferRequest r =
      EncodeInferRequest(values.data(), 1, 2, {"features", "scores"}, RestEncoding::kJson);
  EXPECT_THAT(r.body,
              ::testing::EndsWith("\"outputs\":[{\"name\":\"features\"},{\"name\":\"scores\"}]}"));
  r = EncodeInferRequest(values.data(), 1, 2, {"features", "scores"}, RestEncoding::kBinary);
  const std::string json = r.body.substr(0, static_cast<size_t>(r.json_bytes));
  EXPECT_THAT(json, ::testing::EndsWith(
                        "\"outputs\":[{\"name\":\"features\",\"parameters\":{\"binary_data\":"
                        "true}},{\"name\":\"scores\",\"parameters\":{\"binary_data\":true}}]}"));
  EXPECT_TRUE(ParseJson(json).ok());
}

TEST(LoadgenOptionsTest, FeaturesAndScoresInOneCallNeedTheOpenInferenceProtocol) {
  LoadOptions o;
  o.model = "m";
  o.max_requests = 1;
  o.rows = {1.0f};
  o.input_dim = 1;
  o.method = Method::kFeaturizePredict;
  o.protocol = Protocol::kGrpc;
  const absl::Status status = ValidateLoadOptions(o);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("--method=featurize_predict"));
  o.protocol = Protocol::kOipGrpc;
  EXPECT_TRUE(ValidateLoadOptions(o).ok());
  o.mode = Mode::kStream;
  EXPECT_FALSE(ValidateLoadOptions(o).ok());
}

TEST(LoadgenRestCodecTest, BinaryRequestIsJsonHeaderThenLittleEndianFloats) {
  const std::vector<float> values = {1.0f, -2.5f, 3.0f};
  const EncodedInferRequest r =
      EncodeInferRequest(values.data(), 1, 3, {"features"}, RestEncoding::kBinary);
  const std::string header =
      "{\"inputs\":[{\"name\":\"input\",\"shape\":[1,3],\"datatype\":\"FP32\","
      "\"parameters\":{\"binary_data_size\":12}}],"
      "\"outputs\":[{\"name\":\"features\",\"parameters\":{\"binary_data\":true}}]}";
  EXPECT_EQ(r.json_bytes, static_cast<int64_t>(header.size()));
  EXPECT_EQ(r.content_type, "application/octet-stream");
  ASSERT_EQ(r.body.size(), header.size() + 12);
  EXPECT_EQ(r.body.substr(0, header.size()), header);
  // 1.0f = 0x3f800000, little-endian.
  EXPECT_EQ(r.body.substr(header.size(), 4), std::string("\x00\x00\x80\x3f", 4));
  EXPECT_EQ(r.body.substr(header.size()), LittleEndian(values));
  EXPECT_TRUE(ParseJson(r.body.substr(0, header.size())).ok());
}

TEST(LoadgenRestCodecTest, DecodesAJsonResponse) {
  const std::string body =
      "{\"model_name\":\"rf\",\"model_version\":\"3\",\"id\":\"\",\"outputs\":["
      "{\"name\":\"scores\",\"datatype\":\"FP32\",\"shape\":[2,3],"
      "\"data\":[1,-2.5,3e-2,4,5,6]},"
      "{\"name\":\"predicted_class\",\"datatype\":\"BYTES\",\"shape\":[2],"
      "\"data\":[\"a\\\"b\",\"\\u00e9\"]}]}";
  InferResponse response;
  ASSERT_TRUE(DecodeInferResponse(body, -1, &response).ok());
  EXPECT_EQ(response.model_name, "rf");
  EXPECT_EQ(response.model_version, "3");
  ASSERT_EQ(response.outputs.size(), 2u);
  EXPECT_EQ(response.outputs[0].name, "scores");
  EXPECT_THAT(response.outputs[0].shape, ElementsAre(2, 3));
  EXPECT_THAT(response.outputs[0].fp32, ElementsAre(1, -2.5f, 3e-2f, 4, 5, 6));
  EXPECT_FALSE(response.outputs[0].binary);
  EXPECT_EQ(response.outputs[1].elements, 2);
  EXPECT_TRUE(response.outputs[1].fp32.empty());
  EXPECT_TRUE(CheckInferOutput(response, "scores", 2, false).ok());

  EXPECT_THAT(CheckInferOutput(response, "scores", 3, false).message(),
              HasSubstr("outputs[0].shape: expected [3, n], received [2, 3]"));
  EXPECT_THAT(CheckInferOutput(response, "features", 2, false).message(),
              HasSubstr("expected the output 'features', received [scores, predicted_class]"));
  EXPECT_THAT(CheckInferOutput(response, "predicted_class", 2, false).message(),
              HasSubstr("expected FP32"));
  EXPECT_THAT(CheckInferOutput(response, "scores", 2, true).message(),
              HasSubstr("expected binary data"));
}

TEST(LoadgenRestCodecTest, NestedDataAndReusedResponsesDecode) {
  InferResponse response;
  ASSERT_TRUE(
      DecodeInferResponse("{\"outputs\":[{\"name\":\"a\",\"datatype\":\"FP32\",\"shape\":[1,1],"
                          "\"data\":[0]},{\"name\":\"b\",\"datatype\":\"FP32\",\"shape\":[1,1],"
                          "\"data\":[0]}]}",
                          -1, &response)
          .ok());
  // The second call reuses the object: no stale output or value survives.
  ASSERT_TRUE(DecodeInferResponse(
                  " {\"outputs\" : [ {\"data\":[[1, 2],[3, 4]], \"shape\":[2,2],"
                  "\"datatype\":\"FP32\",\"name\":\"features\",\"extra\":{\"x\":[null,true]}}]} ",
                  -1, &response)
                  .ok());
  ASSERT_EQ(response.outputs.size(), 1u);
  EXPECT_THAT(response.outputs[0].fp32, ElementsAre(1, 2, 3, 4));
  EXPECT_TRUE(CheckInferOutput(response, "features", 2, false).ok());
}

TEST(LoadgenRestCodecTest, MalformedJsonResponsesAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "response byte 0: expected a value, received the end of the input"},
      {"{\"outputs\":[", "response byte 12"},
      {"{\"outputs\":[]} x", "response byte 15: expected the end of the input after the value"},
      {"{\"outputs\":[{\"name\":\"s\",\"data\":[1,]}]}", "response byte 34: expected a value"},
      {"{\"outputs\":[{\"name\":\"s\",\"data\":[01]}]}", "byte 33: expected '.', 'e' or the end"},
      {"{\"outputs\":[{\"name\":\"s\",\"data\":[1e99]}]}", "outputs[0].data: expected a float"},
      {"{\"outputs\":[{\"shape\":[1.5]}]}", "outputs[0].shape[0]: expected an integer"},
      {"{\"outputs\":[{\"name\":\"s\x01\"}]}", "byte 22: expected no control character"},
      {"{'outputs':[]}", "response byte 1: expected a string key"},
      {"{\"a\":tru}", "response byte 5: expected a value"},
      {std::string(40, '[') + std::string(40, ']'), "expected '{'"},
      {"{\"a\":" + std::string(40, '[') + std::string(40, ']') + "}",
       "byte 36: expected at most 32 levels of nesting"},
      {"{\"outputs\":[{\"data\":[1],\"parameters\":{\"binary_data_size\":4}}]}",
       "either \"data\" or binary_data_size"},
  };
  for (const auto& [body, message] : cases) {
    InferResponse response;
    const absl::Status status = DecodeInferResponse(body, -1, &response);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(status.message(), HasSubstr(message)) << body;
  }
  // Well-formed, but the values do not fill the shape.
  InferResponse response;
  ASSERT_TRUE(DecodeInferResponse(
                  "{\"outputs\":[{\"name\":\"scores\",\"datatype\":\"FP32\",\"shape\":[2,3],"
                  "\"data\":[1,2,3,4,5]}]}",
                  -1, &response)
                  .ok());
  EXPECT_THAT(CheckInferOutput(response, "scores", 2, false).message(),
              HasSubstr("outputs[0]: expected 6 values, received 5"));
}

TEST(LoadgenRestCodecTest, LargeResponsesDecodeAndMembersOfTheWrongTypeAreRefused) {
  // 64 rows of 625 features (the shape of an MNIST featurize call).
  std::string body =
      "{\"outputs\":[{\"name\":\"features\",\"datatype\":\"FP32\",\"shape\":[64,625],\"data\":[";
  for (int i = 0; i < 64 * 625; ++i) {
    if (i > 0) body += ',';
    AppendJsonNumber(static_cast<float>(i) / 7.0f, &body);
  }
  body += "]}]}";
  InferResponse response;
  ASSERT_TRUE(DecodeInferResponse(body, -1, &response).ok());
  ASSERT_EQ(response.outputs[0].fp32.size(), 64u * 625u);
  EXPECT_EQ(response.outputs[0].fp32.back(), static_cast<float>(64 * 625 - 1) / 7.0f);
  EXPECT_TRUE(CheckInferOutput(response, "features", 64, false).ok());

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"outputs\":{}}", "outputs: expected an array, received an object"},
      {"{\"outputs\":[1]}", "outputs[0]: expected an object, received the number 1"},
      {"{\"outputs\":[{\"name\":null}]}", "outputs[0].name: expected a string, received null"},
      {"{\"outputs\":[{\"data\":5}]}", "outputs[0].data: expected an array, received the number 5"},
      {"{\"outputs\":[{\"data\":[[1],{}]}]}",
       "outputs[0].data: expected a float, received an object"},
      {"{\"outputs\":[{\"shape\":[\"2\"]}]}", "outputs[0].shape[0]: expected an integer"},
      {"{\"outputs\":[{\"parameters\":{\"binary_data_size\":-4}}]}",
       "outputs[0].parameters.binary_data_size: expected an integer >= 0, received -4"},
      {"{\"outputs\":[],\"outputs\":[]}", "response byte 14: expected each key once"},
  };
  for (const auto& [json, message] : cases) {
    const absl::Status status = DecodeInferResponse(json, -1, &response);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_THAT(status.message(), HasSubstr(message)) << json;
  }
  // Non-FP32 data is counted, not kept.
  ASSERT_TRUE(
      DecodeInferResponse("{\"outputs\":[{\"name\":\"c\",\"datatype\":\"INT64\",\"shape\":[3],"
                          "\"data\":[1,2,3]}]}",
                          -1, &response)
          .ok());
  EXPECT_EQ(response.outputs[0].elements, 3);
  EXPECT_TRUE(response.outputs[0].fp32.empty());
}

TEST(LoadgenRestCodecTest, DecodesABinaryResponse) {
  const std::string json =
      "{\"model_name\":\"rf\",\"model_version\":\"1\",\"outputs\":["
      "{\"name\":\"predicted_index\",\"datatype\":\"INT32\",\"shape\":[2],"
      "\"parameters\":{\"binary_data_size\":8}},"
      "{\"name\":\"predicted_class\",\"datatype\":\"BYTES\",\"shape\":[2],\"data\":[\"a\",\"b\"]},"
      "{\"name\":\"scores\",\"datatype\":\"FP32\",\"shape\":[2,2],"
      "\"parameters\":{\"binary_data_size\":16,\"other\":\"x\"}}]}";
  const std::string index_bytes("\x01\x00\x00\x00\x00\x00\x00\x00", 8);
  const std::vector<float> scores = {0.25f, -1.0f, 3.5f, 1e-30f};
  const std::string body = json + index_bytes + LittleEndian(scores);
  InferResponse response;
  const absl::Status status =
      DecodeInferResponse(body, static_cast<int64_t>(json.size()), &response);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(response.outputs.size(), 3u);
  EXPECT_TRUE(response.outputs[0].binary);
  EXPECT_EQ(response.outputs[0].elements, 2);
  EXPECT_FALSE(response.outputs[1].binary);
  EXPECT_TRUE(response.outputs[2].binary);
  EXPECT_THAT(response.outputs[2].fp32, ElementsAre(0.25f, -1.0f, 3.5f, 1e-30f));
  EXPECT_TRUE(CheckInferOutput(response, "scores", 2, true).ok());
  EXPECT_THAT(CheckInferOutput(response, "scores", 2, false).message(),
              HasSubstr("expected a JSON \"data\" array"));

  const int64_t n = static_cast<int64_t>(json.size());
  // Bytes missing, bytes left over, a header beyond the body.
  EXPECT_THAT(DecodeInferResponse(body.substr(0, body.size() - 1), n, &response).message(),
              HasSubstr("outputs[2].parameters.binary_data_size: expected at most the 15 bytes"));
  EXPECT_THAT(DecodeInferResponse(body + "x", n, &response).message(),
              HasSubstr(absl::StrCat("expected ", body.size(),
                                     " bytes (the JSON and the binary "
                                     "outputs), received ",
                                     body.size() + 1)));
  EXPECT_THAT(DecodeInferResponse(body, static_cast<int64_t>(body.size()) + 1, &response).message(),
              HasSubstr("Inference-Header-Content-Length: expected 0.."));
  // Without the header the whole body must be JSON.
  EXPECT_THAT(DecodeInferResponse(body, -1, &response).message(),
              HasSubstr("expected the end of the input after the value"));
  // An FP32 binary size that is not a whole number of floats.
  const std::string odd =
      "{\"outputs\":[{\"name\":\"scores\",\"datatype\":\"FP32\",\"shape\":[1,1],"
      "\"parameters\":{\"binary_data_size\":3}}]}";
  EXPECT_THAT(
      DecodeInferResponse(odd + "abc", static_cast<int64_t>(odd.size()), &response).message(),
      HasSubstr("expected a multiple of 4 for FP32, received 3"));
}

TEST(LoadgenRestCodecTest, MetadataGivesTheInputDimension) {
  const std::string metadata =
      "{\"name\":\"m\",\"versions\":[\"2\",\"1\"],\"platform\":\"invariant\",\"inputs\":["
      "{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[-1,28,28,1]}],\"outputs\":["
      "{\"name\":\"features\",\"datatype\":\"FP32\",\"shape\":[-1,625]}],"
      "\"properties\":{\"input_dim\":\"784\"}}";
  const auto dim = InputDimFromModelMetadata(metadata);
  ASSERT_TRUE(dim.ok()) << dim.status();
  EXPECT_EQ(*dim, 784);
  EXPECT_THAT(InputDimFromModelMetadata("{\"inputs\":[]}").status().message(),
              HasSubstr("expected an input"));
  EXPECT_THAT(InputDimFromModelMetadata("{\"inputs\":[{\"shape\":[-1]}]}").status().message(),
              HasSubstr("expected [-1, dims...]"));
  EXPECT_THAT(InputDimFromModelMetadata("{\"inputs\":[{\"shape\":[-1,0]}]}").status().message(),
              HasSubstr("expected positive dimensions"));
  EXPECT_THAT(InputDimFromModelMetadata("{\"inputs\":").status().message(),
              HasSubstr("model metadata byte 10: expected a value"));
  EXPECT_THAT(InputDimFromModelMetadata("{\"inputs\":[{\"shape\":[-1,\"2\"]}]}").status().message(),
              HasSubstr("inputs[0].shape[1]: expected an integer, received a string"));
}

TEST(LoadgenRestCodecTest, ErrorBodiesGiveTheirMessage) {
  EXPECT_EQ(ErrorMessageFromBody("{\"error\":\"no model named \\\"x\\\"\"}"),
            "no model named \"x\"");
  EXPECT_EQ(ErrorMessageFromBody("<html>oops</html>"), "<html>oops</html>");
  EXPECT_EQ(ErrorMessageFromBody(std::string(300, 'x')), std::string(200, 'x'));
}

TEST(LoadgenRestCodecTest, TransportErrorNamesAndEscaping) {
  EXPECT_EQ(TransportErrorName(absl::UnavailableError("CURLE_COULDNT_CONNECT: refused (url)")),
            "CURLE_COULDNT_CONNECT");
  EXPECT_EQ(EscapePathSegment("a b/é~._-"), "a%20b%2F%C3%A9~._-");
}

TEST(LoadgenRestReportTest, ReportsNameProtocolEncodingAndConnections) {
  LoadOptions o = ValidRest();
  o.rest_encoding = RestEncoding::kBinary;
  LoadReport r;
  r.requests_failed = 2;
  r.connections = 2;
  r.errors["HTTP_400"] = 2;
  r.error_messages["HTTP_400"] = "inputs[0]: \"data\" missing";
  const std::string json = ReportJson(r, o, "127.0.0.1:8501");
  const auto parsed = ParseJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << json;
  EXPECT_EQ(parsed->Find("protocol")->text(), "rest");
  EXPECT_EQ(parsed->Find("encoding")->text(), "binary");
  EXPECT_EQ(parsed->Find("connections")->text(), "2");
  EXPECT_EQ(parsed->Find("errors")->Find("HTTP_400")->text(), "2");
  EXPECT_EQ(parsed->Find("error_messages")->Find("HTTP_400")->text(),
            "inputs[0]: \"data\" missing");
  const std::string table = ReportTable(r, o, "127.0.0.1:8501");
  EXPECT_THAT(table, HasSubstr("protocol=rest encoding=binary"));
  EXPECT_THAT(table, HasSubstr("connections"));
  EXPECT_THAT(table, HasSubstr("first HTTP_400: inputs[0]"));
}

}  // namespace
}  // namespace invariant::loadgen
