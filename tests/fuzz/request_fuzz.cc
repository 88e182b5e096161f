// request_fuzz.cc: libFuzzer target for request decoding and validation.
//
// Input: three control bytes, then the bytes of one request message as it
// would arrive on the wire. Byte 0 picks the message: invariant.v1
// FeaturizeRequest, PredictRequest, or the Open Inference Protocol's
// ModelInferRequest. Byte 1 picks the model's input shape (rows of a × b
// floats, a, b in 1..6), byte 2 whether the model declares that 2-D shape, has
// a linear head, is a classifier, and is a model of sound (bit 3: a small
// audio front end; its rows are then the front end's, and requests carry
// clips: InputBatch.clips, or OIP samples / WAV files). The bytes are parsed as the message and
// run through the server's validation exactly as the handlers do
// (server/handlers/validation.h, server/handlers/inference_tensors.h). Properties: every
// refusal is INVALID_ARGUMENT with a message naming a request field; an
// accepted v1 batch has 1..kMaxRows rows of finite floats; an accepted OIP
// request decodes to a batch the v1 validation accepts or refuses with an
// OIP field name, and its response tensors can be assembled. For a model of
// sound every clip is decoded and put through the front end
// (server/handlers/audio_clips.h): an accepted batch has one row of finite
// values per clip.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/audio/front_end.h"
#include "inference/grpc_service.pb.h"
#include "invariant/v1/feature_service.pb.h"
#include "server/handlers/audio_clips.h"
#include "server/handlers/inference_audio.h"
#include "server/handlers/inference_tensors.h"
#include "server/handlers/validation.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using invariant::fuzz::Check;
namespace server = invariant::server;
namespace v1 = invariant::v1;

constexpr int64_t kMaxRows = 1024;
constexpr int64_t kMaxResponseBytes = 4 << 20;
constexpr int64_t kFeatureDim = 8;
constexpr int64_t kOutputDim = 3;

// The fuzzed model of sound: 8 kHz, 0.05 s clips, 4 bins × 11 frames, clips
// of at most 0.5 s (4000 samples at 8 kHz).
const invariant::audio::AudioFrontEnd& FrontEnd() {
  static const invariant::audio::AudioFrontEnd* front_end = [] {
    v1::AudioFrontEnd spec;
    spec.set_sample_rate(8000);
    spec.set_clip_seconds(0.05);
    spec.set_frame_length(64);
    spec.set_hop_length(32);
    spec.set_min_frequency(200);
    spec.set_bins_per_octave(4);
    spec.set_frequency_bins(4);
    spec.set_max_clip_seconds(0.5);
    auto created = invariant::audio::AudioFrontEnd::Create(spec);
    Check(created.ok(), "the fuzzed front end is valid");
    return created->release();
  }();
  return *front_end;
}

// Decodes and checks clips as FeatureHandler does for a model of sound.
absl::StatusOr<server::DecodedRows> DecodeClips(const server::InferRequest& inputs) {
  const auto& front_end = FrontEnd();
  if (inputs.has_rows()) {
    return absl::InvalidArgumentError("inputs.values: expected clips");
  }
  absl::StatusOr<server::DecodedRows> rows =
      server::DecodeClipBatch(inputs, front_end, kMaxRows, front_end.spec().max_clip_seconds());
  if (rows.ok()) {
    Check(rows->num_rows() == static_cast<int64_t>(inputs.clips.size()), "one row per clip");
    for (int64_t i = 0; i < rows->num_rows() * front_end.output_dim(); ++i) {
      Check(std::isfinite(rows->data()[i]), "the front end's rows are finite");
    }
  }
  return rows;
}

bool StartsWithAny(const absl::Status& status, std::initializer_list<const char*> prefixes) {
  for (const char* prefix : prefixes) {
    if (absl::StartsWith(status.message(), prefix)) return true;
  }
  return false;
}

void CheckRefusal(const absl::Status& status, std::initializer_list<const char*> fields) {
  Check(status.code() == absl::StatusCode::kInvalidArgument, "a refusal is INVALID_ARGUMENT");
  Check(StartsWithAny(status, fields), "a refusal names a request field first");
}

// Validates an invariant.v1 model spec and input batch as FeatureHandler does.
void ValidateV1(const v1::ModelSpec& spec, const v1::InputBatch& inputs, int64_t input_dim,
                bool audio) {
  if (absl::Status s = server::ValidateModelRef(spec.name(), spec.version()); !s.ok()) {
    CheckRefusal(s, {"model."});
  }
  const server::InferRequest request = server::InferRequestOfV1(spec, inputs);
  if (audio) {
    const absl::StatusOr<server::DecodedRows> rows = DecodeClips(request);
    if (!rows.ok()) CheckRefusal(rows.status(), {"inputs"});
    return;
  }
  const absl::StatusOr<server::DecodedRows> rows = server::DecodeRows(request, input_dim, kMaxRows);
  if (!rows.ok()) {
    CheckRefusal(rows.status(), {"inputs"});
    return;
  }
  Check(rows->num_rows() >= 1 && rows->num_rows() <= kMaxRows, "accepted rows in [1, max_rows]");
  const float* x = rows->data();
  for (int64_t i = 0; i < rows->num_rows() * input_dim; ++i) {
    Check(std::isfinite(x[i]), "accepted values are finite");
  }
}

// Runs a ModelInferRequest through InferenceHandler's checks and, when they
// pass, assembles the response tensors the handler would send.
void ValidateInfer(const inference::ModelInferRequest& request,
                   const server::InferenceModelShape& model) {
  const auto spec = server::ModelSpecFromProtocol(request.model_name(), request.model_version(),
                                                  "model_name", "model_version");
  if (!spec.ok()) {
    CheckRefusal(spec.status(), {"model_name", "model_version"});
    return;
  }
  if (absl::Status s = server::ValidateModelRef(spec->name(), spec->version(),
                                                {"model_name", "model_version", "model_version"});
      !s.ok()) {
    CheckRefusal(s, {"model_name", "model_version"});
    return;
  }
  server::InferRequest batch;
  if (absl::Status s = server::DecodeInferInput(request, model, kMaxRows, &batch); !s.ok()) {
    CheckRefusal(s, {"inputs", "raw_input_contents", "parameters.sample_rate"});
    return;
  }
  const bool raw = batch.raw;
  Check(batch.declared_rows >= 1, "a decoded OIP batch has rows");
  const auto outputs = server::SelectOutputs(request, model);
  if (!outputs.ok()) {
    CheckRefusal(outputs.status(), {"outputs["});
    return;
  }
  if (absl::Status s =
          server::CheckInferResponseSize(batch.declared_rows, model, *outputs, kMaxResponseBytes);
      !s.ok()) {
    CheckRefusal(s, {"inputs[0].shape", "inputs[1].shape"});
    return;
  }
  const absl::StatusOr<server::DecodedRows> rows =
      model.audio ? DecodeClips(batch) : server::DecodeRows(batch, model.input_dim, kMaxRows);
  if (!rows.ok()) {
    CheckRefusal(rows.status(), {"inputs[", "raw_input_contents[", "parameters.sample_rate"});
    return;
  }
  const int64_t n = rows->num_rows();
  Check(n == batch.declared_rows, "the decoded rows agree with the OIP shape");
  inference::ModelInferResponse response;
  server::AddOutputTensors(*outputs, n, model, raw, &response);
  for (int i = 0; i < static_cast<int>(outputs->size()); ++i) {
    const std::string& name = (*outputs)[i];
    if (name == server::kFeaturesOutputName || name == server::kScoresOutputName) {
      const int64_t cols = name == server::kFeaturesOutputName ? kFeatureDim : kOutputDim;
      float* out = server::SizeFp32Output(i, n * cols, raw, &response);
      for (int64_t j = 0; j < n * cols; ++j) out[j] = 0.5f;
    } else if (name == server::kPredictedIndexOutputName) {
      server::FillInt32Output(i, std::vector<int32_t>(static_cast<size_t>(n), 1), raw, &response);
    } else {
      server::FillBytesOutput(i, std::vector<std::string>(static_cast<size_t>(n), "class"), raw,
                              &response);
    }
  }
  Check(response.outputs_size() == static_cast<int>(outputs->size()), "one tensor per output");
  Check(response.raw_output_contents_size() == (raw ? response.outputs_size() : 0),
        "raw contents exactly when the input was raw");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const int kind = data[0] % 3;
  const int64_t a = 1 + data[1] % 6;
  const int64_t b = 1 + (data[1] / 6) % 6;
  server::InferenceModelShape model;
  model.input_dim = a * b;
  model.input_shape = (data[2] & 1) ? std::vector<int64_t>{a, b} : std::vector<int64_t>{a * b};
  model.feature_dim = kFeatureDim;
  model.has_head = (data[2] & 2) != 0;
  model.classifier = model.has_head && (data[2] & 4) != 0;
  model.output_dim = model.has_head ? kOutputDim : 0;
  model.longest_class_name = model.classifier ? 5 : 0;
  model.audio = (data[2] & 8) != 0;
  if (model.audio) {
    model.input_dim = FrontEnd().output_dim();
    model.input_shape = {FrontEnd().frequency_bins(), FrontEnd().frames(), 1};
    model.sample_rate = FrontEnd().spec().sample_rate();
  }
  const uint8_t* bytes = data + 3;
  const int length = static_cast<int>(size - 3);
  switch (kind) {
    case 0: {
      v1::FeaturizeRequest request;
      if (!request.ParseFromArray(bytes, length)) return 0;
      ValidateV1(request.model(), request.inputs(), model.input_dim, model.audio);
      break;
    }
    case 1: {
      v1::PredictRequest request;
      if (!request.ParseFromArray(bytes, length)) return 0;
      ValidateV1(request.model(), request.inputs(), model.input_dim, model.audio);
      break;
    }
    default: {
      inference::ModelInferRequest request;
      if (!request.ParseFromArray(bytes, length)) return 0;
      ValidateInfer(request, model);
      break;
    }
  }
  return 0;
}
