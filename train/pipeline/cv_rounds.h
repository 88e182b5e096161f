// cv_rounds.h: the rounds of a cross-validated training run
// (split { k_fold: K } or split { leave_one_group_out: true }) without a
// leak: nothing about a round's test rows is fitted.
//
// RunCrossValidation, for round f = 0 … K−1:
//   1. builds round f's own feature map from the rows outside fold f
//      (BuildFeatureMap(config, plan, f)): the preprocess statistics
//      ("preprocess/mean", "preprocess/scale"), every template or landmark
//      drawn from data (cdf TEMPLATE_DATA, Nyström, patch statistics,
//      whitening and k-means) and the training-row count the encoder sees
//      come from fold f's complement only. Every draw keeps the config's
//      seeds: the same seed in every round (and for the written model's
//      map), applied to that round's rows;
//   2. featurizes every row with it, sorted into the K folds;
//   3. runs round f (cross_validation.h CrossValidateRound: the inner
//      cross-validation of the K−1 training folds, the refit on them, the
//      test on fold f) on those features; then the features are freed.
// CombineRounds then fixes every round's λ and the test metrics, and λ* on
// the rounds' inner curves averaged. The written model keeps the map built
// from all rows (`written_map`, trainer.cc's): one more pass featurizes
// every row with it into one ΦᵀΦ, ΦᵀY and it is refit there at λ*.
//
// Cost: K + 1 feature maps built (the written one by the caller) and K + 1
// featurize passes over all N rows instead of one; report.featurized_rows
// and accumulate.rows count every pass ((K + 1)·N). Memory peak as one
// pass: one round's N × D features, its K fold sums and one solver. A
// leave-one-speaker-out run on 2,000 clips of 4 speakers featurizes 10,000
// rows and fits 5 maps (each from 1,500 or 2,000 clips).
//
// Console: one line per round's map and per featurize pass; report: the
// cross-validation fields (report.h), the round maps' time added to the
// "bank" stage, then "featurize" and "solve" stages appended.
//
// Thread-safety: not thread-safe on `plan` (its source is streamed); the
// featurize passes use the process thread pool.
#ifndef INVARIANT_TRAIN_PIPELINE_CV_ROUNDS_H_
#define INVARIANT_TRAIN_PIPELINE_CV_ROUNDS_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "core/model/model.h"
#include "invariant/v1/train_config.pb.h"
#include "train/data/dataset.h"
#include "train/pipeline/cross_validation.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/feature_map.h"
#include "train/pipeline/report.h"

namespace invariant::train {

struct CrossValidationRun {
  CrossValidationResult cv;  // refit: the written head, on written_map's features
  Dataset first;             // fold 1's raw rows (x only), for the certificate
};

// Called with round f's feature map once it is built, before it featurizes
// (tests, diagnostics).
using RoundMapObserver = std::function<void(int round, const FeatureMap& map)>;

// Runs the K rounds (plan.num_folds ≥ 3) and the refit on every row, and
// fills the cross-validation fields of `report` (k_fold, folds, mean, std,
// pooled, λ*, solver, counts, stage seconds, grid-end warnings). Errors: the
// feature map's, the featurize pass's and cross_validation.h's.
absl::StatusOr<CrossValidationRun> RunCrossValidation(const v1::TrainConfig& config, DataPlan& plan,
                                                      const Model& written_map, TrainReport& report,
                                                      const RoundMapObserver& observe = nullptr);

// model.Featurize over n rows in row chunks on the process thread pool; every
// row's features depend only on that row, so the result is the same bits
// as one call.
void FeaturizeInParallel(const Model& model, int64_t n, const float* x, float* out);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_CV_ROUNDS_H_
