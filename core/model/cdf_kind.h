// cdf_kind.h: the "cdf" encoder kind (bundle.proto CdfParams,
// core/encoders/cdf_encoder.h): its config checks and defaults, how a new
// model's bank is drawn, and how the encoder is rebuilt over a bundle's
// tensors. encoder_kinds.h's table holds these as the "cdf" descriptor.
//
// Config: num_templates in [1, 1e6]; bank_dtype and
// num_group_elements as bank_tensors.h checks them; pooling defaults to CDF,
// which needs num_bins in [1, 1000] and range > 0 (default 1); template_kind
// defaults to GAUSSIAN_REJECTION (GAUSSIAN is refused); epsilon defaults to
// 0.1.
// Draw: the templates are num_templates training rows
// (template_kind DATA, draw_rows with encoder.seed) or SampleTemplates
// (Rng::ForStream(seed, 1)); "encoder/bank" is DrawBank's, and r is recorded
// in encoder.cdf.num_group_elements.
//
// Errors are INVALID_ARGUMENT naming the field or tensor. Thread-safety: the
// descriptor is constant; its functions are reentrant.
#ifndef INVARIANT_CORE_MODEL_CDF_KIND_H_
#define INVARIANT_CORE_MODEL_CDF_KIND_H_

#include "core/model/encoder_kind.h"

namespace invariant {

// The "cdf" descriptor, a row of encoder_kinds.h's table.
extern const EncoderKind kCdfKind;

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_CDF_KIND_H_
