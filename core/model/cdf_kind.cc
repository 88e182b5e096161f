#include "core/model/cdf_kind.h"

#include <memory>
#include <utility>

#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/projector.h"
#include "core/encoders/templates.h"
#include "core/model/bank_tensors.h"

namespace invariant {
namespace {

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
  return DrawBankInto(spec, templates, p, t);
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

}  // namespace

const EncoderKind kCdfKind = {"cdf", v1::EncoderSpec::kCdf, true, ValidateCdf, DrawCdf, LoadCdf};

}  // namespace invariant
