#include "core/model/featurizer_factory.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/chain_encoder.h"
#include "core/encoders/nystrom_encoder.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/projector.h"
#include "core/encoders/random_fourier_encoder.h"
#include "core/encoders/second_layer_encoder.h"
#include "core/encoders/template_bank.h"
#include "core/groups/group_factory.h"
#include "core/spectral/spectral_proto.h"

namespace invariant {
namespace {

template <typename T>
absl::StatusOr<Array2D<T>> Find(const std::map<std::string, Array2D<T>>& map,
                                const std::string& name, int64_t rows, int64_t cols,
                                const char* what) {
  auto it = map.find(name);
  if (it == map.end()) {
    return absl::InvalidArgumentError(absl::StrCat("missing tensor '", name, "' (", what, ")"));
  }
  const Array2D<T>& a = it->second;
  if ((rows >= 0 && a.rows() != rows) || (cols >= 0 && a.cols() != cols)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name, "' must be ", rows < 0 ? std::string("any") : absl::StrCat(rows), " × ",
        cols < 0 ? std::string("any") : absl::StrCat(cols), " (", what, "), got ", a.rows(), " × ",
        a.cols()));
  }
  return a;
}

absl::Status Positive(const std::string& field, int64_t v) {
  if (v > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got ", v));
}

// The projector over "encoder/bank" for m templates and r group elements,
// honouring the group's placement.
absl::StatusOr<Projector> MakeProjector(const v1::EncoderSpec& spec, int64_t d, int64_t m,
                                        int64_t r, const ModelTensors& t) {
  RETURN_IF_ERROR(Positive("encoder: number of templates", m));
  RETURN_IF_ERROR(Positive("encoder: num_group_elements", r));
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec.group()));
  ASSIGN_OR_RETURN(Placement placement, ResolvePlacement(spec.group(), *q));
  if (q->action().dim() != d) {
    return absl::InvalidArgumentError(absl::StrCat("encoder.group acts on vectors of length ",
                                                   q->action().dim(), ", but input_dim is ", d));
  }
  if (placement == Placement::kInput) {
    ASSIGN_OR_RETURN(FloatMatrix templates, Find(t.f32, "encoder/bank", m, d, "m × input_dim"));
    return Projector::OverInput(std::move(templates), r,
                                std::shared_ptr<const GroupDistribution>(std::move(q)),
                                spec.seed());
  }
  ASSIGN_OR_RETURN(FloatMatrix rows, Find(t.f32, "encoder/bank", m * r, d, "m·r × input_dim"));
  ASSIGN_OR_RETURN(TemplateBank bank, TemplateBank::FromRows(std::move(rows), m, r));
  return Projector::OverBank(std::move(bank));
}

absl::StatusOr<std::shared_ptr<const Encoder>> MakeEncoder(const v1::Manifest& manifest,
                                                           const ModelTensors& t) {
  const v1::EncoderSpec& spec = manifest.encoder();
  const int64_t d = manifest.input_dim();
  switch (spec.params_case()) {
    case v1::EncoderSpec::kCdf: {
      const v1::CdfParams& p = spec.cdf();
      ASSIGN_OR_RETURN(Projector projector,
                       MakeProjector(spec, d, p.num_templates(), p.num_group_elements(), t));
      CdfOptions o;
      o.pooling = static_cast<Pooling>(p.pooling());
      o.num_bins = p.num_bins();
      o.range = p.range();
      return CdfEncoder::Create(o, std::move(projector));
    }
    case v1::EncoderSpec::kRandomFourier: {
      const v1::RandomFourierParams& p = spec.random_fourier();
      ASSIGN_OR_RETURN(Projector projector,
                       MakeProjector(spec, d, p.num_features(), p.num_group_elements(), t));
      RandomFourierOptions o;
      o.sigma = p.sigma();
      return RandomFourierEncoder::Create(o, std::move(projector));
    }
    case v1::EncoderSpec::kNystrom: {
      const v1::NystromParams& p = spec.nystrom();
      ASSIGN_OR_RETURN(Projector projector,
                       MakeProjector(spec, d, p.num_landmarks(), p.num_group_elements(), t));
      ASSIGN_OR_RETURN(FloatMatrix projection,
                       Find(t.f32, "encoder/projection", p.rank(), p.num_landmarks(),
                            "rank × num_landmarks"));
      NystromOptions o;
      o.sigma = p.sigma();
      o.eigen_cutoff = p.eigen_cutoff();
      return NystromEncoder::Create(o, std::move(projector), std::move(projection));
    }
    case v1::EncoderSpec::kSpectral: {
      const v1::SpectralParams& p = spec.spectral();
      if (p.dim() != d) {
        return absl::InvalidArgumentError(
            absl::StrCat("encoder.spectral.dim must equal input_dim ", d, ", got ", p.dim()));
      }
      SpectralTensors st;
      ASSIGN_OR_RETURN(st.basis, Find(t.i32, "encoder/spectral_basis", -1, d, "basis × dim"));
      ASSIGN_OR_RETURN(st.combination_index,
                       Find(t.i32, "encoder/spectral_combination_index", -1, 2, "nnz × 2"));
      ASSIGN_OR_RETURN(st.combination_value,
                       Find(t.f64, "encoder/spectral_combination_value",
                            st.combination_index.rows(), 1, "nnz × 1"));
      return SpectralEncoderFromProto(p, std::move(st));
    }
    case v1::EncoderSpec::PARAMS_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "manifest.encoder must set one of cdf, random_fourier, nystrom, spectral; got none");
}

}  // namespace

std::string EncoderKindName(const v1::EncoderSpec& spec) {
  switch (spec.params_case()) {
    case v1::EncoderSpec::kCdf: return "cdf";
    case v1::EncoderSpec::kRandomFourier: return "random_fourier";
    case v1::EncoderSpec::kNystrom: return "nystrom";
    case v1::EncoderSpec::kSpectral: return "spectral";
    case v1::EncoderSpec::PARAMS_NOT_SET: break;
  }
  return "none";
}

absl::StatusOr<std::shared_ptr<const Encoder>> MakeFeaturizer(const v1::Manifest& manifest,
                                                              const ModelTensors& t) {
  const int64_t d = manifest.input_dim();
  RETURN_IF_ERROR(Positive("manifest.input_dim", d));
  std::vector<std::shared_ptr<const Encoder>> stages;
  const v1::Preprocess& pre = manifest.preprocess();
  if (pre.center() || pre.scale() || pre.l2_normalize()) {
    FloatMatrix mean, scale;
    if (pre.center()) {
      ASSIGN_OR_RETURN(mean, Find(t.f32, "preprocess/mean", 1, d, "1 × input_dim"));
    }
    if (pre.scale()) {
      ASSIGN_OR_RETURN(scale, Find(t.f32, "preprocess/scale", 1, d, "1 × input_dim"));
    }
    PreprocessOptions o{pre.center(), pre.scale(), pre.l2_normalize()};
    ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> stage,
                     PreprocessEncoder::Create(o, d, std::move(mean), std::move(scale)));
    stages.push_back(std::move(stage));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> encoder, MakeEncoder(manifest, t));
  if (manifest.has_second_layer()) {
    const v1::SecondLayerParams& p = manifest.second_layer();
    ASSIGN_OR_RETURN(FloatMatrix freqs, Find(t.f32, "second_layer/frequencies",
                                             p.num_features(), encoder->d_out(),
                                             "num_features × encoder features"));
    SecondLayerOptions o{p.sigma(), p.seed()};
    ASSIGN_OR_RETURN(encoder, SecondLayerEncoder::Create(o, encoder, std::move(freqs)));
  }
  stages.push_back(std::move(encoder));
  if (stages.size() == 1) return stages.front();
  ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> chain, ChainEncoder::Create(std::move(stages)));
  return chain;
}

}  // namespace invariant
