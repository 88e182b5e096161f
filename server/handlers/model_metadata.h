// model_metadata.h: model descriptions for ListModels and GetModelMetadata.
//
// Pure functions from a loaded Model (and the registry's view) to the API
// messages of feature_service.proto. The API describes a model with its own
// messages (model_info.proto); ManifestToApi is the one place a bundle
// manifest becomes them, so a manifest field reaches the wire only when it
// is copied there.
#ifndef INVARIANT_SERVER_HANDLERS_MODEL_METADATA_H_
#define INVARIANT_SERVER_HANDLERS_MODEL_METADATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/model/model.h"
#include "google/protobuf/message.h"
#include "invariant/v1/bundle.pb.h"
#include "invariant/v1/feature_service.pb.h"
#include "invariant/v1/model_admin_service.pb.h"
#include "server/lifecycle/registry.h"

namespace invariant::server {

using Registry = ModelRegistry<Model>;

// Fills `out` with the shapes, encoder, head, metrics and certificate of
// `model`, and for a model of sound its audio front end (`audio`), whose
// max_clip_seconds is the limit in force: the smaller of the model's and
// `max_audio_clip_seconds` (the server's; <= 0 = none); for a model of
// image files its image front end (`image`), max_pixels likewise the
// smaller of the model's and `max_image_pixels`.
void FillModelMetadata(const std::string& name, int64_t version, const Model& model,
                       v1::GetModelMetadataResponse* out, double max_audio_clip_seconds = 0,
                       int64_t max_image_pixels = 0);

// The API's description of an image front end (the enums as lower-case words).
v1::ImageFrontEndInfo ImageInfo(const v1::ImageFrontEnd& spec, int64_t max_pixels);

// The API's description of an audio front end (field for field; the enums
// as the strings "centre" / "start" and "peak" / "rms" / "none").
v1::AudioFrontEndInfo AudioInfo(const v1::AudioFrontEnd& spec, double max_clip_seconds);

// The manifest's encoder, head, certificate, metrics and input schema as the
// API's messages (fields of `out` not derived from the manifest are untouched).
void ManifestToApi(const v1::Manifest& manifest, v1::GetModelMetadataResponse* out);

// Replaces `api` (an API mirror such as v1::EncoderInfo) with the fields of
// `manifest_part` (its manifest message, v1::EncoderSpec) that the mirror
// declares; manifest-only fields are dropped. The mirrors keep the manifest's
// field names, numbers and types (model_metadata_test checks every pair).
void CopyMirror(const google::protobuf::Message& manifest_part, google::protobuf::Message* api);

// One summary per model with its ready versions (newest first) and labels.
void FillModelList(const Registry& registry, v1::ListModelsResponse* out);

// The per-version states of every model (or only `name` when not empty);
// NOT_FOUND when `name` names no model.
absl::Status FillModelStatus(const Registry& registry, const std::string& name,
                             v1::GetModelStatusResponse* out);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_MODEL_METADATA_H_
