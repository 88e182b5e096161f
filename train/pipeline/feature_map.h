// feature_map.h: drawing the feature map of a new model from its config.
//
// BuildFeatureMap sets the manifest's input description from the data
// (input_dim, input_columns, input_scaling, the audio front end of a sound
// source, the encoder's input_shape when the config leaves it unset) and
// turns config.preprocess, config.encoder (its kind's draw in
// core/model/encoder_kinds.h) and config.second_layer into the manifest
// fields and tensors that core/model/featurizer_factory.h rebuilds the
// featurizer from:
//   preprocess   "preprocess/mean", "preprocess/scale" from training statistics
//                (with preprocess.per_channel: each channel's, pooled over its
//                pixels, repeated at every coordinate of the channel)
//   cdf / random_fourier / nystrom
//                templates (Rng::ForStream(encoder.seed, 1)), group elements
//                (Rng::ForStream(encoder.seed, 2)) moved onto them as
//                "encoder/bank" (or the templates alone with input placement);
//                Nyström landmarks are preprocessed training rows and its
//                "encoder/projection" is K_ZZ⁺'s factor
//   spectral     the invariant subspaces from the generators (budget 0 means
//                DefaultSpecAvgBudget(train_rows, 1))
//   patch        patch statistics from up to 10,000 preprocessed training
//                images, templates, whitening folded into "encoder/bank"
//                and "encoder/bias" (core/model/patch_kind.h)
//   second_layer "second_layer/frequencies" ~ N(0, σ⁻² I), Rng(second_layer.seed)
// Every draw is seeded from the config, so every shard of a sharded run and
// the reduce step rebuild the same feature map bit for bit.
#ifndef INVARIANT_TRAIN_PIPELINE_FEATURE_MAP_H_
#define INVARIANT_TRAIN_PIPELINE_FEATURE_MAP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/model/model.h"
#include "invariant/v1/train_config.pb.h"
#include "train/pipeline/data_plan.h"

namespace invariant::train {

struct FeatureMap {
  v1::Manifest manifest;  // input_dim, feature_dim, preprocess, encoder, second_layer
  ModelTensors tensors;
  std::shared_ptr<const Model> model;  // featurize-only model over them
};

// Reads the training rows once or twice (statistics, landmarks) when the
// config needs them. Errors name the config field.
absl::StatusOr<FeatureMap> BuildFeatureMap(const v1::TrainConfig& config, DataPlan& plan);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_FEATURE_MAP_H_
