#include "core/model/model.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/bundle/bundle.h"
#include "core/model/featurizer_factory.h"
#include "google/protobuf/util/message_differencer.h"

namespace invariant {
namespace {

absl::Status Prefix(const std::string& path, const absl::Status& s) {
  if (s.ok() || absl::StartsWith(s.message(), path)) return s;
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

// The front end of manifest.audio, checked against the manifest's shapes.
absl::StatusOr<std::shared_ptr<const audio::AudioFrontEnd>> MakeAudioFrontEnd(
    const v1::Manifest& manifest) {
  const v1::AudioFrontEnd& spec = manifest.audio();
  absl::StatusOr<v1::AudioFrontEnd> completed = audio::AudioFrontEnd::Complete(spec);
  if (!completed.ok()) return completed.status();
  if (completed->SerializeAsString() != spec.SerializeAsString()) {
    return absl::InvalidArgumentError(
        absl::StrCat("audio: expected a complete front end (defaults filled in and frames "
                     "derived, as AudioFrontEnd::Complete writes it), received ",
                     spec.ShortDebugString(), "; complete: ", completed->ShortDebugString()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<const audio::AudioFrontEnd> front_end,
                   audio::AudioFrontEnd::Create(spec));
  const int64_t bins = front_end->frequency_bins();
  const int64_t frames = front_end->frames();
  if (manifest.input_dim() != bins * frames) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest.input_dim: expected audio.frequency_bins · audio.frames = ", bins,
                     " · ", frames, " = ", bins * frames, ", received ", manifest.input_dim()));
  }
  const auto& shape = manifest.encoder().input_shape();
  if (shape.size() != 3 || shape[0] != bins || shape[1] != frames || shape[2] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "manifest.encoder.input_shape: expected [audio.frequency_bins, audio.frames, 1] = [", bins,
        ", ", frames, ", 1] for a model of sound, received [", absl::StrJoin(shape, ", "), "]"));
  }
  return std::shared_ptr<const audio::AudioFrontEnd>(std::move(front_end));
}

// The front end of manifest.image, checked against the manifest's shapes.
absl::StatusOr<std::shared_ptr<const image::ImageFrontEnd>> MakeImageFrontEnd(
    const v1::Manifest& manifest) {
  if (manifest.has_audio()) {
    return absl::InvalidArgumentError(
        "manifest.image: expected a model of images or of sound, received both image and audio");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<const image::ImageFrontEnd> front_end,
                   image::ImageFrontEnd::Create(manifest.image()));
  const v1::ImageFrontEnd& spec = front_end->spec();
  if (manifest.input_dim() != front_end->output_dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest.input_dim: expected image.height · image.width · image.channels = ",
                     front_end->output_dim(), ", received ", manifest.input_dim()));
  }
  const auto& shape = manifest.encoder().input_shape();
  if (!shape.empty() && (shape.size() != 3 || shape[0] != spec.height() ||
                         shape[1] != spec.width() || shape[2] != spec.channels())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "manifest.encoder.input_shape: expected [image.height, image.width, image.channels] = [",
        spec.height(), ", ", spec.width(), ", ", spec.channels(),
        "] for a model of images, received [", absl::StrJoin(shape, ", "), "]"));
  }
  return std::shared_ptr<const image::ImageFrontEnd>(std::move(front_end));
}

// encoder.input_shape, when given, is the shape of one input row: every
// size at least 1 and their product input_dim (checked without overflow), so
// a request shaped by it holds exactly input_dim values a row.
absl::Status CheckInputShape(const v1::Manifest& manifest) {
  const auto& shape = manifest.encoder().input_shape();
  if (shape.empty()) return absl::OkStatus();
  int64_t values = 1;
  for (int64_t size : shape) {
    if (size < 1 || size > manifest.input_dim() || values > manifest.input_dim() / size) {
      values = -1;
      break;
    }
    values *= size;
  }
  if (values == manifest.input_dim()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("manifest.encoder.input_shape: expected sizes of at least 1 whose product is "
                   "manifest.input_dim = ",
                   manifest.input_dim(), ", received [", absl::StrJoin(shape, ", "), "]"));
}

template <typename T>
void AddRefs(const std::map<std::string, Array2D<T>>& map, v1::DType dtype,
             std::vector<TensorRef>& refs) {
  for (const auto& [name, a] : map) {
    refs.push_back(TensorRef{name, dtype, {a.rows(), a.cols()}, a.data()});
  }
}

// The bundle of `manifest` over `tensors` (Model::Save, SaveWithRecords).
absl::Status WriteModelBundle(const std::string& path, const v1::Manifest& manifest,
                              const ModelTensors& tensors) {
  std::vector<TensorRef> refs;
  AddRefs(tensors.f32, v1::DTYPE_FLOAT32, refs);
  AddRefs(tensors.f64, v1::DTYPE_FLOAT64, refs);
  AddRefs(tensors.i32, v1::DTYPE_INT32, refs);
  AddRefs(tensors.bf16, v1::DTYPE_BFLOAT16, refs);
  return WriteBundle(path, manifest, refs);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> Model::Assemble(v1::Manifest manifest,
                                                             ModelTensors tensors) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> featurizer, MakeFeaturizer(manifest, tensors));
  if (featurizer->d_in() != manifest.input_dim()) {
    return absl::InvalidArgumentError(absl::StrCat("manifest.input_dim is ", manifest.input_dim(),
                                                   " but the encoder takes ", featurizer->d_in()));
  }
  if (manifest.feature_dim() == 0) manifest.set_feature_dim(featurizer->d_out());
  if (manifest.feature_dim() != featurizer->d_out()) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest.feature_dim is ", manifest.feature_dim(),
                     " but the encoder produces ", featurizer->d_out()));
  }
  RETURN_IF_ERROR(CheckInputShape(manifest));
  auto model = std::shared_ptr<Model>(new Model());
  if (manifest.has_audio()) {
    ASSIGN_OR_RETURN(model->audio_front_end_, MakeAudioFrontEnd(manifest));
  }
  if (manifest.has_image()) {
    ASSIGN_OR_RETURN(model->image_front_end_, MakeImageFrontEnd(manifest));
  }
  if (manifest.has_head()) {
    auto w = tensors.f32.find(kHeadWeightsTensor);
    auto b = tensors.f32.find(kHeadBiasTensor);
    if (w == tensors.f32.end() || b == tensors.f32.end()) {
      return absl::InvalidArgumentError(
          "manifest.head is set but tensor 'head/weights' or 'head/bias' is missing");
    }
    const int64_t t = w->second.cols();
    if (w->second.rows() != manifest.feature_dim() || t <= 0 || b->second.rows() != 1 ||
        b->second.cols() != t) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor 'head/weights' must be feature_dim × T = ", manifest.feature_dim(),
                       " × T and 'head/bias' 1 × T, got ", w->second.rows(), " × ", t, " and ",
                       b->second.rows(), " × ", b->second.cols()));
    }
    const auto& head = manifest.head();
    if (head.task() == v1::TASK_CLASSIFICATION && head.class_names_size() != t) {
      return absl::InvalidArgumentError(absl::StrCat("manifest.head.class_names has ",
                                                     head.class_names_size(), " names for ", t,
                                                     " score columns"));
    }
    if (head.task() == v1::TASK_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          "manifest.head.task must be TASK_CLASSIFICATION or TASK_REGRESSION");
    }
    model->head_.weights = w->second;
    model->head_.bias = b->second;
    model->head_.lambda = head.lambda();
  }
  model->manifest_ = std::move(manifest);
  model->tensors_ = std::move(tensors);
  model->featurizer_ = std::move(featurizer);
  model->footprint_ = EstimateModelFootprint(model->manifest_, model->bytes());
  return std::shared_ptr<const Model>(std::move(model));
}

absl::StatusOr<std::shared_ptr<const Model>> Model::Load(const std::string& path,
                                                         const ModelLoadOptions& options) {
  ModelFootprint footprint;
  OpenOptions open;
  open.admit = [&footprint, &options](const v1::Manifest& manifest, uint64_t file_bytes) {
    footprint = EstimateModelFootprint(manifest, file_bytes);
    return options.admit ? options.admit(footprint) : absl::OkStatus();
  };
  ASSIGN_OR_RETURN(std::shared_ptr<const Bundle> bundle, Bundle::Open(path, open));
  ModelTensors tensors;
  for (const v1::TensorEntry& e : bundle->manifest().tensors()) {
    switch (e.dtype()) {
      case v1::DTYPE_FLOAT32: {
        ASSIGN_OR_RETURN(tensors.f32[e.name()], bundle->Float(e.name()));
        break;
      }
      case v1::DTYPE_FLOAT64: {
        ASSIGN_OR_RETURN(tensors.f64[e.name()], bundle->Double(e.name()));
        break;
      }
      case v1::DTYPE_INT32: {
        ASSIGN_OR_RETURN(tensors.i32[e.name()], bundle->Int32(e.name()));
        break;
      }
      case v1::DTYPE_BFLOAT16: {
        ASSIGN_OR_RETURN(tensors.bf16[e.name()], bundle->Bf16(e.name()));
        break;
      }
      default:
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": tensor '", e.name(), "' has unsupported dtype"));
    }
  }
  // Each tensor view holds the bundle's memory, so the model keeps it alive.
  auto model = Assemble(bundle->manifest(), std::move(tensors));
  if (!model.ok()) return Prefix(path, model.status());
  // The model was just made here and is not shared yet.
  std::const_pointer_cast<Model>(*model)->footprint_ = footprint;
  return model;
}

absl::Status Model::Save(const std::string& path) const {
  return WriteModelBundle(path, manifest_, tensors_);
}

absl::Status Model::SaveWithRecords(const std::string& path, const v1::Manifest& manifest) const {
  v1::Manifest given = manifest;
  v1::Manifest own = manifest_;
  for (v1::Manifest* m : {&given, &own}) {
    m->clear_metrics();
    m->clear_certificate();
    m->clear_pairs_certificate();
  }
  if (!google::protobuf::util::MessageDifferencer::Equals(given, own)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": the manifest to save differs from the model's in more than its "
                     "records (metrics, certificate, pairs_certificate)"));
  }
  return WriteModelBundle(path, manifest, tensors_);
}

int64_t Model::output_dim() const { return has_head() ? head_.output_dim() : 0; }

size_t Model::bytes() const {
  size_t b = 0;
  for (const auto& [n, a] : tensors_.f32) b += a.bytes();
  for (const auto& [n, a] : tensors_.f64) b += a.bytes();
  for (const auto& [n, a] : tensors_.i32) b += a.bytes();
  for (const auto& [n, a] : tensors_.bf16) b += a.bytes();
  return b;
}

void Model::Featurize(int64_t n, const float* x, float* features) const {
  featurizer_->Encode(n, x, features);
}

void Model::EncodeInBlocks(
    int64_t n, const float* x,
    const std::function<void(int64_t i0, int64_t b, const float* phi)>& use) const {
  // Blocks of rows keep the feature scratch bounded for large requests.
  constexpr int64_t kRows = 256;
  std::vector<float> phi(static_cast<size_t>(std::min(n, kRows) * feature_dim()));
  for (int64_t i0 = 0; i0 < n; i0 += kRows) {
    const int64_t b = std::min(kRows, n - i0);
    featurizer_->Encode(b, x + i0 * input_dim(), phi.data());
    use(i0, b, phi.data());
  }
}

void Model::Predict(int64_t n, const float* x, float* scores) const {
  if (n == 0) return;
  const int64_t t = output_dim();
  EncodeInBlocks(n, x, [&](int64_t i0, int64_t b, const float* phi) {
    ApplyLinearModel(head_, b, phi, scores + i0 * t);
  });
}

}  // namespace invariant
