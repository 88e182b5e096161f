// nystrom_kind.h: the "nystrom" encoder kind (bundle.proto NystromParams,
// core/encoders/nystrom_encoder.h): its config checks and defaults, how a
// new model's landmarks and projection are drawn, and how the encoder is
// rebuilt over a bundle's tensors. encoder_kinds.h's table holds these as
// the "nystrom" descriptor.
//
// Config: num_landmarks in [1, 1e5]; bank_dtype and
// num_group_elements as bank_tensors.h checks them; sigma > 0; eigen_cutoff
// defaults to 1e-6.
// Draw: num_landmarks training rows (draw_rows with
// encoder.seed); "encoder/projection" rank × num_landmarks, the factor L of
// K_ZZ⁺ = LᵀL (ComputeNystromProjection; the rank recorded in
// encoder.nystrom.rank); "encoder/bank" is DrawBank's over the landmarks,
// and r is recorded in encoder.nystrom.num_group_elements.
//
// Errors are INVALID_ARGUMENT naming the field or tensor. Thread-safety: the
// descriptor is constant; its functions are reentrant.
#ifndef INVARIANT_CORE_MODEL_NYSTROM_KIND_H_
#define INVARIANT_CORE_MODEL_NYSTROM_KIND_H_

#include "core/model/encoder_kind.h"

namespace invariant {

// The "nystrom" descriptor, a row of encoder_kinds.h's table.
extern const EncoderKind kNystromKind;

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_NYSTROM_KIND_H_
