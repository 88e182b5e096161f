// rest_request_fuzz.cc: libFuzzer target for the REST infer body
// (server/rest/rest_infer_request.h: InferRequestFromHttp, then rest_codec.h:
// InferResponseToHttp).
//
// Input: one control byte, then the body. Control bit 0 set: the request has
// the header Inference-Header-Content-Length, whose value is the decimal of
// the next two bytes (little-endian) modulo (body size + 2), so values just
// past the body are tried too; bit 1 set: that value is written with a
// leading space. Otherwise the body is all JSON.
//
// Properties: no crash, leak or undefined behaviour; every refusal is
// INVALID_ARGUMENT, at most kMaxMessageBytes long, naming a member, the
// header or the body first; an accepted request round-trips through the
// response encoder: a response echoing each input as an output (asked for in
// binary or in JSON as the request says) is valid JSON up to json_size, its
// JSON outputs read back bit for bit and its binary outputs are the very
// bytes of the inputs' contents.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "core/base/json.h"
#include "server/rest/rest_codec.h"
#include "server/rest/rest_infer_request.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using invariant::JsonValue;
using invariant::fuzz::Check;

constexpr size_t kMaxMessageBytes = 1024;

void CheckRefusal(const absl::Status& status) {
  Check(status.code() == absl::StatusCode::kInvalidArgument, "a refusal is INVALID_ARGUMENT");
  Check(status.message().size() <= kMaxMessageBytes, "a refusal's message is bounded");
  bool named = false;
  for (const char* prefix : {"request body", "inputs", "outputs", "id:", "parameters",
                             "Inference-Header-Content-Length:"}) {
    named = named || absl::StartsWith(status.message(), prefix);
  }
  Check(named, "a refusal names a member, the header or the body first");
}

// The response echoing the request's inputs as outputs, encoded and checked.
void CheckRoundTrip(const inference::ModelInferRequest& request) {
  inference::ModelInferResponse response;
  response.set_model_name(request.model_name());
  response.set_id(request.id());
  for (const auto& input : request.inputs()) {
    auto* output = response.add_outputs();
    output->set_name(input.name());
    output->set_datatype(input.datatype());
    *output->mutable_shape() = input.shape();
    *output->mutable_contents() = input.contents();
    // A BYTES input's elements are any bytes (WAV files), not the UTF-8 text
    // a BYTES output of the server holds (class names): not echoed.
    output->mutable_contents()->clear_bytes_contents();
  }
  const invariant::server::RestBody body =
      invariant::server::InferResponseToHttp(response, request);
  const size_t json_size = body.json_size.value_or(body.body.size());
  Check(json_size <= body.body.size(), "json_size is within the body");
  absl::StatusOr<JsonValue> json =
      invariant::ParseJson(absl::string_view(body.body).substr(0, json_size), 1000);
  Check(json.ok(), "the response's JSON part parses");
  const JsonValue* outputs = json->Find("outputs");
  Check(outputs != nullptr && outputs->is_array() &&
            static_cast<int>(outputs->items().size()) == request.inputs_size(),
        "one output per input");
  size_t offset = json_size;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const auto& floats = request.inputs(i).contents().fp32_contents();
    const JsonValue& output = outputs->items()[i];
    const JsonValue* data = output.Find("data");
    if (data == nullptr) {  // binary
      const JsonValue* parameters = output.Find("parameters");
      Check(parameters != nullptr, "a binary output has parameters");
      const JsonValue* size = parameters->Find("binary_data_size");
      int64_t bytes = -1;
      Check(size != nullptr && size->NumberAsInt64(&bytes) && bytes >= 0,
            "a binary output has its binary_data_size");
      Check(offset + bytes <= body.body.size(), "binary outputs are within the body");
      if (request.inputs(i).datatype() == "FP32") {
        Check(static_cast<size_t>(bytes) == floats.size() * sizeof(float),
              "binary FP32 output has 4 bytes a value");
        Check(bytes == 0 || std::memcmp(body.body.data() + offset, floats.data(), bytes) == 0,
              "binary output bytes are the input's");
      }
      offset += bytes;
      continue;
    }
    if (request.inputs(i).datatype() != "FP32") continue;
    Check(data->is_array() && static_cast<int>(data->items().size()) == floats.size(),
          "a JSON output has every value");
    for (int k = 0; k < floats.size(); ++k) {
      if (!std::isfinite(floats[k])) continue;  // written as null
      float back = 0;
      Check(data->items()[k].NumberAsFloat(&back), "a JSON value reads as a float");
      Check(std::memcmp(&back, &floats[k], sizeof(float)) == 0,
            "JSON floats read back bit for bit");
    }
  }
  Check(offset == body.body.size(), "the binary outputs fill the rest of the body");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  size_t skip = 1;
  std::string header;
  if ((control & 1) != 0) {
    if (size < 3) return 0;
    skip = 3;
    const size_t body_size = size - skip;
    const size_t value = (data[1] | data[2] << 8) % (body_size + 2);
    header = ((control & 2) != 0 ? " " : "") + std::to_string(value);
  }
  const absl::string_view body(reinterpret_cast<const char*>(data) + skip, size - skip);
  absl::StatusOr<inference::ModelInferRequest> request = invariant::server::InferRequestFromHttp(
      body, (control & 1) != 0 ? &header : nullptr, "model", "");
  if (!request.ok()) {
    CheckRefusal(request.status());
    return 0;
  }
  CheckRoundTrip(*request);
  return 0;
}
