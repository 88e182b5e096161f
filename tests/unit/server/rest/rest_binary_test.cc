// The binary tensor data extension of rest_codec.h: requests whose body is a
// JSON header + raw tensors (Inference-Header-Content-Length), every check on
// them, and responses with binary outputs.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "server/rest/rest_codec.h"
#include "server/rest/rest_infer_request.h"

namespace invariant::server {
namespace {

std::string Bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// A body of `json` followed by `binary`, read with the header set to the
// JSON's length (or to `header` when given).
absl::StatusOr<inference::ModelInferRequest> Read(const std::string& json,
                                                  const std::string& binary,
                                                  const std::string* header = nullptr) {
  const std::string length = std::to_string(json.size());
  return InferRequestFromHttp(json + binary, header != nullptr ? header : &length, "m", "");
}

std::string ErrorOf(const std::string& json, const std::string& binary,
                    const std::string* header = nullptr) {
  absl::StatusOr<inference::ModelInferRequest> request = Read(json, binary, header);
  EXPECT_FALSE(request.ok()) << json;
  if (request.ok()) return "";
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(request.status().message());
}

std::string Input(const std::string& name, const std::string& datatype, const std::string& shape,
                  const std::string& size) {
  return absl::StrCat(R"({"name": ")", name, R"(", "datatype": ")", datatype, R"(", "shape": )",
                      shape, R"(, "parameters": {"binary_data_size": )", size, "}}");
}

std::string Json(const std::string& inputs) {
  return absl::StrCat(R"({"inputs": [)", inputs, "]}");
}

TEST(RestBinaryTest, BinaryInputsAreSlicedInOrderBitForBit) {
  const std::vector<float> a = {1.5f, -0.0f, 1e-40f, 3.4028235e38f, 0.1f, -7.0f};
  const std::vector<float> b = {42.0f};
  const std::string bytes_tensor("\x02\0\0\0hi", 6);
  const std::string json = Json(
      absl::StrCat(Input("a", "FP32", "[2, 3]", "24"), ",", Input("s", "BYTES", "[1]", "6"), ",",
                   R"({"name": "j", "datatype": "FP32", "shape": [2], "data": [0.5, 2]},)",
                   Input("b", "FP32", "[1, 1]", "4")));
  absl::StatusOr<inference::ModelInferRequest> request =
      Read(json, Bytes(a) + bytes_tensor + Bytes(b));
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ(request->inputs_size(), 4);
  const auto& got_a = request->inputs(0).contents().fp32_contents();
  ASSERT_EQ(got_a.size(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Bits(got_a[i]), Bits(a[i])) << i;
  // BYTES: each element a 4-byte little-endian length and its bytes.
  ASSERT_EQ(request->inputs(1).contents().bytes_contents_size(), 1);
  EXPECT_EQ(request->inputs(1).contents().bytes_contents(0), "hi");
  EXPECT_EQ(request->inputs(2).contents().fp32_contents_size(), 2);
  ASSERT_EQ(request->inputs(3).contents().fp32_contents_size(), 1);
  EXPECT_EQ(request->inputs(3).contents().fp32_contents(0), 42.0f);
  EXPECT_EQ(request->inputs(0).parameters().at("binary_data_size").int64_param(), 24);
}

TEST(RestBinaryTest, TheHeaderIsADecimalByteCountWithinTheBody) {
  const std::string json = Json(Input("a", "FP32", "[1]", "4"));
  const std::string binary = Bytes({2.0f});
  const std::string padded = absl::StrCat(" \t", json.size(), " ");
  ASSERT_TRUE(Read(json, binary, &padded).ok());
  // The header may span the whole body: all JSON, no binary part.
  const std::string plain =
      R"({"inputs": [{"name": "a", "datatype": "FP32", "shape": [1], "data": [1]}]})";
  const std::string all = std::to_string(plain.size());
  absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromHttp(plain, &all, "m", "");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->inputs(0).contents().fp32_contents_size(), 1);
  const size_t body = json.size() + binary.size();
  for (const std::string& bad :
       std::vector<std::string>{"abc", "-1", "+5", "1e3", "", " ", "0x10", "12 3",
                                "99999999999999999999999", std::to_string(body + 1)}) {
    EXPECT_EQ(ErrorOf(json, binary, &bad),
              absl::StrCat("Inference-Header-Content-Length: expected a decimal byte count of at "
                           "most ",
                           body, " (the body's size), received \"", bad, "\""))
        << bad;
  }
  const std::string long_value(10000, '7');
  EXPECT_EQ(ErrorOf(json, binary, &long_value),
            absl::StrCat("Inference-Header-Content-Length: expected a decimal byte count of at "
                         "most ",
                         body, " (the body's size), received \"", std::string(64, '7'),
                         "...(10000 bytes)\""));
  const std::string zero = "0";
  EXPECT_EQ(ErrorOf(json, binary, &zero),
            "request body: byte 0: expected a value, received the end of the input");
}

TEST(RestBinaryTest, EveryBinaryCheckNamesItsField) {
  const std::string four = Bytes({1.0f});
  EXPECT_EQ(ErrorOf(Json(Input("a", "FP32", "[2, 3]", "20")), std::string(20, '\0')),
            "inputs[0].parameters.binary_data_size: expected 24 (shape [2, 3] × 4 bytes of FP32), "
            "received 20");
  EXPECT_EQ(ErrorOf(Json(Input("a", "INT32", "[3]", "8")), std::string(8, '\0')),
            "inputs[0].parameters.binary_data_size: expected 12 (shape [3] × 4 bytes of INT32), "
            "received 8");
  for (const std::string bad : {"-4", "4.0", "\"4\"", "true", "1e2", "18446744073709551615"}) {
    const std::string received = bad == "\"4\"" ? "a string" : bad == "true" ? "a boolean" : bad;
    EXPECT_EQ(ErrorOf(Json(Input("a", "FP32", "[1]", bad)), four),
              absl::StrCat("inputs[0].parameters.binary_data_size: expected a non-negative "
                           "integer (bytes), received ",
                           received))
        << bad;
  }
  EXPECT_EQ(
      ErrorOf(R"({"inputs": [{"name": "a", "datatype": "FP32", "shape": [1], "data": [1],
                  "parameters": {"binary_data_size": 4}}]})",
              four),
      "inputs[0].data: expected no data for a binary input (parameters.binary_data_size is set), "
      "received an array");
  EXPECT_EQ(ErrorOf(Json(Input("a", "FP32", "[1]", "4")), four + "x"),
            absl::StrCat("request body: expected 4 bytes of binary tensor data after the JSON (the "
                         "sum of the inputs' parameters.binary_data_size), received 5 bytes after "
                         "the ",
                         Json(Input("a", "FP32", "[1]", "4")).size(),
                         "-byte JSON (Inference-Header-Content-Length)"));
  EXPECT_EQ(ErrorOf(Json(absl::StrCat(Input("a", "FP32", "[1]", "4"), ",",
                                      Input("b", "FP32", "[2]", "8"))),
                    four + "abcd"),
            "inputs[1].parameters.binary_data_size: expected at most 4 (the binary bytes after the "
            "JSON not taken by earlier inputs), received 8");
  EXPECT_EQ(
      ErrorOf(Json(Input("a", "FP32", "[2, -3]", "24")), std::string(24, '\0')),
      "inputs[0].shape: expected non-negative dimensions for a binary input, received [2, -3]");
  EXPECT_EQ(
      ErrorOf(Json(Input("a", "FP32", "[4294967296, 4294967296, 2]", "8")), std::string(8, '\0')),
      "inputs[0].parameters.binary_data_size: expected more than 2^64 (shape [4294967296, "
      "4294967296, 2] × 4 bytes of FP32), received 8");
  // Without the header the body is all JSON: a binary input cannot be.
  absl::StatusOr<inference::ModelInferRequest> no_header =
      InferRequestFromHttp(Json(Input("a", "FP32", "[1]", "4")), nullptr, "m", "");
  EXPECT_EQ(no_header.status().message(),
            "inputs[0].parameters.binary_data_size: expected no binary input without the header "
            "Inference-Header-Content-Length, received 4");
  EXPECT_EQ(
      ErrorOf(R"({"inputs": [], "outputs": [{"name": "x", "parameters": {"binary_data": "yes"}}]})",
              ""),
      "outputs[0].parameters.binary_data: expected a boolean, received a string");
  EXPECT_EQ(ErrorOf(R"({"parameters": {"binary_data_output": 1}, "inputs": []})", ""),
            "parameters.binary_data_output: expected a boolean, received a number");
  // Unknown datatypes take any size; the shared validation refuses the
  // datatype later. BYTES elements must fill their bytes exactly.
  ASSERT_TRUE(Read(Json(Input("s", "STRING", "[5]", "3")), "abc").ok());
  EXPECT_EQ(ErrorOf(Json(Input("s", "BYTES", "[5]", "3")), "abc"),
            "inputs[0].parameters.binary_data_size: expected at least 4 bytes (a length) for each "
            "of the 5 BYTES elements of shape [5], received 3");
  EXPECT_EQ(ErrorOf(Json(Input("s", "BYTES", "[1]", "6")), std::string("\x05\0\0\0hi", 6)),
            "inputs[0].parameters.binary_data_size: expected BYTES element 0 of 5 bytes (its "
            "length prefix) within the data, received 2 bytes left of 6");
  EXPECT_EQ(ErrorOf(Json(Input("s", "BYTES", "[1]", "7")), std::string("\x01\0\0\0hij", 7)),
            "inputs[0].parameters.binary_data_size: expected 5 bytes (1 BYTES elements of shape "
            "[1]), received 7");
  // Empty elements are 4 bytes each: 65,537 of them are refused by their
  // count before any is made into a string.
  const std::string empty_elements(4 * 65537, '\0');
  EXPECT_EQ(ErrorOf(Json(Input("s", "BYTES", "[65537]", std::to_string(empty_elements.size()))),
                    empty_elements),
            "inputs[0].shape: expected at most 65536 BYTES elements, received [65537]");
  ASSERT_TRUE(Read(Json(Input("s", "BYTES", "[65536]", std::to_string(4 * 65536))),
                   std::string(4 * 65536, '\0'))
                  .ok());
}

inference::ModelInferResponse Response() {
  inference::ModelInferResponse response;
  response.set_model_name("clf");
  response.set_id("r");
  auto* features = response.add_outputs();
  features->set_name("features");
  features->set_datatype("FP32");
  features->add_shape(1);
  features->add_shape(2);
  features->mutable_contents()->add_fp32_contents(0.1f);
  features->mutable_contents()->add_fp32_contents(-2.0f);
  auto* cls = response.add_outputs();
  cls->set_name("predicted_class");
  cls->set_datatype("BYTES");
  cls->add_shape(1);
  cls->mutable_contents()->add_bytes_contents("cat");
  auto* index = response.add_outputs();
  index->set_name("predicted_index");
  index->set_datatype("INT32");
  index->add_shape(1);
  index->mutable_contents()->add_int_contents(-2);
  (*index->mutable_parameters())["note"].set_string_param("x");
  return response;
}

TEST(RestBinaryTest, OutputsAskedForInBinaryFollowTheJson) {
  absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(
      R"({"parameters": {"binary_data_output": true}, "inputs": [],
          "outputs": [{"name": "features"}, {"name": "predicted_class", "parameters": {"binary_data": false}},
                      {"name": "predicted_index"}]})",
      "m", "");
  ASSERT_TRUE(request.ok()) << request.status();
  const RestBody body = InferResponseToHttp(Response(), *request);
  ASSERT_TRUE(body.json_size.has_value());
  const std::string json = body.body.substr(0, *body.json_size);
  EXPECT_EQ(
      json,
      R"({"model_name":"clf","model_version":"","id":"r","outputs":[)"
      R"({"name":"features","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}},)"
      R"({"name":"predicted_class","datatype":"BYTES","shape":[1],"data":["cat"]},)"
      R"({"name":"predicted_index","datatype":"INT32","shape":[1],)"
      R"("parameters":{"binary_data_size":4,"note":"x"}}]})");
  const int32_t minus_two = -2;
  EXPECT_EQ(body.body.substr(*body.json_size),
            Bytes({0.1f, -2.0f}) +
                std::string(reinterpret_cast<const char*>(&minus_two), sizeof(minus_two)));
  EXPECT_TRUE(ParseJson(json).ok());

  // Raw contents are already in the binary layout; BYTES as length + bytes.
  inference::ModelInferResponse raw = Response();
  raw.add_raw_output_contents(Bytes({0.1f, -2.0f}));
  raw.add_raw_output_contents(std::string("\x03\0\0\0cat", 7));
  raw.add_raw_output_contents(std::string(reinterpret_cast<const char*>(&minus_two), 4));
  for (int i = 0; i < 3; ++i) raw.mutable_outputs(i)->clear_contents();
  inference::ModelInferRequest all;
  (*all.mutable_parameters())["binary_data_output"].set_bool_param(true);
  inference::ModelInferRequest typed_all = all;
  const RestBody from_raw = InferResponseToHttp(raw, all);
  const RestBody from_typed = InferResponseToHttp(Response(), typed_all);
  EXPECT_EQ(from_raw.body, from_typed.body);
  EXPECT_EQ(from_raw.json_size, from_typed.json_size);
  EXPECT_EQ(from_typed.body.substr(*from_typed.json_size),
            Bytes({0.1f, -2.0f}) + std::string("\x03\0\0\0cat", 7) +
                std::string(reinterpret_cast<const char*>(&minus_two), 4));

  // Nothing asked in binary: all JSON, no header.
  const RestBody plain = InferResponseToHttp(Response(), inference::ModelInferRequest());
  EXPECT_FALSE(plain.json_size.has_value());
  EXPECT_EQ(plain.body, InferResponseToJson(Response()));
}

// A binary request answered in binary gives back the very bytes it sent.
TEST(RestBinaryTest, BinaryRoundTrip) {
  const std::vector<float> values = {3.0f, -1e-45f, 65504.0f, 0.3f};
  const std::string json =
      absl::StrCat(R"({"inputs": [)", Input("input", "FP32", "[2, 2]", "16"),
                   R"(], "outputs": [{"name": "features", "parameters": {"binary_data": true}}]})");
  absl::StatusOr<inference::ModelInferRequest> request = Read(json, Bytes(values));
  ASSERT_TRUE(request.ok()) << request.status();
  inference::ModelInferResponse response;
  auto* out = response.add_outputs();
  out->set_name("features");
  out->set_datatype("FP32");
  *out->mutable_shape() = request->inputs(0).shape();
  *out->mutable_contents() = request->inputs(0).contents();
  const RestBody body = InferResponseToHttp(response, *request);
  ASSERT_TRUE(body.json_size.has_value());
  EXPECT_EQ(body.body.substr(*body.json_size), Bytes(values));
}

}  // namespace
}  // namespace invariant::server
