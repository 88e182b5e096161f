#include "core/model/encoder_kinds.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/projector.h"
#include "core/encoders/random_fourier_encoder.h"
#include "core/encoders/templates.h"
#include "core/model/bank_tensors.h"
#include "core/model/patch_kind.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/spectral_proto.h"

namespace invariant {
namespace {

constexpr char kNystromProjectionTensor[] = "encoder/projection";

// ---- cdf

absl::Status ValidateCdf(v1::EncoderSpec& e) {
  v1::CdfParams& p = *e.mutable_cdf();
  RETURN_IF_ERROR(CheckFieldRange("encoder.cdf.num_templates", p.num_templates(), 1, 1e6));
  RETURN_IF_ERROR(CheckBankDtype(e));
  RETURN_IF_ERROR(CheckGroupElements(e, "encoder.cdf.num_group_elements", p.num_group_elements()));
  if (p.pooling() == v1::POOLING_UNSPECIFIED) p.set_pooling(v1::POOLING_CDF);
  if (p.pooling() == v1::POOLING_CDF) {
    RETURN_IF_ERROR(CheckFieldRange("encoder.cdf.num_bins", p.num_bins(), 1, 1000));
    if (p.range() == 0) p.set_range(1.0);
    RETURN_IF_ERROR(CheckFieldPositive("encoder.cdf.range", p.range()));
  }
  if (p.template_kind() == v1::TEMPLATE_KIND_UNSPECIFIED) {
    p.set_template_kind(v1::TEMPLATE_GAUSSIAN_REJECTION);
  }
  if (p.template_kind() == v1::TEMPLATE_GAUSSIAN) {
    return absl::InvalidArgumentError(
        "encoder.cdf.template_kind must be one of GAUSSIAN_REJECTION, SPHERE, "
        "STANDARD_NORMAL, DATA, got TEMPLATE_GAUSSIAN");
  }
  if (p.epsilon() == 0) p.set_epsilon(0.1);
  return absl::OkStatus();
}

absl::Status DrawCdf(v1::EncoderSpec& spec, const EncoderTrainingData& data, ModelTensors& t) {
  v1::CdfParams& p = *spec.mutable_cdf();
  FloatMatrix templates;
  if (p.template_kind() == v1::TEMPLATE_DATA) {
    ASSIGN_OR_RETURN(templates, data.draw_rows(p.num_templates(), spec.seed()));
  } else {
    TemplateOptions o;
    o.kind = static_cast<TemplateKind>(p.template_kind());
    o.num_templates = p.num_templates();
    o.epsilon = p.epsilon();
    Rng rng = Rng::ForStream(spec.seed(), 1);
    ASSIGN_OR_RETURN(templates, SampleTemplates(o, data.input_dim, nullptr, rng));
  }
  ASSIGN_OR_RETURN(int64_t r, DrawBank(spec, templates, p.num_group_elements(), t));
  p.set_num_group_elements(static_cast<int32_t>(r));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Encoder>> LoadCdf(const v1::EncoderSpec& spec, int64_t d,
                                                       const ModelTensors& t) {
  const v1::CdfParams& p = spec.cdf();
  if (p.pooling() == v1::POOLING_CDF) {  // a loaded manifest: 2n + 1 features per template
    RETURN_IF_ERROR(CheckFieldRange("encoder.cdf.num_bins", p.num_bins(), 1, 1000));
  }
  ASSIGN_OR_RETURN(Projector projector,
                   LoadProjector(spec, d, p.num_templates(), p.num_group_elements(), t));
  CdfOptions o;
  o.pooling = static_cast<Pooling>(p.pooling());
  o.num_bins = p.num_bins();
  o.range = p.range();
  return CdfEncoder::Create(o, std::move(projector));
}

// ---- random_fourier

absl::Status ValidateRandomFourier(v1::EncoderSpec& e) {
  const v1::RandomFourierParams& p = e.random_fourier();
  RETURN_IF_ERROR(CheckFieldRange("encoder.random_fourier.num_features", p.num_features(), 1, 1e6));
  RETURN_IF_ERROR(CheckBankDtype(e));
  RETURN_IF_ERROR(
      CheckGroupElements(e, "encoder.random_fourier.num_group_elements", p.num_group_elements()));
  return CheckFieldPositive("encoder.random_fourier.sigma", p.sigma());
}

absl::Status DrawRandomFourier(v1::EncoderSpec& spec, const EncoderTrainingData& data,
                               ModelTensors& t) {
  v1::RandomFourierParams& p = *spec.mutable_random_fourier();
  Rng rng = Rng::ForStream(spec.seed(), 1);
  ASSIGN_OR_RETURN(FloatMatrix freqs,
                   SampleGaussianTemplates(p.num_features(), data.input_dim, p.sigma(), rng));
  ASSIGN_OR_RETURN(int64_t r, DrawBank(spec, freqs, p.num_group_elements(), t));
  p.set_num_group_elements(static_cast<int32_t>(r));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Encoder>> LoadRandomFourier(const v1::EncoderSpec& spec,
                                                                 int64_t d, const ModelTensors& t) {
  const v1::RandomFourierParams& p = spec.random_fourier();
  ASSIGN_OR_RETURN(Projector projector,
                   LoadProjector(spec, d, p.num_features(), p.num_group_elements(), t));
  RandomFourierOptions o;
  o.sigma = p.sigma();
  return RandomFourierEncoder::Create(o, std::move(projector));
}

// ---- nystrom

absl::Status ValidateNystrom(v1::EncoderSpec& e) {
  v1::NystromParams& p = *e.mutable_nystrom();
  RETURN_IF_ERROR(CheckFieldRange("encoder.nystrom.num_landmarks", p.num_landmarks(), 1, 1e5));
  RETURN_IF_ERROR(CheckBankDtype(e));
  RETURN_IF_ERROR(
      CheckGroupElements(e, "encoder.nystrom.num_group_elements", p.num_group_elements()));
  RETURN_IF_ERROR(CheckFieldPositive("encoder.nystrom.sigma", p.sigma()));
  if (p.eigen_cutoff() == 0) p.set_eigen_cutoff(1e-6);
  return absl::OkStatus();
}

absl::Status DrawNystrom(v1::EncoderSpec& spec, const EncoderTrainingData& data, ModelTensors& t) {
  v1::NystromParams& p = *spec.mutable_nystrom();
  ASSIGN_OR_RETURN(FloatMatrix landmarks, data.draw_rows(p.num_landmarks(), spec.seed()));
  NystromOptions o;
  o.sigma = p.sigma();
  o.eigen_cutoff = p.eigen_cutoff();
  ASSIGN_OR_RETURN(FloatMatrix projection, ComputeNystromProjection(landmarks, o));
  p.set_rank(static_cast<int32_t>(projection.rows()));
  t.f32[kNystromProjectionTensor] = std::move(projection);
  ASSIGN_OR_RETURN(int64_t r, DrawBank(spec, landmarks, p.num_group_elements(), t));
  p.set_num_group_elements(static_cast<int32_t>(r));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Encoder>> LoadNystrom(const v1::EncoderSpec& spec, int64_t d,
                                                           const ModelTensors& t) {
  const v1::NystromParams& p = spec.nystrom();
  ASSIGN_OR_RETURN(Projector projector,
                   LoadProjector(spec, d, p.num_landmarks(), p.num_group_elements(), t));
  ASSIGN_OR_RETURN(FloatMatrix projection,
                   RequireTensor(t.f32, kNystromProjectionTensor, p.rank(), p.num_landmarks(),
                                 "rank × num_landmarks"));
  NystromOptions o;
  o.sigma = p.sigma();
  o.eigen_cutoff = p.eigen_cutoff();
  return NystromEncoder::Create(o, std::move(projector), std::move(projection));
}

// ---- spectral

absl::Status ValidateSpectral(v1::EncoderSpec& e) {
  const v1::SpectralParams& p = e.spectral();
  RETURN_IF_ERROR(CheckFieldRange("encoder.spectral.dim", p.dim(), 1, 64));
  if (e.bank_dtype() != v1::BANK_DTYPE_FLOAT32) {
    return absl::InvalidArgumentError(
        "encoder.bank_dtype must be BANK_DTYPE_FLOAT32 (unset) for spectral, which has no bank");
  }
  if (p.generators().empty()) {
    return absl::InvalidArgumentError(
        "encoder.spectral.generators must name at least one generator, got none");
  }
  return absl::OkStatus();
}

absl::Status DrawSpectral(v1::EncoderSpec& spec, const EncoderTrainingData& data, ModelTensors& t) {
  v1::SpectralParams& p = *spec.mutable_spectral();
  if (p.budget() == 0) {
    p.set_budget(static_cast<int32_t>(DefaultSpecAvgBudget(data.train_rows, 1.0)));
  }
  ASSIGN_OR_RETURN(SpectralEncoderOptions o, SpectralOptionsFromProto(p));
  ASSIGN_OR_RETURN(std::unique_ptr<SpectralEncoder> enc, SpectralEncoder::Build(o));
  p = SpectralParamsToProto(*enc);
  t.i32[kSpectralBasisTensor] = enc->tensors().basis;
  t.i32[kSpectralCombinationIndexTensor] = enc->tensors().combination_index;
  t.f64[kSpectralCombinationValueTensor] = enc->tensors().combination_value;
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Encoder>> LoadSpectral(const v1::EncoderSpec& spec, int64_t d,
                                                            const ModelTensors& t) {
  const v1::SpectralParams& p = spec.spectral();
  if (p.dim() != d) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.spectral.dim must equal input_dim ", d, ", got ", p.dim()));
  }
  SpectralTensors st;
  ASSIGN_OR_RETURN(st.basis, RequireTensor(t.i32, kSpectralBasisTensor, -1, d, "basis × dim"));
  ASSIGN_OR_RETURN(st.combination_index,
                   RequireTensor(t.i32, kSpectralCombinationIndexTensor, -1, 2, "nnz × 2"));
  ASSIGN_OR_RETURN(st.combination_value, RequireTensor(t.f64, kSpectralCombinationValueTensor,
                                                       st.combination_index.rows(), 1, "nnz × 1"));
  return SpectralEncoderFromProto(p, std::move(st));
}

constexpr EncoderKind kKinds[] = {
    {"cdf", v1::EncoderSpec::kCdf, true, ValidateCdf, DrawCdf, LoadCdf},
    {"random_fourier", v1::EncoderSpec::kRandomFourier, true, ValidateRandomFourier,
     DrawRandomFourier, LoadRandomFourier},
    {"nystrom", v1::EncoderSpec::kNystrom, true, ValidateNystrom, DrawNystrom, LoadNystrom},
    {"spectral", v1::EncoderSpec::kSpectral, false, ValidateSpectral, DrawSpectral, LoadSpectral},
    {"patch", v1::EncoderSpec::kPatch, true, ValidatePatchConfig, DrawPatchEncoder, LoadPatchKind},
};

}  // namespace

absl::Status CheckFieldRange(const std::string& field, double v, double lo, double hi) {
  if (v >= lo && v <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be in [", lo, ", ", hi, "], got ", v));
}

absl::Status CheckFieldPositive(const std::string& field, double v) {
  if (v > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got ", v));
}

absl::Span<const EncoderKind> EncoderKinds() { return kKinds; }

absl::StatusOr<const EncoderKind*> FindEncoderKind(const v1::EncoderSpec& spec,
                                                   const std::string& field) {
  for (const EncoderKind& kind : kKinds) {
    if (kind.params_case == spec.params_case()) return &kind;
  }
  std::vector<std::string> names;
  for (const EncoderKind& kind : kKinds) names.push_back(kind.name);
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must set one of ", absl::StrJoin(names, ", "), "; got none"));
}

std::string EncoderKindName(const v1::EncoderSpec& spec) {
  for (const EncoderKind& kind : kKinds) {
    if (kind.params_case == spec.params_case()) return kind.name;
  }
  return "none";
}

}  // namespace invariant
