#include "core/model/featurizer_factory.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/encoders/chain_encoder.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/second_layer_encoder.h"
#include "core/model/encoder_kinds.h"

namespace invariant {

absl::StatusOr<std::shared_ptr<const Encoder>> MakeFeaturizer(const v1::Manifest& manifest,
                                                              const ModelTensors& t) {
  const int64_t d = manifest.input_dim();
  RETURN_IF_ERROR(CheckFieldPositive("manifest.input_dim", static_cast<double>(d)));
  std::vector<std::shared_ptr<const Encoder>> stages;
  const v1::Preprocess& pre = manifest.preprocess();
  if (pre.center() || pre.scale() || pre.l2_normalize()) {
    FloatMatrix mean, scale;
    if (pre.center()) {
      ASSIGN_OR_RETURN(mean, RequireTensor(t.f32, "preprocess/mean", 1, d, "1 × input_dim"));
    }
    if (pre.scale()) {
      ASSIGN_OR_RETURN(scale, RequireTensor(t.f32, "preprocess/scale", 1, d, "1 × input_dim"));
    }
    PreprocessOptions o{pre.center(), pre.scale(), pre.l2_normalize()};
    ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> stage,
                     PreprocessEncoder::Create(o, d, std::move(mean), std::move(scale)));
    stages.push_back(std::move(stage));
  }
  ASSIGN_OR_RETURN(const EncoderKind* kind,
                   FindEncoderKind(manifest.encoder(), "manifest.encoder"));
  ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> encoder, kind->load(manifest.encoder(), d, t));
  if (manifest.has_second_layer()) {
    const v1::SecondLayerParams& p = manifest.second_layer();
    ASSIGN_OR_RETURN(FloatMatrix freqs,
                     RequireTensor(t.f32, "second_layer/frequencies", p.num_features(),
                                   encoder->d_out(), "num_features × encoder features"));
    SecondLayerOptions o{p.sigma(), p.seed()};
    ASSIGN_OR_RETURN(encoder, SecondLayerEncoder::Create(o, encoder, std::move(freqs)));
  }
  stages.push_back(std::move(encoder));
  if (stages.size() == 1) return stages.front();
  ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> chain, ChainEncoder::Create(std::move(stages)));
  return chain;
}

}  // namespace invariant
