// infer_request.h: one inference request as the handlers answer it, free of
// any transport and of either API's messages.
//
// Each front end decodes a call into an InferRequest once, and
// FeatureHandler::Infer answers it (one registry lookup before, one batch
// job whose result carries the features and every head output asked for):
//   * invariant.v1 Featurize / Predict: InferRequestOfV1 views the
//     InputBatch's values, raw_values or clips in place;
//   * the Open Inference Protocol's ModelInfer: DecodeInferInput
//     (inference_tensors.h) checks the tensor "input" against the loaded
//     model and views its contents or raw bytes in place; a model of sound's
//     clips are views too (inference_audio.h), except INT16 samples sent as
//     typed int_contents, which are narrowed into `storage`.
// Nothing is copied on the way: the rows reach the batcher as views (raw
// bytes are copied only when they are not aligned for floats).
//
// Lifetime: `values`, `raw_values` and every clip's bytes point into the
// caller's message or into `storage`; the message and the request must
// outlive the call (FeatureHandler::Infer holds the request by shared_ptr).
//
// Errors are produced once, naming the field as the caller's protocol calls
// it (`fields`): "inputs.values[row 0, column 2]: ..." for invariant.v1,
// "inputs[0].contents.fp32_contents[row 0, column 2]: ..." for the
// protocol. Thread-safety: a request is read by one call at a time.
#ifndef INVARIANT_SERVER_HANDLERS_INFER_REQUEST_H_
#define INVARIANT_SERVER_HANDLERS_INFER_REQUEST_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "invariant/v1/feature_service.pb.h"
#include "server/lifecycle/registry.h"

namespace invariant::server {

// One clip of sound: a whole WAV file (its own rate) or little-endian
// float32 / int16 samples at `sample_rate` Hz (0: the model's).
struct ClipView {
  enum class Format { kNone, kWav, kFloat32, kInt16 };
  Format format = Format::kNone;  // kNone: the caller sent no samples
  std::string_view bytes;
  int sample_rate = 0;
};

// The parts of a clip an error can name.
enum class ClipPart { kClip, kWav, kFloat32, kInt16, kSampleRate };

// How the caller's protocol names each field the handler checks.
struct InferFieldNames {
  LookupFieldNames model;                // the model's name, version, label
  std::string values = "inputs.values";  // typed floats
  std::string raw_values = "inputs.raw_values";
  std::string num_rows = "inputs.num_rows";
  std::string inputs = "inputs";         // the input as a whole
  std::string clips = "inputs.clips";    // the clips as a whole
  std::string images = "inputs.images";  // the image files as a whole
  // The field of part `part` of clip `index`; invariant.v1's when empty
  // ("inputs.clips[3]", "inputs.clips[3].wav", ...).
  std::function<std::string(int64_t index, ClipPart part)> clip;

  // The field of image file `index`; invariant.v1's when empty ("inputs.images[3]").
  std::function<std::string(int64_t index)> image;

  std::string Clip(int64_t index, ClipPart part) const;
  std::string Image(int64_t index) const;
};

struct InferRequest {
  std::string model_name;
  int64_t model_version = 0;  // 0: the newest ready version (or the label's)
  std::string version_label;

  // The input: rows of floats, typed (`values`, `value_count` of them) or
  // raw little-endian bytes (`raw_values`, when `raw`), or clips. A model
  // takes one kind; the handler names the field when it is the wrong one.
  const float* values = nullptr;
  int64_t value_count = 0;
  bool raw = false;
  std::string_view raw_values;
  std::vector<ClipView> clips;
  std::vector<std::string_view> images;  // encoded image files (JPEG, PNG)
  int64_t declared_rows = 0;             // the caller's row count; 0: not declared

  // What to compute: the features, and/or the head's outputs (scores and,
  // for a classifier, the predicted classes).
  bool features = false;
  bool head = false;
  // > 0: the answer takes up to this many bytes per row, checked against
  // the server's max_message_bytes before anything is computed (naming
  // fields.inputs); 0: the front end checked it.
  int64_t response_bytes_per_row = 0;

  InferFieldNames fields;
  // Samples the front end had to convert (typed INT16); clips may view them.
  std::deque<std::string> storage;

  // The row (or clip) count the input carries before any check.
  bool has_rows() const { return value_count > 0 || !raw_values.empty(); }
};

// invariant.v1's request: the model and the batch's values, raw_values or
// clips or images viewed in place (`batch` must outlive the request).
InferRequest InferRequestOfV1(const v1::ModelSpec& model, const v1::InputBatch& batch);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_INFER_REQUEST_H_
