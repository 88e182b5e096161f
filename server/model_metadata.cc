#include "server/model_metadata.h"

#include "absl/strings/str_cat.h"
#include "core/model/featurizer_factory.h"

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

void FillModelMetadata(const std::string& name, int64_t version, const Model& model,
                       v1::GetModelMetadataResponse* out) {
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
}

void ManifestToApi(const v1::Manifest& manifest, v1::GetModelMetadataResponse* out) {
  const v1::EncoderSpec& e = manifest.encoder();
  v1::EncoderInfo* encoder = out->mutable_encoder();
  switch (e.params_case()) {
    case v1::EncoderSpec::kCdf: {
      const v1::CdfParams& p = e.cdf();
      v1::CdfInfo* c = encoder->mutable_cdf();
      c->set_num_templates(p.num_templates());
      c->set_num_group_elements(p.num_group_elements());
      c->set_num_bins(p.num_bins());
      c->set_range(p.range());
      c->set_pooling(p.pooling());
      c->set_template_kind(p.template_kind());
      c->set_epsilon(p.epsilon());
      break;
    }
    case v1::EncoderSpec::kRandomFourier: {
      const v1::RandomFourierParams& p = e.random_fourier();
      v1::RandomFourierInfo* r = encoder->mutable_random_fourier();
      r->set_num_features(p.num_features());
      r->set_num_group_elements(p.num_group_elements());
      r->set_sigma(p.sigma());
      break;
    }
    case v1::EncoderSpec::kNystrom: {
      const v1::NystromParams& p = e.nystrom();
      v1::NystromInfo* n = encoder->mutable_nystrom();
      n->set_num_landmarks(p.num_landmarks());
      n->set_num_group_elements(p.num_group_elements());
      n->set_sigma(p.sigma());
      n->set_rank(p.rank());
      n->set_eigen_cutoff(p.eigen_cutoff());
      break;
    }
    case v1::EncoderSpec::kSpectral: {
      const v1::SpectralParams& p = e.spectral();
      v1::SpectralInfo* s = encoder->mutable_spectral();
      s->set_dim(p.dim());
      s->set_budget(p.budget());
      *s->mutable_generators() = p.generators();
      s->set_num_invariant(p.num_invariant());
      s->set_tolerance(p.tolerance());
      s->set_num_basis(p.num_basis());
      s->set_max_level(p.max_level());
      break;
    }
    case v1::EncoderSpec::PARAMS_NOT_SET:
      break;
  }
  if (e.has_group()) *encoder->mutable_group() = e.group();
  encoder->set_seed(e.seed());
  *encoder->mutable_input_shape() = e.input_shape();

  if (manifest.has_head()) {
    const v1::LinearHead& h = manifest.head();
    v1::HeadInfo* head = out->mutable_head();
    head->set_task(h.task());
    *head->mutable_class_names() = h.class_names();
    head->set_lambda(h.lambda());
    *head->mutable_target_names() = h.target_names();
  }
  if (manifest.has_certificate()) {
    const v1::InvarianceCertificate& c = manifest.certificate();
    v1::CertificateInfo* certificate = out->mutable_certificate();
    certificate->set_max_discrepancy(c.max_discrepancy());
    certificate->set_mean_discrepancy(c.mean_discrepancy());
    certificate->set_relative_max_discrepancy(c.relative_max_discrepancy());
    certificate->set_num_points(c.num_points());
    certificate->set_num_group_elements(c.num_group_elements());
    certificate->set_exhaustive(c.exhaustive());
    certificate->set_method(c.method());
    certificate->set_generator_residual(c.generator_residual());
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
    constexpr size_t kEcho = 128;  // never echo more than a bounded prefix of client input
    return absl::NotFoundError(absl::StrCat("model_name: no model named '", name.substr(0, kEcho),
                                            name.size() > kEcho ? "…" : "", "'"));
  }
  return absl::OkStatus();
}

}  // namespace invariant::server
