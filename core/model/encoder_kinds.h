// encoder_kinds.h: THE table of encoder kinds (cdf, random_fourier, nystrom,
// spectral, patch), one descriptor each (EncoderKind, encoder_kind.h).
//
// The rule: every kind lives in its own file, core/model/<kind>_kind.{h,cc}
// (cdf_kind, random_fourier_kind, nystrom_kind, spectral_kind, patch_kind),
// which defines its descriptor k<Kind>Kind: how its config is checked, how
// its tensors are drawn and how its encoder is rebuilt. This file holds only
// the table of those descriptors and the look-ups over it. The training job
// (config checks, feature map), the model loader (featurizer_factory.h) and
// every place that names a kind (reports, metadata, metrics) go through this
// table, so adding an encoder means adding its <kind>_kind file and one row
// here. Tensor names and layouts are those of proto/invariant/v1/bundle.proto.
//
// Errors are absl::Status (INVALID_ARGUMENT naming the field). Thread-safety:
// the table is constant; the functions are reentrant.
#ifndef INVARIANT_CORE_MODEL_ENCODER_KINDS_H_
#define INVARIANT_CORE_MODEL_ENCODER_KINDS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/model/encoder_kind.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

// Every kind, in the order of the EncoderSpec oneof.
absl::Span<const EncoderKind> EncoderKinds();

// The kind `spec` sets. INVALID_ARGUMENT "<field> must set one of cdf,
// random_fourier, nystrom, spectral, patch; got none" when it sets none.
absl::StatusOr<const EncoderKind*> FindEncoderKind(const v1::EncoderSpec& spec,
                                                   const std::string& field);

// The kind's name, or "none".
std::string EncoderKindName(const v1::EncoderSpec& spec);

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_ENCODER_KINDS_H_
