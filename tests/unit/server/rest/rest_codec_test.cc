#include "server/rest/rest_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"
#include "core/base/random.h"
#include "server/rest/rest_infer_request.h"

namespace invariant::server {
namespace {

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// `values` as a JSON array, flat or nested as [rows, cols].
std::string DataJson(const std::vector<float>& values, int cols, bool nested) {
  std::vector<std::string> items;
  for (float v : values) items.push_back(JsonNumber(v));
  if (!nested) return absl::StrCat("[", absl::StrJoin(items, ","), "]");
  std::vector<std::string> rows;
  for (size_t r = 0; r < values.size() / cols; ++r) {
    rows.push_back(absl::StrCat(
        "[", absl::StrJoin(items.begin() + r * cols, items.begin() + (r + 1) * cols, ","), "]"));
  }
  return absl::StrCat("[", absl::StrJoin(rows, ","), "]");
}

std::string Body(const std::string& data, const std::string& shape = "[3, 4]") {
  return absl::StrCat(R"({"inputs": [{"name": "input", "datatype": "FP32", "shape": )", shape,
                      R"(, "data": )", data, "}]}");
}

std::string ErrorOf(const std::string& body) {
  absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(body, "m", "");
  EXPECT_FALSE(request.ok()) << body;
  if (request.ok()) return "";
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(request.status().message());
}

JsonValue ParseOrDie(const std::string& text) {
  absl::StatusOr<JsonValue> value = ParseJson(text);
  EXPECT_TRUE(value.ok()) << text << ": " << value.status();
  return value.ok() ? *std::move(value) : JsonValue();
}

TEST(RestCodecTest, FlatAndNestedDataGiveTheSameFloatsBitForBit) {
  Rng rng(3);
  std::vector<float> values(12);
  for (float& v : values) v = static_cast<float>(rng.Normal() * 1e3);
  values[0] = 1e-40f;  // subnormal
  values[1] = -0.0f;
  for (bool nested : {false, true}) {
    absl::StatusOr<inference::ModelInferRequest> request =
        InferRequestFromJson(Body(DataJson(values, 4, nested)), "clf", "2");
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(request->model_name(), "clf");
    EXPECT_EQ(request->model_version(), "2");
    ASSERT_EQ(request->inputs_size(), 1);
    const auto& input = request->inputs(0);
    EXPECT_EQ(input.name(), "input");
    EXPECT_EQ(input.datatype(), "FP32");
    EXPECT_EQ(std::vector<int64_t>(input.shape().begin(), input.shape().end()),
              (std::vector<int64_t>{3, 4}));
    ASSERT_EQ(input.contents().fp32_contents_size(), 12);
    for (int i = 0; i < 12; ++i) {
      EXPECT_EQ(Bits(input.contents().fp32_contents(i)), Bits(values[i])) << i;
    }
  }
}

TEST(RestCodecTest, ReadsIdParametersAndRequestedOutputs) {
  absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(
      R"({"id": "r-1", "parameters": {"b": true, "i": -7, "u": 18446744073709551615,
          "d": 0.5, "s": "x"},
          "inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 1], "data": [2],
                      "parameters": {"p": 1}}],
          "outputs": [{"name": "scores"}, {"name": "features", "parameters": {"q": false}}]})",
      "clf", "");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->id(), "r-1");
  const auto& p = request->parameters();
  EXPECT_TRUE(p.at("b").bool_param());
  EXPECT_EQ(p.at("i").int64_param(), -7);
  EXPECT_EQ(p.at("u").uint64_param(), 18446744073709551615ull);
  EXPECT_EQ(p.at("d").double_param(), 0.5);
  EXPECT_EQ(p.at("s").string_param(), "x");
  EXPECT_EQ(request->inputs(0).parameters().at("p").int64_param(), 1);
  ASSERT_EQ(request->outputs_size(), 2);
  EXPECT_EQ(request->outputs(0).name(), "scores");
  EXPECT_EQ(request->outputs(1).name(), "features");
  EXPECT_FALSE(request->outputs(1).parameters().at("q").bool_param());
}

TEST(RestCodecTest, OtherDatatypesArePassedOnWithoutContents) {
  absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(
      R"({"inputs": [{"name": "input", "datatype": "FP64", "shape": [1, 2], "data": [1, 2]}]})",
      "clf", "");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->inputs(0).datatype(), "FP64");
  EXPECT_FALSE(request->inputs(0).has_contents());
}

TEST(RestCodecTest, ManyTensorsAreRefusedAsTheyAreRead) {
  // Shapes announcing 10^9 floats each: what is reserved ahead is bounded by
  // one budget for the body, however many inputs announce it.
  std::string inputs;
  for (int i = 0; i < 64; ++i) {
    absl::StrAppend(&inputs, i ? "," : "",
                    R"({"name":"a","datatype":"FP32","shape":[1000000000],"data":[]})");
  }
  absl::StatusOr<inference::ModelInferRequest> request =
      InferRequestFromJson(absl::StrCat(R"({"inputs":[)", inputs, "]}"), "clf", "");
  ASSERT_TRUE(request.ok()) << request.status();
  size_t reserved = 0;
  for (const auto& input : request->inputs()) {
    reserved += static_cast<size_t>(input.contents().fp32_contents().Capacity());
  }
  EXPECT_LE(reserved, 64 * 64 + 64 * 8);  // about the body's size / 2, not 64 × 10^9
  EXPECT_EQ(ErrorOf(absl::StrCat(R"({"inputs":[)", inputs,
                                 R"(,{"name":"a","datatype":"FP32","shape":[1],"data":[1]}]})")),
            "inputs: expected at most 64 tensors, received more");
  std::string outputs;
  for (int i = 0; i < 65; ++i) absl::StrAppend(&outputs, i ? "," : "", R"({"name":"x"})");
  EXPECT_EQ(ErrorOf(absl::StrCat(R"({"inputs":[],"outputs":[)", outputs, "]}")),
            "outputs: expected at most 64 tensors, received more");
}

TEST(RestCodecTest, ErrorsNameTheMember) {
  EXPECT_EQ(ErrorOf("{\"inputs\": [}"),
            "request body: byte 12: expected a value (object, array, string, number, true, false "
            "or null), received '}'");
  EXPECT_EQ(ErrorOf("[]"), "request body: expected a JSON object, received an array");
  EXPECT_EQ(ErrorOf("\"x\""), "request body: expected a JSON object, received a string");
  // Not JSON at all says so before "not an object".
  EXPECT_EQ(ErrorOf("[1, {\"a\": 1, \"a\": 2}]"),
            "request body: byte 13: expected each key once in an object, received \"a\" again");
  EXPECT_EQ(ErrorOf(std::string(100000, '[')),
            "request body: byte 64: expected at most 64 levels of nesting, received '['");
  EXPECT_EQ(ErrorOf("{\"input\": []}"),
            "request body: expected only the members id, parameters, inputs, outputs, received "
            "unknown member \"input\"");
  EXPECT_EQ(ErrorOf("{}"), "inputs: expected an array of input tensors, received nothing");
  EXPECT_EQ(ErrorOf("{\"inputs\": {}}"),
            "inputs: expected an array of input tensors, received an object");
  EXPECT_EQ(ErrorOf("{\"inputs\": [1]}"), "inputs[0]: expected an object, received a number");
  EXPECT_EQ(ErrorOf(R"({"inputs": [{"name": "input", "datatype": "FP32", "data": []}]})"),
            "inputs[0].shape: expected an array of integers, received nothing");
  EXPECT_EQ(ErrorOf(R"({"inputs": [{"datatype": "FP32", "shape": [1], "data": []}]})"),
            "inputs[0].name: expected a string, received nothing");
  EXPECT_EQ(ErrorOf(R"({"inputs": [{"name": 3, "datatype": "FP32", "shape": [1], "data": []}]})"),
            "inputs[0].name: expected a string, received a number");
  EXPECT_EQ(ErrorOf(R"({"inputs": [{"name": "input", "shape": [1], "data": []}]})"),
            "inputs[0].datatype: expected a string, received nothing");
  EXPECT_EQ(ErrorOf(R"({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1]}]})"),
            "inputs[0].data: expected an array, received nothing");
  EXPECT_EQ(ErrorOf(Body("[1]", "[1, 2.5]")),
            "inputs[0].shape[1]: expected an integer, received 2.5");
  EXPECT_EQ(ErrorOf(Body("[1]", "[1, \"4\"]")),
            "inputs[0].shape[1]: expected an integer, received a string");
  EXPECT_EQ(ErrorOf(Body("{}")), "inputs[0].data: expected an array, received an object");
  EXPECT_EQ(ErrorOf(Body("[1, \"2\", 3]")),
            "inputs[0].data[1]: expected a number, received a string");
  EXPECT_EQ(ErrorOf(Body("[1, null]")), "inputs[0].data[1]: expected a number, received null");
  EXPECT_EQ(ErrorOf(Body("[1, 1e39]")),
            "inputs[0].data[1]: expected a finite FP32 value, received 1e39");
  EXPECT_EQ(ErrorOf(Body("[1, [2]]")), "inputs[0].data[1]: expected a number, received an array");
  EXPECT_EQ(ErrorOf(Body("[[1,2,3,4],[1,2,3,4]]")),
            "inputs[0].data: expected 3 items (dimension 0 of the shape [3, 4]), received 2");
  EXPECT_EQ(ErrorOf(Body("[[1,2,3,4],[1,2,3],[1,2,3,4]]")),
            "inputs[0].data[1]: expected 4 items (dimension 1 of the shape [3, 4]), received 3");
  EXPECT_EQ(ErrorOf(Body("[[1,2,3,4],[1,2,3,[4]],[1,2,3,4]]")),
            "inputs[0].data[1][3]: expected a number, received an array");
  EXPECT_EQ(ErrorOf(Body("[[1,2,3,4],5,[1,2,3,4]]")),
            "inputs[0].data[1]: expected an array nested as the shape [3, 4], received a number");
  EXPECT_EQ(ErrorOf(Body("[[1]]", "[]")),
            "inputs[0].data: expected flat data for the shape [], received nested arrays");
  EXPECT_EQ(ErrorOf(R"({"id": 5, "inputs": []})"), "id: expected a string, received a number");
  EXPECT_EQ(ErrorOf(R"({"parameters": {"a": []}, "inputs": []})"),
            "parameters.a: expected a boolean, a number or a string, received an array");
  // Beyond the double range is a syntax error of the reader (RapidJSON).
  EXPECT_EQ(ErrorOf(R"({"parameters": {"a": 1e999}, "inputs": []})"),
            "request body: byte 21: expected a number within the range of a double, received '1'");
  EXPECT_EQ(ErrorOf(R"({"inputs": [], "outputs": [{"name": "x", "binary_data": true}]})"),
            "outputs[0]: expected only the members name, parameters, received unknown member "
            "\"binary_data\"");
  EXPECT_EQ(ErrorOf(R"({"inputs": [], "outputs": [{}]})"),
            "outputs[0].name: expected a string, received nothing");
  EXPECT_EQ(ErrorOf(R"({"inputs": [], "outputs": {}})"),
            "outputs: expected an array, received an object");
}

// Every strictness rule of the reader holds on the infer path, with the
// byte offset in the body.
TEST(RestCodecTest, StrictJsonOnTheInferPath) {
  // "request body: byte N: " + the rest, N the offset of `at` in `body`.
  const auto at = [](const std::string& body, const std::string& what, size_t skip = 0) {
    return absl::StrCat("request body: byte ", body.find(what) + skip, ": ");
  };
  std::string body = R"({"inputs": [], "inputs": []})";
  EXPECT_EQ(ErrorOf(body), at(body, "\"inputs\": []}") +
                               "expected each key once in an object, received \"inputs\" again");
  body =
      R"({"inputs": [{"name": "input", "name": "x", "datatype": "FP32", "shape": [1], "data": [1]}]})";
  EXPECT_EQ(ErrorOf(body), at(body, "\"name\": \"x\"") +
                               "expected each key once in an object, received \"name\" again");
  body = R"({"inputs": [], "parameters": {"a": 1, "a": 2}})";
  EXPECT_EQ(ErrorOf(body),
            at(body, "\"a\": 2") + "expected each key once in an object, received \"a\" again");
  for (const std::string literal : {"NaN", "Infinity", "-Infinity", "nan"}) {
    body = Body("[1, " + literal + "]", "[2]");
    const size_t skip = literal[0] == '-' ? 1 : 0;  // RapidJSON fails after the '-'
    EXPECT_EQ(ErrorOf(body), at(body, literal, skip) +
                                 "expected a value (object, array, string, number, true, false "
                                 "or null), received '" +
                                 literal.substr(skip, 1) + "'");
  }
  body = Body("[1, 01]", "[2]");
  EXPECT_EQ(ErrorOf(body), at(body, "01]", 1) +
                               "expected '.', 'e' or the end of the number after a leading 0, "
                               "received '1'");
  body = Body("[1, +1]", "[2]");
  EXPECT_TRUE(absl::StartsWith(ErrorOf(body), at(body, "+1") + "expected a value ("));
  body = "{\"id\": \"\xc3\x28\", \"inputs\": []}";
  EXPECT_EQ(ErrorOf(body),
            at(body, "\xc3") + "expected valid UTF-8 in a string, received byte 0xc3");
  body = "{\"id\": \"\\udc00\", \"inputs\": []}";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(body),
                               at(body, "\"\\udc00") + "expected a string of valid UTF-8 ("));
  body = "{\"id\": \"a\"} x";
  EXPECT_EQ(ErrorOf(body),
            at(body, "x") + "expected the end of the input after the value, received 'x'");
  // Depth: nesting deeper than the reader's limit (64) is refused by the
  // reader, wherever it is (here in data that is otherwise passed over; the
  // root, "inputs" and the input are 3 levels, so the 62nd '[' is refused).
  const std::string deep = std::string(100, '[') + "1" + std::string(100, ']');
  body = R"({"inputs": [{"name": "i", "datatype": "BYTES", "shape": [1], "data": )" + deep + "}]}";
  EXPECT_EQ(ErrorOf(body),
            at(body, "[[[", 61) + "expected at most 64 levels of nesting, received '['");
}

// A number literal, a member name or a shape quoted in an error is bounded,
// whatever the body holds (an 8 MiB literal used to come back whole).
TEST(RestCodecTest, QuotedClientTextIsBounded) {
  // Beyond the double range: RapidJSON refuses it, quoting one byte.
  const std::string huge = "1" + std::string(8 << 20, '0') + ".5";
  std::string body = Body("[1, " + huge + "]", "[2]");
  EXPECT_EQ(ErrorOf(body), absl::StrCat("request body: byte ", body.find(huge),
                                        ": expected a number within the range of a double, "
                                        "received '1'"));
  // Beyond the float range: the literal is quoted, cut at 64 bytes.
  const std::string literal = "1." + std::string(8 << 20, '1') + "e39";
  EXPECT_EQ(ErrorOf(Body("[" + literal + "]", "[1]")),
            absl::StrCat("inputs[0].data[0]: expected a finite FP32 value, received ",
                         literal.substr(0, 64), "...(", literal.size(), " bytes)"));
  const std::string shape_literal = "1." + std::string(1000, '5');
  EXPECT_EQ(ErrorOf(Body("[1]", "[" + shape_literal + "]")),
            absl::StrCat("inputs[0].shape[0]: expected an integer, received ",
                         shape_literal.substr(0, 64), "...(1002 bytes)"));
  const std::string key(1 << 20, 'k');
  EXPECT_EQ(ErrorOf(absl::StrCat("{\"", key, "\": 1}")),
            absl::StrCat("request body: expected only the members id, parameters, inputs, "
                         "outputs, received unknown member \"",
                         std::string(64, 'k'), "...(1048576 bytes)\""));
  EXPECT_EQ(ErrorOf(absl::StrCat("{\"parameters\": {\"", key, "\": []}, \"inputs\": []}")),
            absl::StrCat("parameters.", std::string(64, 'k'),
                         "...(1048576 bytes): expected a boolean, a number or a string, received "
                         "an array"));
  const std::string shape = "[" + absl::StrJoin(std::vector<int>(1000, 2), ",") + "]";
  EXPECT_EQ(ErrorOf(Body("[[1]]", shape)),
            "inputs[0].data[0][0]: expected an array nested as the shape [2, 2, 2, 2, 2, 2, 2, 2, "
            "...] (1000 dimensions), received a number");
}

// The 160,000-key body of issue 21 (20 s of CPU with the quadratic check):
// read, with every key, in one linear pass; one repeated key refuses it. No
// timing assertion; a quadratic check would make this test crawl.
TEST(RestCodecTest, ManyKeysAreReadInLinearTime) {
  std::string parameters;
  for (int i = 0; i < 160000; ++i) absl::StrAppend(&parameters, i ? "," : "", "\"k", i, "\":", i);
  const std::string inputs =
      R"("inputs": [{"name": "input", "datatype": "FP32", "shape": [1], "data": [1]}])";
  absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(
      absl::StrCat("{\"parameters\": {", parameters, "}, ", inputs, "}"), "m", "");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->parameters().size(), 160000u);
  EXPECT_EQ(request->parameters().at("k159999").int64_param(), 159999);
  const std::string repeated =
      absl::StrCat("{\"parameters\": {", parameters, ",\"k7\": 0}, ", inputs, "}");
  EXPECT_EQ(ErrorOf(repeated), absl::StrCat("request body: byte ", parameters.size() + 17,
                                            ": expected each key once in an object, received "
                                            "\"k7\" again"));
  // The same keys at the top level: refused at the first one.
  EXPECT_EQ(ErrorOf("{" + parameters + "}"),
            "request body: expected only the members id, parameters, inputs, outputs, received "
            "unknown member \"k0\"");
}

// Members in any order: data before shape and datatype is read the same,
// its nesting checked against the shape once known.
TEST(RestCodecTest, MembersInAnyOrder) {
  absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(
      R"({"outputs": [{"name": "scores"}], "inputs": [{"data": [[1, 2], [3, 4.5]],
          "shape": [2, 2], "datatype": "FP32", "name": "input"}], "id": "x"})",
      "m", "");
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ(request->inputs(0).contents().fp32_contents_size(), 4);
  EXPECT_EQ(request->inputs(0).contents().fp32_contents(3), 4.5f);
  EXPECT_EQ(request->id(), "x");
  EXPECT_EQ(
      ErrorOf(
          R"({"inputs": [{"data": [[1, 2], [3, 4]], "shape": [2, 3], "datatype": "FP32", "name": "i"}]})"),
      "inputs[0].data: expected an array nested as the shape [2, 3], received one nested as [2, "
      "2]");
  EXPECT_EQ(
      ErrorOf(
          R"({"inputs": [{"data": [[1, 2], [3]], "shape": [2, 2], "datatype": "FP32", "name": "i"}]})"),
      "inputs[0].data[1]: expected 2 items (as the first array at this depth), received 1");
  EXPECT_EQ(
      ErrorOf(
          R"({"inputs": [{"data": [[[1]], [2]], "shape": [2, 1, 1], "datatype": "FP32", "name": "i"}]})"),
      "inputs[0].data[1][0]: expected an array nested like the first item, received a number");
  EXPECT_EQ(
      ErrorOf(R"({"inputs": [{"data": [1, "2"], "shape": [2], "datatype": "FP32", "name": "i"}]})"),
      "inputs[0].data[1]: expected a number, received a string");
  // Not a datatype the server reads (FP32, INT16, INT32, INT64) once the
  // datatype is known: the data (any JSON) is passed over.
  request = InferRequestFromJson(
      R"({"inputs": [{"data": ["a", {"b": [1]}], "shape": [2], "datatype": "BYTES", "name": "i"},
                     {"name": "j", "datatype": "BOOL", "shape": [1], "data": [{"x": 1}]}]})",
      "m", "");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_FALSE(request->inputs(0).has_contents());
  EXPECT_FALSE(request->inputs(1).has_contents());
}

inference::ModelInferResponse TypedResponse(const std::vector<float>& features) {
  inference::ModelInferResponse response;
  response.set_model_name("clf");
  response.set_model_version("2");
  response.set_id("q\"1");
  auto* f = response.add_outputs();
  f->set_name("features");
  f->set_datatype("FP32");
  f->add_shape(2);
  f->add_shape(2);
  for (float v : features) f->mutable_contents()->add_fp32_contents(v);
  auto* c = response.add_outputs();
  c->set_name("predicted_class");
  c->set_datatype("BYTES");
  c->add_shape(2);
  c->mutable_contents()->add_bytes_contents("cat");
  c->mutable_contents()->add_bytes_contents("d\"og");
  auto* i = response.add_outputs();
  i->set_name("predicted_index");
  i->set_datatype("INT32");
  i->add_shape(2);
  i->mutable_contents()->add_int_contents(0);
  i->mutable_contents()->add_int_contents(-2);
  return response;
}

// Seeded mutations of a valid body (byte flips, insertions of JSON's
// structural characters, truncations): the codec answers each with a request
// or INVALID_ARGUMENT, never anything else and never a crash.
TEST(RestCodecTest, MutatedBodiesAreRequestsOrInvalidArgument) {
  const std::string valid = absl::StrCat(
      R"({"id":"m","parameters":{"p":1.5},"outputs":[{"name":"scores"}],)",
      R"("inputs":[{"name":"input","datatype":"FP32","shape":[2,2],"data":[[1,-2e3],[0.5,0.25]]}]})");
  const std::string alphabet = "{}[]\",:0123456789-+.eE \\ntfu\x80\xff";
  Rng rng(11);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body = valid;
    const int edits = 1 + static_cast<int>(rng.NextU64() % 4);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const size_t at = rng.NextU64() % body.size();
      const char c = alphabet[rng.NextU64() % alphabet.size()];
      switch (rng.NextU64() % 4) {
        case 0:
          body[at] = c;
          break;
        case 1:
          body.insert(at, 1, c);
          break;
        case 2:
          body.erase(at, 1);
          break;
        default:
          body.resize(at);
      }
    }
    absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(body, "m", "");
    if (request.ok()) {
      ++parsed;
    } else {
      ASSERT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument) << body;
    }
  }
  // Both outcomes occur: the mutations reach the error paths and some keep a valid body.
  EXPECT_GT(parsed, 0);
  EXPECT_LT(parsed, 20000);
}

TEST(RestCodecTest, InferResponseAsJsonReadsBackBitForBit) {
  const std::vector<float> features = {0.1f, -1e-40f, 3.4028235e38f, 123456.7f};
  const std::string json = InferResponseToJson(TypedResponse(features));
  const JsonValue v = ParseOrDie(json);
  EXPECT_EQ(v.Find("model_name")->text(), "clf");
  EXPECT_EQ(v.Find("model_version")->text(), "2");
  EXPECT_EQ(v.Find("id")->text(), "q\"1");
  EXPECT_EQ(v.Find("parameters"), nullptr);
  const auto& outputs = v.Find("outputs")->items();
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].Find("name")->text(), "features");
  EXPECT_EQ(outputs[0].Find("datatype")->text(), "FP32");
  ASSERT_EQ(outputs[0].Find("shape")->items().size(), 2u);
  const auto& data = outputs[0].Find("data")->items();
  ASSERT_EQ(data.size(), features.size());
  for (size_t k = 0; k < features.size(); ++k) {
    float back;
    ASSERT_TRUE(data[k].NumberAsFloat(&back));
    EXPECT_EQ(Bits(back), Bits(features[k])) << data[k].text();
  }
  EXPECT_EQ(outputs[1].Find("data")->items()[1].text(), "d\"og");
  int64_t index;
  ASSERT_TRUE(outputs[2].Find("data")->items()[1].NumberAsInt64(&index));
  EXPECT_EQ(index, -2);
}

TEST(RestCodecTest, RawOutputsGiveTheSameJsonAsTypedOnes) {
  const std::vector<float> features = {1.5f, -2.25f, 0.0f, 7.0f};
  const inference::ModelInferResponse typed = TypedResponse(features);
  inference::ModelInferResponse raw = typed;
  std::string bytes(features.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), features.data(), bytes.size());
  raw.add_raw_output_contents(bytes);
  raw.add_raw_output_contents(std::string("\x03\0\0\0cat\x04\0\0\0d\"og", 15));
  const int32_t indices[] = {0, -2};
  raw.add_raw_output_contents(std::string(reinterpret_cast<const char*>(indices), sizeof(indices)));
  for (int i = 0; i < 3; ++i) raw.mutable_outputs(i)->clear_contents();
  EXPECT_EQ(InferResponseToJson(raw), InferResponseToJson(typed));
}

TEST(RestCodecTest, ResponseParametersAreWritten) {
  inference::ModelInferResponse response;
  (*response.mutable_parameters())["n"].set_int64_param(3);
  (*response.mutable_parameters())["a"].set_string_param("x");
  EXPECT_EQ(InferResponseToJson(response),
            R"({"model_name":"","model_version":"","id":"","parameters":{"a":"x","n":3},)"
            R"("outputs":[]})");
}

TEST(RestCodecTest, MetadataAndErrorsAsJson) {
  inference::ServerMetadataResponse server;
  server.set_name("invariant-server");
  server.set_version("1.2.3");
  EXPECT_EQ(ServerMetadataToJson(server),
            R"({"name":"invariant-server","version":"1.2.3","extensions":[]})");

  inference::ModelMetadataResponse model;
  model.set_name("clf");
  model.add_versions("2");
  model.add_versions("1");
  model.set_platform("invariant");
  auto* input = model.add_inputs();
  input->set_name("input");
  input->set_datatype("FP32");
  input->add_shape(-1);
  input->add_shape(16);
  (*model.mutable_properties())["task"] = "classification";
  (*model.mutable_properties())["class_names"] = R"(["a","b"])";
  EXPECT_EQ(ModelMetadataToJson(model),
            R"({"name":"clf","versions":["2","1"],"platform":"invariant",)"
            R"("inputs":[{"name":"input","datatype":"FP32","shape":[-1,16]}],"outputs":[],)"
            R"("properties":{"class_names":"[\"a\",\"b\"]","task":"classification"}})");

  EXPECT_EQ(ErrorToJson("model_name: no model named 'x\"'"),
            R"({"error":"model_name: no model named 'x\"'"})");
}

}  // namespace
}  // namespace invariant::server
