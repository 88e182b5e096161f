#include "server/handlers/model_metadata.h"

#include "absl/strings/str_cat.h"
#include "core/model/featurizer_factory.h"
#include "server/handlers/audio_clips.h"
#include "server/handlers/image_files.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

v1::VersionState ToProto(VersionState state) {
  switch (state) {
    case VersionState::kLoading:
      return v1::VERSION_STATE_LOADING;
    case VersionState::kReady:
      return v1::VERSION_STATE_READY;
    case VersionState::kFailed:
      return v1::VERSION_STATE_FAILED;
    case VersionState::kUnloaded:
      return v1::VERSION_STATE_UNLOADED;
  }
  return v1::VERSION_STATE_UNSPECIFIED;
}

}  // namespace

void CopyMirror(const google::protobuf::Message& manifest_part, google::protobuf::Message* api) {
  // Field by field through the wire format: the API messages reuse the
  // manifest's numbers and types for the fields they mirror, so those parse
  // into the same values; every other manifest field arrives as an unknown
  // field (at any depth) and is discarded.
  api->ParseFromString(manifest_part.SerializeAsString());
  api->DiscardUnknownFields();
}

v1::AudioFrontEndInfo AudioInfo(const v1::AudioFrontEnd& spec, double max_clip_seconds) {
  v1::AudioFrontEndInfo info;
  info.set_sample_rate(spec.sample_rate());
  info.set_clip_seconds(spec.clip_seconds());
  info.set_clip_policy(spec.clip_policy() == v1::AudioFrontEnd::CLIP_POLICY_START ? "start"
                                                                                  : "centre");
  info.set_trim_silence(spec.trim_silence());
  info.set_trim_db(spec.trim_db());
  switch (spec.normalisation()) {
    case v1::AudioFrontEnd::NORMALISATION_RMS:
      info.set_normalisation("rms");
      break;
    case v1::AudioFrontEnd::NORMALISATION_NONE:
      info.set_normalisation("none");
      break;
    default:
      info.set_normalisation("peak");
      break;
  }
  info.set_frame_length(spec.frame_length());
  info.set_hop_length(spec.hop_length());
  info.set_fft_length(spec.fft_length());
  info.set_min_frequency(spec.min_frequency());
  info.set_bins_per_octave(spec.bins_per_octave());
  info.set_frequency_bins(spec.frequency_bins());
  info.set_compression_gain(spec.compression_gain());
  const bool pcen = spec.compression() == v1::AudioFrontEnd::COMPRESSION_PCEN;
  info.set_compression(pcen ? "pcen" : "log1p");
  if (pcen) {
    v1::PcenInfo& p = *info.mutable_pcen();
    p.set_time_constant_seconds(spec.pcen().time_constant_seconds());
    p.set_alpha(spec.pcen().alpha());
    p.set_delta(spec.pcen().delta());
    p.set_power(spec.pcen().power());
    p.set_epsilon(spec.pcen().epsilon());
  }
  info.set_subtract_frequency_mean(spec.subtract_frequency_mean());
  info.set_max_clip_seconds(max_clip_seconds);
  info.set_frames(spec.frames());
  const bool constant_q = spec.filterbank() == v1::AudioFrontEnd::FILTERBANK_CONSTANT_Q;
  info.set_filterbank(constant_q ? "constant_q" : "stft");
  if (constant_q) info.set_bandwidth_octaves(spec.bandwidth_octaves());
  info.set_align_frequency(spec.align_frequency());
  if (spec.align_frequency()) {
    info.set_align_bin(spec.align_bin());
    info.set_align_statistic(
        spec.align_statistic() == v1::AudioFrontEnd::ALIGN_STATISTIC_STDDEV ? "stddev" : "mean");
  }
  info.set_align_time(spec.align_time());
  if (const v1::VoiceActivity& v = spec.voice_activity(); v.enabled()) {
    v1::VoiceActivityInfo* out = info.mutable_voice_activity();
    out->set_frame_seconds(v.frame_seconds());
    out->set_high_pass_hz(v.high_pass_hz());
    out->set_noise_percentile(v.noise_percentile());
    out->set_onset_db(v.onset_db());
    out->set_offset_db(v.offset_db());
    out->set_range_db(v.range_db());
    out->set_max_gap_seconds(v.max_gap_seconds());
    out->set_min_speech_seconds(v.min_speech_seconds());
    out->set_margin_seconds(v.margin_seconds());
  }
  return info;
}

v1::ImageFrontEndInfo ImageInfo(const v1::ImageFrontEnd& spec, int64_t max_pixels) {
  v1::ImageFrontEndInfo info;
  info.set_height(spec.height());
  info.set_width(spec.width());
  info.set_channels(spec.channels());
  switch (spec.fit()) {
    case v1::ImageFrontEnd::FIT_PAD:
      info.set_fit("pad");
      break;
    case v1::ImageFrontEnd::FIT_STRETCH:
      info.set_fit("stretch");
      break;
    default:
      info.set_fit("crop");
      break;
  }
  info.set_filter(spec.filter() == v1::ImageFrontEnd::FILTER_BICUBIC ? "bicubic" : "bilinear");
  info.set_background(spec.background());
  info.set_apply_orientation(!spec.ignore_orientation());
  info.set_max_pixels(max_pixels);
  info.add_formats("jpeg");
  info.add_formats("png");
  info.set_scaling("unit_byte");
  return info;
}

void FillModelMetadata(const std::string& name, int64_t version, const Model& model,
                       v1::GetModelMetadataResponse* out, double max_audio_clip_seconds,
                       int64_t max_image_pixels) {
  const v1::Manifest& manifest = model.manifest();
  out->set_model_name(name);
  out->set_model_version(version);
  if (manifest.encoder().input_shape_size() > 0) {
    *out->mutable_input_shape() = manifest.encoder().input_shape();
  } else {
    out->add_input_shape(model.input_dim());
  }
  out->set_input_dim(model.input_dim());
  out->set_feature_dim(model.feature_dim());
  out->set_output_dim(model.output_dim());
  out->set_encoder_kind(EncoderKindName(manifest.encoder()));
  out->set_model_bytes(model.bytes());
  ManifestToApi(manifest, out);
  if (const audio::AudioFrontEnd* front_end = model.audio_front_end(); front_end != nullptr) {
    *out->mutable_audio() =
        AudioInfo(front_end->spec(), EffectiveMaxClipSeconds(*front_end, max_audio_clip_seconds));
  }
  if (const image::ImageFrontEnd* front_end = model.image_front_end(); front_end != nullptr) {
    *out->mutable_image() =
        ImageInfo(front_end->spec(), EffectiveMaxImagePixels(*front_end, max_image_pixels));
  }
}

void ManifestToApi(const v1::Manifest& manifest, v1::GetModelMetadataResponse* out) {
  CopyMirror(manifest.encoder(), out->mutable_encoder());
  if (manifest.has_head()) CopyMirror(manifest.head(), out->mutable_head());
  if (manifest.has_certificate()) CopyMirror(manifest.certificate(), out->mutable_certificate());
  if (manifest.has_pairs_certificate()) {
    CopyMirror(manifest.pairs_certificate(), out->mutable_pairs_certificate());
  }
  *out->mutable_metrics() = manifest.metrics();
  *out->mutable_input_columns() = manifest.input_columns();
  out->set_input_scaling(manifest.input_scaling());
}

void FillModelList(const Registry& registry, v1::ListModelsResponse* out) {
  for (const auto& [name, versions] : registry.Snapshot()) {
    v1::ModelSummary* summary = out->add_models();
    summary->set_name(name);
    for (const auto& info : versions) {
      if (info.state != VersionState::kReady) continue;
      v1::ModelVersionSummary* v = summary->add_versions();
      v->set_version(info.version);
      v->set_encoder_kind(EncoderKindName(info.servable->manifest().encoder()));
      v->set_has_head(info.servable->has_head());
    }
    for (const auto& [label, version] : registry.Labels(name)) {
      (*summary->mutable_labels())[label] = version;
    }
  }
}

absl::Status FillModelStatus(const Registry& registry, const std::string& name,
                             v1::GetModelStatusResponse* out) {
  for (const auto& [model_name, versions] : registry.Snapshot()) {
    if (!name.empty() && model_name != name) continue;
    v1::ModelStatus* status = out->add_models();
    status->set_name(model_name);
    for (const auto& info : versions) {
      v1::VersionStatus* v = status->add_versions();
      v->set_version(info.version);
      v->set_state(ToProto(info.state));
      v->set_error(info.error);
    }
  }
  if (!name.empty() && out->models_size() == 0) {
    return absl::NotFoundError(absl::StrCat("model_name: no model named '", EchoInput(name), "'"));
  }
  return absl::OkStatus();
}

}  // namespace invariant::server
