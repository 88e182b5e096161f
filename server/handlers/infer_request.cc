#include "server/handlers/infer_request.h"

#include "absl/strings/str_cat.h"

namespace invariant::server {

std::string InferFieldNames::Clip(int64_t index, ClipPart part) const {
  if (clip) return clip(index, part);
  const std::string base = absl::StrCat("inputs.clips[", index, "]");
  switch (part) {
    case ClipPart::kClip:
      return base;
    case ClipPart::kWav:
      return base + ".wav";
    case ClipPart::kFloat32:
      return base + ".float32_le";
    case ClipPart::kInt16:
      return base + ".int16_le";
    case ClipPart::kSampleRate:
      return base + ".sample_rate";
  }
  return base;
}

std::string InferFieldNames::Image(int64_t index) const {
  if (image) return image(index);
  return absl::StrCat(images, "[", index, "]");
}

InferRequest InferRequestOfV1(const v1::ModelSpec& model, const v1::InputBatch& batch) {
  InferRequest request;
  request.model_name = model.name();
  request.model_version = model.version();
  request.version_label = model.version_label();
  request.values = batch.values().data();
  request.value_count = batch.values_size();
  request.raw = !batch.raw_values().empty();
  request.raw_values = batch.raw_values();
  request.declared_rows = batch.num_rows();
  request.clips.reserve(batch.clips_size());
  for (const v1::AudioClip& clip : batch.clips()) {
    ClipView view;
    view.sample_rate = clip.sample_rate();
    switch (clip.data_case()) {
      case v1::AudioClip::kWav:
        view.format = ClipView::Format::kWav;
        view.bytes = clip.wav();
        break;
      case v1::AudioClip::kFloat32Le:
        view.format = ClipView::Format::kFloat32;
        view.bytes = clip.float32_le();
        break;
      case v1::AudioClip::kInt16Le:
        view.format = ClipView::Format::kInt16;
        view.bytes = clip.int16_le();
        break;
      case v1::AudioClip::DATA_NOT_SET:
        break;
    }
    request.clips.push_back(view);
  }
  request.images.assign(batch.images().begin(), batch.images().end());
  return request;
}

}  // namespace invariant::server
