#include "core/model/encoder_kinds.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/base/bf16.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/projector.h"
#include "core/encoders/random_fourier_encoder.h"
#include "core/encoders/template_bank.h"
#include "core/encoders/templates.h"
#include "core/groups/group_factory.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/spectral_proto.h"

namespace invariant {
namespace {

constexpr char kBankTensor[] = "encoder/bank";
constexpr char kNystromProjectionTensor[] = "encoder/projection";
constexpr char kGroupElementsTensor[] = "encoder/group_elements";

// ---- Template-based kinds (cdf, random_fourier, nystrom): shared parts.

// Validates num_group_elements unless the group is enumerated.
absl::Status CheckGroupElements(const v1::EncoderSpec& spec, const std::string& field, int64_t r) {
  if (spec.group().enumerate()) return absl::OkStatus();
  // The identity has one element: r copies of it would cost r times the
  // compute for the same map (and round differently than the plain one).
  if (spec.group().has_identity()) return CheckFieldRange(field, static_cast<double>(r), 1, 1);
  return CheckFieldRange(field, static_cast<double>(r), 1, 1e5);
}

// Stores `rows` as "encoder/bank" in the spec's bank_dtype.
void StoreBank(const v1::EncoderSpec& spec, const FloatMatrix& rows, ModelTensors& t) {
  if (spec.bank_dtype() == v1::BANK_DTYPE_BF16) {
    t.bf16[kBankTensor] = RoundToBf16(rows);
  } else {
    t.f32[kBankTensor] = rows;
  }
}

BankDtype ToBankDtype(const v1::EncoderSpec& spec) {
  return spec.bank_dtype() == v1::BANK_DTYPE_BF16 ? BankDtype::kBfloat16 : BankDtype::kFloat32;
}

// Fills "encoder/bank" from the templates and returns r (|G| when enumerated).
// Input placement stores the templates alone and, when the distribution does
// not depend on the input, the r elements drawn now as
// "encoder/group_elements" (r × parameters, float64): every request then
// applies those same elements (Projector::OverInputOrbit).
absl::StatusOr<int64_t> DrawBank(const v1::EncoderSpec& spec, const FloatMatrix& templates,
                                 int64_t r, ModelTensors& t) {
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec.group()));
  ASSIGN_OR_RETURN(Placement placement, ResolvePlacement(spec.group(), *q));
  if (q->action().dim() != templates.cols()) {
    return absl::InvalidArgumentError(absl::StrCat("encoder.group acts on vectors of length ",
                                                   q->action().dim(), ", but the data rows have ",
                                                   templates.cols(), " values"));
  }
  Rng rng = Rng::ForStream(spec.seed(), 2);
  if (placement == Placement::kInput) {
    StoreBank(spec, templates, t);
    if (q->depends_on_input()) {
      if (spec.group().enumerate()) r = static_cast<int64_t>(q->Enumerate().size());
      return r;
    }
    ASSIGN_OR_RETURN(std::vector<GroupElement> elements,
                     DrawGroupElements(*q, r, spec.group().enumerate(), rng));
    const int64_t params = static_cast<int64_t>(elements.front().params.size());
    DoubleMatrix table = DoubleMatrix::Zeros(static_cast<int64_t>(elements.size()), params);
    for (size_t k = 0; k < elements.size(); ++k) {
      if (static_cast<int64_t>(elements[k].params.size()) != params) {
        return absl::InternalError(absl::StrCat(q->name(), " drew elements of ", params, " and ",
                                                elements[k].params.size(), " parameters"));
      }
      std::copy(elements[k].params.begin(), elements[k].params.end(),
                table.mutable_row(static_cast<int64_t>(k)));
    }
    t.f64[kGroupElementsTensor] = std::move(table);
    return static_cast<int64_t>(elements.size());
  }
  ASSIGN_OR_RETURN(TemplateBank bank,
                   TemplateBank::Sample(templates, *q, r, spec.group().enumerate(), rng));
  StoreBank(spec, bank.rows(), t);
  return bank.num_group_elements();
}

// The m × d templates of an input-placement model, widened to float when
// stored as bf16 (exact).
absl::StatusOr<FloatMatrix> LoadTemplates(const v1::EncoderSpec& spec, int64_t m, int64_t d,
                                          const ModelTensors& t) {
  if (spec.bank_dtype() != v1::BANK_DTYPE_BF16) {
    return RequireTensor(t.f32, kBankTensor, m, d, "m × input_dim");
  }
  ASSIGN_OR_RETURN(Bf16Matrix rows16,
                   RequireTensor(t.bf16, kBankTensor, m, d, "m × input_dim, DTYPE_BFLOAT16"));
  FloatMatrix rows = FloatMatrix::Zeros(m, d);
  for (int64_t i = 0; i < m * d; ++i) rows.mutable_data()[i] = Bf16Value(rows16.data()[i]);
  return rows;
}

// The projector over "encoder/bank" for m templates and r group elements,
// honouring the group's placement.
absl::StatusOr<Projector> LoadProjector(const v1::EncoderSpec& spec, int64_t d, int64_t m,
                                        int64_t r, const ModelTensors& t) {
  RETURN_IF_ERROR(CheckFieldPositive("encoder: number of templates", static_cast<double>(m)));
  RETURN_IF_ERROR(CheckFieldPositive("encoder: num_group_elements", static_cast<double>(r)));
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec.group()));
  ASSIGN_OR_RETURN(Placement placement, ResolvePlacement(spec.group(), *q));
  if (q->action().dim() != d) {
    return absl::InvalidArgumentError(absl::StrCat("encoder.group acts on vectors of length ",
                                                   q->action().dim(), ", but input_dim is ", d));
  }
  if (placement == Placement::kInput) {
    ASSIGN_OR_RETURN(FloatMatrix templates, LoadTemplates(spec, m, d, t));
    std::shared_ptr<const GroupDistribution> shared(std::move(q));
    if (t.f64.count(kGroupElementsTensor) == 0) {
      return Projector::OverInput(std::move(templates), r, std::move(shared), spec.seed(),
                                  ToBankDtype(spec));
    }
    ASSIGN_OR_RETURN(DoubleMatrix table, RequireTensor(t.f64, kGroupElementsTensor, r, -1,
                                                       "num_group_elements × parameters"));
    std::vector<GroupElement> elements(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      elements[static_cast<size_t>(k)].params.assign(table.row(k), table.row(k) + table.cols());
    }
    return Projector::OverInputOrbit(std::move(templates), std::move(shared), elements,
                                     ToBankDtype(spec));
  }
  if (spec.bank_dtype() == v1::BANK_DTYPE_BF16) {
    ASSIGN_OR_RETURN(Bf16Matrix rows16, RequireTensor(t.bf16, kBankTensor, m * r, d,
                                                      "m·r × input_dim, DTYPE_BFLOAT16"));
    return Projector::OverBf16Bank(std::move(rows16), m, r);
  }
  ASSIGN_OR_RETURN(FloatMatrix rows,
                   RequireTensor(t.f32, kBankTensor, m * r, d, "m·r × input_dim"));
  ASSIGN_OR_RETURN(TemplateBank bank, TemplateBank::FromRows(std::move(rows), m, r));
  return Projector::OverBank(std::move(bank));
}

// Checks encoder.bank_dtype (shared by the template-based kinds).
absl::Status CheckBankDtype(const v1::EncoderSpec& spec) {
  if (spec.bank_dtype() == v1::BANK_DTYPE_FLOAT32 || spec.bank_dtype() == v1::BANK_DTYPE_BF16) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("encoder.bank_dtype must be BANK_DTYPE_FLOAT32 or BANK_DTYPE_BF16, got ",
                   static_cast<int>(spec.bank_dtype())));
}

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
