// random_fourier_kind.h: the "random_fourier" encoder kind (bundle.proto
// RandomFourierParams, core/encoders/random_fourier_encoder.h): its config
// checks, how a new model's bank is drawn, and how the encoder is rebuilt
// over a bundle's tensors. encoder_kinds.h's table holds these as the
// "random_fourier" descriptor.
//
// Config: num_features in [1, 1e6]; bank_dtype
// and num_group_elements as bank_tensors.h checks them; sigma > 0.
// Draw: num_features frequencies ω ~
// N(0, sigma⁻² I) (SampleGaussianTemplates, Rng::ForStream(seed, 1));
// "encoder/bank" is DrawBank's, and r is recorded in
// encoder.random_fourier.num_group_elements.
//
// Errors are INVALID_ARGUMENT naming the field or tensor. Thread-safety: the
// descriptor is constant; its functions are reentrant.
#ifndef INVARIANT_CORE_MODEL_RANDOM_FOURIER_KIND_H_
#define INVARIANT_CORE_MODEL_RANDOM_FOURIER_KIND_H_

#include "core/model/encoder_kind.h"

namespace invariant {

// The "random_fourier" descriptor, a row of encoder_kinds.h's table.
extern const EncoderKind kRandomFourierKind;

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_RANDOM_FOURIER_KIND_H_
