// data_plan.h: which rows of a configured data set train, validate and test
// a model, and streaming access to the training rows.
//
// PlanData opens the data a TrainConfig names (train/data/data_config.h),
// decides the split from config.split, and reads the validation and test
// rows into memory (they are bounded by the split counts). Training rows stay
// in the source and are streamed block by block with ForEachTrainBlock, so a
// training set larger than memory can be featurised.
//
// Split rules (config.split; every draw seeded by split.seed):
//   * per_class_train > 0 (classification): that many rows of every class
//     train; validation: ceil(validation / C) rows of every class (at least
//     one); test: split.test rows (0 = all) of the remaining ones, or of the
//     separate test part when the source has one.
//   * otherwise: train = split.train (0: 80 % of the rows), validation =
//     split.validation (0: a tenth of train, at least 1), test = split.test
//     (0: every remaining row) — or the separate test part when there is one
//     (split.test rows of it, 0 = all).
//   * k_fold = K: every row trains (role kTrain) and `fold` gives its fold
//     (KFoldSplits, seeded; with split.stratify, stratified_folds.h: by
//     class for classification, by the first target for regression);
//     validation and test stay empty: the folds take their place
//     (cross_validation.h).
//   * leave_one_group_out: the same with one fold per group (the source's
//     RowSchema::groups): fold f holds the rows of fold_groups[f], the
//     groups sorted; K = the number of groups, at least 3.
//   * test_groups: the rows of those groups are the test set (split.test of
//     them, 0 = all); the other rows split as above without a test part:
//     per_class_train, or train = split.train (0: every row but the
//     validation rows) and validation = split.validation (0: a tenth of
//     split.train or of the rows, at least 1).
// Splits by group need a source with groups and no separate test part; a
// named group that does not exist is refused, listing the groups there are.
// Augmented copies (RowSchema::copy_of, train/data/audio_augment.h) take no
// part in the split: every rule above is applied to the original rows, and
// then a copy is a training row (role kTrain, its original's fold) when its
// original is one, and kUnused otherwise. So validation, test and every
// fold's held-out rows are originals, the same rows as without the copies.
// The copies are the last augmented_rows training ordinals.
// encoder.group.image and .audio, and certificate.group.audio, must fit the
// rows (image_layout.h; audio.h's CheckAudioGroup).
// Errors name the split field and the row counts available.
#ifndef INVARIANT_TRAIN_PIPELINE_DATA_PLAN_H_
#define INVARIANT_TRAIN_PIPELINE_DATA_PLAN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "invariant/v1/train_config.pb.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

struct DataPlan {
  RowSchema schema;                  // of the train source
  std::unique_ptr<RowSource> train;  // streamed; rows marked kTrain are used
  std::vector<int8_t> role;          // per row of `train`: one of the k* constants
  // k-fold runs: the fold of each training row, by training ordinal, and
  // the number of folds (0 for a single split); leave-one-group-out runs
  // also name the group of every fold.
  std::vector<int32_t> fold;
  int num_folds = 0;
  std::vector<std::string> fold_groups;
  int64_t train_rows = 0;
  // Of train_rows, the augmented copies: the training ordinals
  // [train_rows − augmented_rows, train_rows). They train, and are never
  // scored (a cross-validation round's folds are scored on originals).
  int64_t augmented_rows = 0;
  bool IsCopy(int64_t ordinal) const { return ordinal >= train_rows - augmented_rows; }
  Dataset validation;  // in memory
  Dataset test;        // in memory
  // With a separate test part (a manifest's clips marked test): which of its
  // rows are `test`'s, in order. Empty otherwise: then `test` and
  // `validation` are the rows of `train` whose role says so, in order.
  bool separate_test = false;
  std::vector<int64_t> test_part_rows;
  // From learner.task: class labels are the targets (one-vs-all) when true,
  // the source's regression targets otherwise.
  bool classify = false;
  bool classification() const { return classify; }
  // Columns of the training targets: classes (one-vs-all) or regression targets.
  int64_t target_dim() const;  // classes or regression targets

  static constexpr int8_t kUnused = 0;
  static constexpr int8_t kTrain = 1;
  static constexpr int8_t kValidation = 2;
  static constexpr int8_t kTest = 3;
};

// Opens the data and fixes the split. Reads the train source once or twice
// (labels first when needed) and the test part once.
absl::StatusOr<DataPlan> PlanData(const v1::TrainConfig& config);

// A block of training rows: x (n × dim), labels (n, may be null for
// regression), y (n × num_targets, may be null for classification), and the
// ordinal of the block's first row among all training rows (row i of the
// block has ordinal first_ordinal + i · num_shards).
struct TrainBlock {
  int64_t n = 0;
  const float* x = nullptr;
  const int32_t* labels = nullptr;
  const float* y = nullptr;
  int64_t first_ordinal = 0;
};

// Streams the training rows in blocks of up to block_rows, keeping only the
// rows whose training ordinal t satisfies t % num_shards == shard.
absl::Status ForEachTrainBlock(DataPlan& plan, int64_t block_rows, int shard, int num_shards,
                               const std::function<absl::Status(const TrainBlock&)>& fn);

// The training targets of a block: one-vs-all ±1 rows for classification
// (n × C), the regression targets otherwise (n × T).
absl::StatusOr<FloatMatrix> BlockTargets(const DataPlan& plan, const TrainBlock& block);

// The same for an in-memory data set (validation, test).
absl::StatusOr<FloatMatrix> DatasetTargets(const DataPlan& plan, const Dataset& data);

// The data stage's line: what every count is. "data: 5232 train, 500
// validation, 1433 test rows of 529 values"; per_class_train adds the
// per-class counts ("1000 validation (100 per class)"); a k-fold run gives
// its folds instead ("data: 7165 rows of 529 values in 5 folds of 1433 rows
// (stratified by the target), every row tested once: no separate validation
// or test rows"); test_groups name the groups of the test rows; augmented
// copies are counted apart ("5232 train (of them 3488 augmented copies)").
std::string DescribeDataPlan(const v1::SplitConfig& sc, const DataPlan& plan);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_DATA_PLAN_H_
