#include "core/model/nystrom_kind.h"

#include <memory>
#include <utility>

#include "core/base/status_macros.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/projector.h"
#include "core/model/bank_tensors.h"

namespace invariant {
namespace {

constexpr char kNystromProjectionTensor[] = "encoder/projection";

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
  return DrawBankInto(spec, landmarks, p, t);
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

}  // namespace

const EncoderKind kNystromKind = {
    "nystrom", v1::EncoderSpec::kNystrom, true, ValidateNystrom, DrawNystrom, LoadNystrom};

}  // namespace invariant
