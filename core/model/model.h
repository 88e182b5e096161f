// model.h: a served model = preprocess → encoder (→ second layer) (→ linear head).
//
// Model is what the training job writes and the server loads: one bundle file
// (core/bundle/bundle.h) at MODELS/<name>/<version>/model.bundle (the layout
// is core/model/repository.h's). Loading reads the file once into private
// read-only memory, checks the format version and every checksum, and
// rebuilds the encoder over those tensors without copying them again; the
// file may be overwritten or removed afterwards. A Model is immutable after
// Load and is shared as std::shared_ptr<const Model>.
//
// A model of sound (manifest.audio set) also holds its audio front end
// (core/audio/front_end.h), which turns a clip into the row the encoder
// takes; the caller applies it (the server, in its handler, before batching).
// A model of images sent as files (manifest.image set) holds its image front
// end (core/image/front_end.h) the same way.
#ifndef INVARIANT_CORE_MODEL_MODEL_H_
#define INVARIANT_CORE_MODEL_MODEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/audio/front_end.h"
#include "core/base/tensor.h"
#include "core/encoders/encoder.h"
#include "core/image/front_end.h"
#include "core/model/model_footprint.h"
#include "core/model/repository.h"
#include "core/rls/linear_model.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

// Named tensors of a model, by dtype. Values are owned, or views into a loaded bundle.
struct ModelTensors {
  std::map<std::string, FloatMatrix> f32;
  std::map<std::string, DoubleMatrix> f64;
  std::map<std::string, IntMatrix> i32;
  std::map<std::string, Bf16Matrix> bf16;  // DTYPE_BFLOAT16 (bf16 banks)
};

// The bundle tensors of the linear head: feature_dim × T and 1 × T.
inline constexpr char kHeadWeightsTensor[] = "head/weights";
inline constexpr char kHeadBiasTensor[] = "head/bias";

struct ModelLoadOptions {
  // Called with the model's footprint (model_footprint.h), stated from the
  // bundle's manifest before the bundle is read; its error is Load's, and
  // the bundle is then never read. May be empty.
  std::function<absl::Status(const ModelFootprint& footprint)> admit;
};

class Model {
 public:
  // Loads the bundle at `path`. Errors (NOT_FOUND, DATA_LOSS for corrupt or
  // truncated files, FAILED_PRECONDITION for an unsupported format version,
  // INVALID_ARGUMENT for inconsistent shapes) name the path and the problem.
  static absl::StatusOr<std::shared_ptr<const Model>> Load(const std::string& path,
                                                           const ModelLoadOptions& options = {});

  // Assembles a model from a manifest and its named tensors (used by the
  // training job and tests; Load uses it over the bundle's tensor views). Checks
  // that every tensor the manifest's parts need is present with the right
  // shape and that dimensions agree (input_dim → encoder → feature_dim →
  // head), naming the tensor or field on error. Head tensors:
  // "head/weights" (feature_dim × T) and "head/bias" (1 × T). With
  // manifest.audio: the spec must be complete (AudioFrontEnd::Complete leaves
  // it unchanged), input_dim must be frequency_bins · frames and
  // encoder.input_shape [frequency_bins, frames, 1]; INVALID_ARGUMENT
  // "audio: ..." / naming the field otherwise. With manifest.image (not with
  // audio): a valid spec, input_dim height · width · channels and
  // encoder.input_shape, when given, [height, width, channels].
  static absl::StatusOr<std::shared_ptr<const Model>> Assemble(v1::Manifest manifest,
                                                               ModelTensors tensors);

  // Writes the bundle to `path` (atomically: a temporary file, then rename).
  absl::Status Save(const std::string& path) const;
  // Writes the bundle as Save does, under `manifest`: this model's
  // manifest() with the records of an evaluation of the model (metrics,
  // certificate, pairs_certificate; fields Assemble does not read) set. So the
  // training job stamps what it measured on the assembled model into the
  // bundle without assembling it again. INVALID_ARGUMENT when `manifest`
  // differs from manifest() in any other field.
  absl::Status SaveWithRecords(const std::string& path, const v1::Manifest& manifest) const;

  const v1::Manifest& manifest() const { return manifest_; }
  int64_t input_dim() const { return manifest_.input_dim(); }
  int64_t feature_dim() const { return manifest_.feature_dim(); }
  bool has_head() const { return manifest_.has_head(); }
  // T: classes for classification, targets for regression; 0 without a head.
  int64_t output_dim() const;
  v1::Task task() const { return manifest_.head().task(); }
  // Bytes of tensors held (bundle views or owned).
  size_t bytes() const;
  // What the model holds (model_footprint.h): stated from the manifest by
  // Load; for an assembled model, its tensors' bytes as the bundle.
  const ModelFootprint& footprint() const { return footprint_; }
  // The whole feature map (preprocess → encoder → second layer).
  const Encoder& featurizer() const { return *featurizer_; }
  const ModelTensors& tensors() const { return tensors_; }
  // The audio front end of a model of sound (manifest.audio set); nullptr otherwise.
  const audio::AudioFrontEnd* audio_front_end() const { return audio_front_end_.get(); }
  // The image front end of a model of image files (manifest.image set); nullptr otherwise.
  const image::ImageFrontEnd* image_front_end() const { return image_front_end_.get(); }

  // x: n × input_dim → features: n × feature_dim. Thread-safe.
  void Featurize(int64_t n, const float* x, float* features) const;
  // x: n × input_dim → scores: n × output_dim (one-vs-all scores or values),
  // featurized in blocks and scored by ApplyLinearModel. Requires has_head().
  // Thread-safe.
  void Predict(int64_t n, const float* x, float* scores) const;
  // The linear head (empty weights without a head).
  const LinearModel& head() const { return head_; }

 private:
  // Encodes x in blocks of rows (bounded scratch) and hands each block's
  // features to `use` (its first row i0, its b rows, b × feature_dim values).
  void EncodeInBlocks(
      int64_t n, const float* x,
      const std::function<void(int64_t i0, int64_t b, const float* phi)>& use) const;
  Model() = default;
  v1::Manifest manifest_;
  ModelTensors tensors_;
  std::shared_ptr<const Encoder> featurizer_;
  LinearModel head_;  // feature_dim × T and 1 × T, empty without a head
  std::shared_ptr<const audio::AudioFrontEnd> audio_front_end_;  // null unless manifest.audio
  std::shared_ptr<const image::ImageFrontEnd> image_front_end_;  // null unless manifest.image
  ModelFootprint footprint_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_MODEL_H_
