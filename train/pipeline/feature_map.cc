#include "train/pipeline/feature_map.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/template_bank.h"
#include "core/encoders/templates.h"
#include "core/groups/group_factory.h"
#include "core/spectral/spec_avg.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/spectral_proto.h"
#include "train/data/splits.h"

namespace invariant::train {
namespace {

// Per-coordinate mean and standard deviation of the training rows.
absl::Status FitPreprocess(const v1::Preprocess& pre, DataPlan& plan, int64_t block_rows,
                           ModelTensors& t) {
  if (!pre.center() && !pre.scale()) return absl::OkStatus();
  ColumnStatistics stats(plan.schema.dim);
  RETURN_IF_ERROR(ForEachTrainBlock(plan, block_rows, 0, 1, [&](const TrainBlock& b) {
    stats.Add(b.n, b.x);
    return absl::OkStatus();
  }));
  FloatMatrix mean = stats.Mean(), scale = stats.Scale();
  if (pre.center()) t.f32["preprocess/mean"] = std::move(mean);
  if (pre.scale()) t.f32["preprocess/scale"] = std::move(scale);
  return absl::OkStatus();
}

// m distinct training rows (seeded), preprocessed like every input.
absl::StatusOr<FloatMatrix> DrawLandmarks(int64_t m, uint64_t seed, DataPlan& plan,
                                          int64_t block_rows, const Encoder* preprocess) {
  if (m > plan.train_rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.nystrom.num_landmarks must be <= the training rows (",
                     plan.train_rows, "), got ", m));
  }
  std::vector<int64_t> order = ShuffledIndices(plan.train_rows, seed);
  std::vector<int64_t> pick(order.begin(), order.begin() + m);
  std::sort(pick.begin(), pick.end());
  const int64_t d = plan.schema.dim;
  FloatMatrix raw = FloatMatrix::Zeros(m, d);
  int64_t ordinal = 0, next = 0;
  RETURN_IF_ERROR(ForEachTrainBlock(plan, block_rows, 0, 1, [&](const TrainBlock& b) {
    for (int64_t i = 0; i < b.n && next < m; ++i, ++ordinal) {
      if (ordinal != pick[static_cast<size_t>(next)]) continue;
      std::memcpy(raw.mutable_row(next++), b.x + i * d, sizeof(float) * d);
    }
    return absl::OkStatus();
  }));
  if (preprocess == nullptr) return raw;
  FloatMatrix out = FloatMatrix::Zeros(m, d);
  preprocess->Encode(m, raw.data(), out.mutable_data());
  return out;
}

TemplateOptions CdfTemplateOptions(const v1::CdfParams& p) {
  TemplateOptions o;
  o.kind = static_cast<TemplateKind>(p.template_kind());
  o.num_templates = p.num_templates();
  o.epsilon = p.epsilon();
  return o;
}

// Fills "encoder/bank" for the template-based encoders and returns r.
absl::StatusOr<int64_t> BuildBank(const v1::EncoderSpec& spec, const FloatMatrix& templates,
                                  int64_t r, ModelTensors& t) {
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec.group()));
  ASSIGN_OR_RETURN(Placement placement, ResolvePlacement(spec.group(), *q));
  if (q->action().dim() != templates.cols()) {
    return absl::InvalidArgumentError(absl::StrCat("encoder.group acts on vectors of length ",
                                                   q->action().dim(), ", but the data rows have ",
                                                   templates.cols(), " values"));
  }
  if (placement == Placement::kInput) {
    if (spec.group().enumerate()) r = static_cast<int64_t>(q->Enumerate().size());
    t.f32["encoder/bank"] = templates;
    return r;
  }
  Rng rng = Rng::ForStream(spec.seed(), 2);
  ASSIGN_OR_RETURN(TemplateBank bank,
                   TemplateBank::Sample(templates, *q, r, spec.group().enumerate(), rng));
  t.f32["encoder/bank"] = bank.rows();
  return bank.num_group_elements();
}

absl::Status BuildEncoder(v1::EncoderSpec& spec, DataPlan& plan, int64_t block_rows,
                          const Encoder* preprocess, ModelTensors& t) {
  const int64_t d = plan.schema.dim;
  Rng rng = Rng::ForStream(spec.seed(), 1);
  switch (spec.params_case()) {
    case v1::EncoderSpec::kCdf: {
      v1::CdfParams& p = *spec.mutable_cdf();
      FloatMatrix templates;
      if (p.template_kind() == v1::TEMPLATE_DATA) {
        ASSIGN_OR_RETURN(
            templates, DrawLandmarks(p.num_templates(), spec.seed(), plan, block_rows, preprocess));
      } else {
        ASSIGN_OR_RETURN(templates, SampleTemplates(CdfTemplateOptions(p), d, nullptr, rng));
      }
      ASSIGN_OR_RETURN(int64_t r, BuildBank(spec, templates, p.num_group_elements(), t));
      p.set_num_group_elements(static_cast<int32_t>(r));
      return absl::OkStatus();
    }
    case v1::EncoderSpec::kRandomFourier: {
      v1::RandomFourierParams& p = *spec.mutable_random_fourier();
      ASSIGN_OR_RETURN(FloatMatrix freqs,
                       SampleGaussianTemplates(p.num_features(), d, p.sigma(), rng));
      ASSIGN_OR_RETURN(int64_t r, BuildBank(spec, freqs, p.num_group_elements(), t));
      p.set_num_group_elements(static_cast<int32_t>(r));
      return absl::OkStatus();
    }
    case v1::EncoderSpec::kNystrom: {
      v1::NystromParams& p = *spec.mutable_nystrom();
      ASSIGN_OR_RETURN(FloatMatrix landmarks,
                       DrawLandmarks(p.num_landmarks(), spec.seed(), plan, block_rows, preprocess));
      NystromOptions o;
      o.sigma = p.sigma();
      o.eigen_cutoff = p.eigen_cutoff();
      ASSIGN_OR_RETURN(FloatMatrix projection, ComputeNystromProjection(landmarks, o));
      p.set_rank(static_cast<int32_t>(projection.rows()));
      t.f32["encoder/projection"] = std::move(projection);
      ASSIGN_OR_RETURN(int64_t r, BuildBank(spec, landmarks, p.num_group_elements(), t));
      p.set_num_group_elements(static_cast<int32_t>(r));
      return absl::OkStatus();
    }
    case v1::EncoderSpec::kSpectral: {
      v1::SpectralParams& p = *spec.mutable_spectral();
      if (p.budget() == 0) {
        p.set_budget(static_cast<int32_t>(DefaultSpecAvgBudget(plan.train_rows, 1.0)));
      }
      ASSIGN_OR_RETURN(SpectralEncoderOptions o, SpectralOptionsFromProto(p));
      ASSIGN_OR_RETURN(std::unique_ptr<SpectralEncoder> enc, SpectralEncoder::Build(o));
      p = SpectralParamsToProto(*enc);
      t.i32[kSpectralBasisTensor] = enc->tensors().basis;
      t.i32[kSpectralCombinationIndexTensor] = enc->tensors().combination_index;
      t.f64[kSpectralCombinationValueTensor] = enc->tensors().combination_value;
      return absl::OkStatus();
    }
    case v1::EncoderSpec::PARAMS_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "encoder must set one of cdf, random_fourier, nystrom, "
      "spectral; got none");
}

}  // namespace

absl::StatusOr<FeatureMap> BuildFeatureMap(const v1::TrainConfig& config, DataPlan& plan) {
  FeatureMap fm;
  v1::Manifest& m = fm.manifest;
  m.set_input_dim(plan.schema.dim);
  *m.mutable_preprocess() = config.preprocess();
  *m.mutable_encoder() = config.encoder();
  v1::EncoderSpec& spec = *m.mutable_encoder();
  if (spec.input_shape().empty()) {
    for (int64_t s : plan.schema.input_shape) spec.add_input_shape(s);
    if (spec.input_shape().empty()) spec.add_input_shape(plan.schema.dim);
  }
  RETURN_IF_ERROR(FitPreprocess(config.preprocess(), plan, config.block_rows(), fm.tensors));
  std::unique_ptr<PreprocessEncoder> preprocess;
  const v1::Preprocess& pre = config.preprocess();
  if (pre.center() || pre.scale() || pre.l2_normalize()) {
    auto tensor = [&](const char* name) {
      auto it = fm.tensors.f32.find(name);
      return it == fm.tensors.f32.end() ? FloatMatrix() : it->second;
    };
    PreprocessOptions o{pre.center(), pre.scale(), pre.l2_normalize()};
    ASSIGN_OR_RETURN(preprocess,
                     PreprocessEncoder::Create(o, plan.schema.dim, tensor("preprocess/mean"),
                                               tensor("preprocess/scale")));
  }
  RETURN_IF_ERROR(BuildEncoder(spec, plan, config.block_rows(), preprocess.get(), fm.tensors));
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> first, Model::Assemble(m, fm.tensors));
  if (config.has_second_layer()) {
    v1::SecondLayerParams p = config.second_layer();
    Rng rng(p.seed());
    ASSIGN_OR_RETURN(
        FloatMatrix freqs,
        SampleGaussianTemplates(p.num_features(), first->feature_dim(), p.sigma(), rng));
    fm.tensors.f32["second_layer/frequencies"] = std::move(freqs);
    *m.mutable_second_layer() = p;
    ASSIGN_OR_RETURN(first, Model::Assemble(m, fm.tensors));
  }
  m.set_feature_dim(first->feature_dim());
  fm.model = std::move(first);
  return fm;
}

}  // namespace invariant::train
