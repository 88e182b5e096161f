#include "core/model/random_fourier_kind.h"

#include <memory>
#include <utility>

#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/projector.h"
#include "core/encoders/random_fourier_encoder.h"
#include "core/encoders/templates.h"
#include "core/model/bank_tensors.h"

namespace invariant {
namespace {

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
  return DrawBankInto(spec, freqs, p, t);
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

}  // namespace

const EncoderKind kRandomFourierKind = {"random_fourier",
                                        v1::EncoderSpec::kRandomFourier,
                                        true,
                                        ValidateRandomFourier,
                                        DrawRandomFourier,
                                        LoadRandomFourier};

}  // namespace invariant
