#include "core/model/spectral_kind.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/spectral_proto.h"

namespace invariant {
namespace {

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

}  // namespace

const EncoderKind kSpectralKind = {
    "spectral", v1::EncoderSpec::kSpectral, false, ValidateSpectral, DrawSpectral, LoadSpectral};

}  // namespace invariant
