// spectral_kind.h: the "spectral" encoder kind (bundle.proto SpectralParams,
// core/spectral/spectral_encoder.h): its config checks, how a new model's
// basis is built, and how the encoder is rebuilt over a bundle's tensors.
// encoder_kinds.h's table holds these as the "spectral" descriptor; it is
// the one kind without encoder.group (its group is the torus generators').
//
// Config: dim in [1, 64]; bank_dtype unset or
// FLOAT32 (there is no bank); at least one generator.
// Draw: budget defaults to DefaultSpecAvgBudget of the
// training rows; SpectralEncoder::Build, its parameters written back to
// encoder.spectral and its tensors stored as the spectral basis, combination
// index and combination value tensors (spectral_encoder.h).
// Load: encoder.spectral.dim must equal input_dim.
//
// Errors are INVALID_ARGUMENT naming the field or tensor. Thread-safety: the
// descriptor is constant; its functions are reentrant.
#ifndef INVARIANT_CORE_MODEL_SPECTRAL_KIND_H_
#define INVARIANT_CORE_MODEL_SPECTRAL_KIND_H_

#include "core/model/encoder_kind.h"

namespace invariant {

// The "spectral" descriptor, a row of encoder_kinds.h's table.
extern const EncoderKind kSpectralKind;

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_SPECTRAL_KIND_H_
