// featurizer_factory.h: the feature map a manifest describes, rebuilt over
// its tensors.
//
// One way from (manifest, tensors) to an Encoder, used both when a model is
// loaded from a bundle and when the training job assembles a fresh one, so
// the served feature map is by construction the one that was trained.
// Stages: preprocess (when any step is on) → encoder (its kind's load in
// encoder_kinds.h) → second layer (when the manifest has one), chained.
// Tensor names and layouts are those of proto/invariant/v1/bundle.proto.
#ifndef INVARIANT_CORE_MODEL_FEATURIZER_FACTORY_H_
#define INVARIANT_CORE_MODEL_FEATURIZER_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/encoders/encoder.h"
#include "core/model/encoder_kinds.h"
#include "core/model/model.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

// Builds the featurizer. Errors (INVALID_ARGUMENT) name the manifest field or
// tensor that is missing or inconsistent, e.g. "tensor 'encoder/bank' must be
// 2400 × 784 (m·r × input_dim), got 2400 × 780".
absl::StatusOr<std::shared_ptr<const Encoder>> MakeFeaturizer(const v1::Manifest& manifest,
                                                              const ModelTensors& tensors);

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_FEATURIZER_FACTORY_H_
