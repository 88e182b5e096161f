// inference_tensors.h: Open Inference Protocol tensors and names ↔ invariant.v1, free of gRPC.
//
// Pure functions used by InferenceHandler (and so by every transport of the
// protocol): they turn the protocol's version strings into a v1::ModelSpec,
// check the one input tensor ("input", FP32, shape [n, input_dim] or
// [n, *input_shape], data in contents.fp32_contents or raw_input_contents[0])
// and view it in the transport-free InferRequest, pick the requested
// outputs, lay out the output tensors (typed or raw) for the compute to
// write into, and describe a model as a ModelMetadataResponse. Every error is INVALID_ARGUMENT
// naming the protocol field (e.g. "inputs[0].shape: expected [n, 16] ..., received [2, 5]").
//
// A model of sound takes clips instead (inference_audio.h): "input" FP32 /
// INT16 [n, L] with an optional "input_lengths" and parameter "sample_rate",
// or BYTES [n] of WAV files.
//
// The outputs of a model, in this order: "features" FP32 [n, feature_dim];
// with a linear head "scores" FP32 [n, output_dim]; for a classifier also
// "predicted_class" BYTES [n] (class names) and "predicted_index" INT32 [n];
// for a model of sound with voice activity also "clip_status" BYTES [n] ("ok", or "no_speech"
// when voice activity found no speech in the clip: its features and scores
// are NaN, its predicted_index −1 and its predicted_class "") and
// "speech_seconds" FP32 [n, 2] (where the content the front end kept lies,
// start and end in seconds of the clip's own time).
#ifndef INVARIANT_SERVER_HANDLERS_INFERENCE_TENSORS_H_
#define INVARIANT_SERVER_HANDLERS_INFERENCE_TENSORS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/model/model.h"
#include "inference/grpc_service.pb.h"
#include "invariant/v1/feature_service.pb.h"
#include "server/handlers/infer_request.h"

namespace invariant::server {

inline constexpr char kInferenceInputName[] = "input";
inline constexpr char kFeaturesOutputName[] = "features";
inline constexpr char kScoresOutputName[] = "scores";
inline constexpr char kPredictedClassOutputName[] = "predicted_class";
inline constexpr char kPredictedIndexOutputName[] = "predicted_index";
inline constexpr char kClipStatusOutputName[] = "clip_status";
inline constexpr char kSpeechSecondsOutputName[] = "speech_seconds";
inline constexpr char kClipStatusOk[] = "ok";
inline constexpr char kClipStatusNoSpeech[] = "no_speech";

// What a model computes, as far as the protocol's tensors are concerned.
struct InferenceModelShape {
  int64_t input_dim = 0;
  std::vector<int64_t> input_shape;  // e.g. {28, 28, 1}; {input_dim} when unknown
  int64_t feature_dim = 0;
  int64_t output_dim = 0;  // 0 without a head
  bool has_head = false;
  bool classifier = false;
  int64_t longest_class_name = 0;  // bytes
  bool audio = false;              // a model of sound: takes clips (inference_audio.h)
  int sample_rate = 0;             // of a model of sound, Hz
  bool voice_activity = false;     // a model of sound with voice activity
  bool image = false;              // a model of image files (input BYTES [n])
};

// The model named `name` at protocol version `version`: "" or "latest" = the
// newest ready version, a positive decimal integer = that version, any other
// string not starting with a digit or a sign = a version label (labels.txt).
// INVALID_ARGUMENT naming `name_field` / `version_field` otherwise.
absl::StatusOr<v1::ModelSpec> ModelSpecFromProtocol(const std::string& name,
                                                    const std::string& version,
                                                    const std::string& name_field,
                                                    const std::string& version_field);

// The field holding input tensor `index`'s typed data, as the caller sent
// it: "inputs[index].contents.<typed>" (gRPC: typed = "fp32_contents", ...)
// or, when `json` (REST: every datatype's "data" array), "inputs[index].data".
std::string TensorDataField(int index, const char* typed, bool json);

// How the protocol names the fields the shared checks name
// (InferFieldNames): "model_name", "model_version",
// "inputs[0].contents.fp32_contents", "raw_input_contents[0]", the clip of
// row i "inputs[k][i]" (k = `input_index`, the index of the tensor "input"),
// its sample j "inputs[k][i][j]", its rate "parameters.sample_rate".
// `json`: as TensorDataField.
InferFieldNames ProtocolFieldNames(bool raw_input, int input_index, bool json = false);

// The output names `model` offers, in the order above.
std::vector<std::string> OutputNames(const InferenceModelShape& model);

// Checks the request's one input tensor against `model` and views it in
// `*out` (fields: ProtocolFieldNames; declared_rows, values or raw_values;
// for a model of sound, clips: DecodeAudioInferInput); out->raw tells
// whether raw_input_contents carried it. A shape of more than `max_rows`
// rows (the server's configured rows per request,
// FeatureHandler::max_request_rows) is refused naming that limit before the
// contents are looked at. Finite values are checked later by the shared
// validation (DecodeRows), naming the protocol's fields.
// `json`: the typed data came as REST's "data" arrays (TensorDataField).
absl::Status DecodeInferInput(const inference::ModelInferRequest& request,
                              const InferenceModelShape& model, int64_t max_rows, InferRequest* out,
                              bool json = false);

// The outputs the request names (all of OutputNames(model) when it names
// none), in request order; INVALID_ARGUMENT for an unknown or repeated name.
absl::StatusOr<std::vector<std::string>> SelectOutputs(const inference::ModelInferRequest& request,
                                                       const InferenceModelShape& model);

// The values one row of `outputs` holds in an answer: a number each of
// features and scores, one for the predicted index, and a predicted class
// name counted as (longest name + 4) / 4 values.
int64_t AnswerValuesPerRow(const InferenceModelShape& model,
                           const std::vector<std::string>& outputs);

// OK when a response with `outputs` for `rows` rows fits `max_response_bytes`
// (bounded from above, with the same framing allowance as invariant.v1);
// INVALID_ARGUMENT naming inputs[0].shape otherwise. invariant.v1 checks each
// of features and scores alone; this checks them together.
absl::Status CheckInferResponseSize(int64_t rows, const InferenceModelShape& model,
                                    const std::vector<std::string>& outputs,
                                    int64_t max_response_bytes);

// The response's output tensors, written in place (nothing is copied
// after the compute): AddOutputTensors adds one tensor per name of
// `outputs` (datatype, shape [rows, cols] or [rows]) and, when `raw`, one
// empty raw_output_contents entry each; SizeFp32Output then sizes output
// `index` for `count` floats and returns where they go (typed contents, or
// the raw bytes: little-endian); FillInt32Output / FillBytesOutput write
// output `index` (raw BYTES as a 4-byte length + bytes each).
void AddOutputTensors(const std::vector<std::string>& outputs, int64_t rows,
                      const InferenceModelShape& model, bool raw,
                      inference::ModelInferResponse* response);
float* SizeFp32Output(int index, int64_t count, bool raw, inference::ModelInferResponse* response);
void FillInt32Output(int index, const std::vector<int32_t>& values, bool raw,
                     inference::ModelInferResponse* response);
void FillBytesOutput(int index, const std::vector<std::string>& values, bool raw,
                     inference::ModelInferResponse* response);

// Fills `out` from the v1 metadata of one model version (`shape`: ShapeOfModel
// of the same model): name, `versions`
// (ready versions, newest first), platform "invariant", the input and output
// tensors, and properties: encoder_kind, encoder, group, certificate and
// (when the model has one) pairs_certificate (as JSON), input_shape, input_dim, feature_dim,
// output_dim, task, class_names / target_names (JSON arrays), metrics (JSON object), model_bytes,
// version. A model of sound has the inputs "input" FP32 [-1, -1] and "input_lengths" INT64 [-1]
// (the metadata has one datatype per tensor: INT16 samples, INT32 lengths and BYTES [-1] WAV files
// are accepted too) and the properties audio (the front end as JSON, AudioFrontEndInfo),
// sample_rate, max_clip_seconds and audio_inputs (the accepted forms, in words).
void FillInferenceModelMetadata(const v1::GetModelMetadataResponse& metadata,
                                const InferenceModelShape& shape,
                                const std::vector<int64_t>& versions,
                                inference::ModelMetadataResponse* out);

// What the loaded `model` computes, as the protocol's tensors see it.
InferenceModelShape ShapeOfModel(const Model& model);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_INFERENCE_TENSORS_H_
