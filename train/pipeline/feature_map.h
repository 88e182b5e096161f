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
//
// With held_out_fold = f (a cross-validation round, cv_rounds.h) the map is
// fitted on the training rows outside fold f only: the preprocess
// statistics, every row drawn (templates from data, landmarks, patch
// statistics) and the train_rows the encoder sees (e.g. the spectral
// default budget) come from them; nothing is read from fold f's rows. The
// draws keep the config's seeds (the same seed in every round), applied to
// the round's own rows.
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
// config needs them. held_out_fold: -1 fits on every training row; f in
// [0, plan.num_folds) on those outside fold f (INVALID_ARGUMENT otherwise).
// Errors name the config field.
absl::StatusOr<FeatureMap> BuildFeatureMap(const v1::TrainConfig& config, DataPlan& plan,
                                           int held_out_fold = -1);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_FEATURE_MAP_H_
