#include "train/pipeline/data_plan.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/rls/linear_model.h"
#include "train/data/audio.h"
#include "train/data/data_config.h"
#include "train/data/image_layout.h"
#include "train/data/splits.h"
#include "train/data/stratified_folds.h"

namespace invariant::train {
namespace {

constexpr int64_t kScanBlock = 4096;

// Counts the rows of `source` and, when it has labels, collects them; with
// `targets`, collects each row's first regression target too.
absl::StatusOr<int64_t> ScanLabels(RowSource& source, std::vector<int32_t>* labels,
                                   std::vector<double>* targets = nullptr) {
  const RowSchema& s = source.schema();
  std::vector<float> x(static_cast<size_t>(kScanBlock * s.dim));
  std::vector<int32_t> block(kScanBlock);
  std::vector<float> y(static_cast<size_t>(kScanBlock * std::max<int64_t>(1, s.num_targets)));
  int64_t n = 0;
  while (true) {
    ASSIGN_OR_RETURN(int64_t got, source.Next(kScanBlock, x.data(), block.data(),
                                              s.num_targets > 0 ? y.data() : nullptr));
    if (got == 0) break;
    if (s.has_labels) labels->insert(labels->end(), block.begin(), block.begin() + got);
    if (targets != nullptr && s.num_targets > 0) {
      for (int64_t i = 0; i < got; ++i)
        targets->push_back(y[static_cast<size_t>(i * s.num_targets)]);
    }
    n += got;
  }
  RETURN_IF_ERROR(source.Reset());
  return n;
}

// `count` seeded random elements of `pool` (all of them when count is 0 or
// larger), in ascending order.
std::vector<int64_t> SubsetOf(std::vector<int64_t> pool, int64_t count, uint64_t seed) {
  if (count > 0 && count < static_cast<int64_t>(pool.size())) {
    std::vector<int64_t> order = ShuffledIndices(static_cast<int64_t>(pool.size()), seed);
    std::vector<int64_t> picked;
    picked.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) picked.push_back(pool[static_cast<size_t>(order[i])]);
    pool = std::move(picked);
  }
  std::sort(pool.begin(), pool.end());
  return pool;
}

// Reads the rows of `source` whose role is `want` into a Dataset (with
// their groups when the source has them).
absl::StatusOr<Dataset> CollectRows(RowSource& source, const std::vector<int8_t>& role, int8_t want,
                                    const std::string& name) {
  const RowSchema& s = source.schema();
  int64_t count = 0;
  for (int8_t r : role) count += (r == want);
  Dataset out;
  out.name = name;
  out.class_names = s.class_names;
  out.input_shape = s.input_shape.empty() ? std::vector<int64_t>{s.dim} : s.input_shape;
  out.x = FloatMatrix::Zeros(count, s.dim);
  if (s.num_targets > 0) out.y = FloatMatrix::Zeros(count, s.num_targets);
  if (s.has_labels) out.labels.resize(static_cast<size_t>(count));
  std::vector<float> x(static_cast<size_t>(kScanBlock * s.dim));
  std::vector<int32_t> labels(kScanBlock);
  std::vector<float> y(static_cast<size_t>(kScanBlock * std::max<int64_t>(1, s.num_targets)));
  int64_t index = 0, kept = 0;
  while (kept < count) {
    ASSIGN_OR_RETURN(int64_t got, source.Next(kScanBlock, x.data(), labels.data(),
                                              s.num_targets > 0 ? y.data() : nullptr));
    if (got == 0) break;
    for (int64_t i = 0; i < got; ++i, ++index) {
      if (index >= static_cast<int64_t>(role.size()) || role[static_cast<size_t>(index)] != want) {
        continue;
      }
      std::memcpy(out.x.mutable_row(kept), x.data() + i * s.dim, sizeof(float) * s.dim);
      if (s.has_labels) out.labels[static_cast<size_t>(kept)] = labels[static_cast<size_t>(i)];
      if (index < static_cast<int64_t>(s.groups.size())) {
        out.groups.push_back(s.groups[static_cast<size_t>(index)]);
      }
      if (s.num_targets > 0) {
        std::memcpy(out.y.mutable_row(kept), y.data() + i * s.num_targets,
                    sizeof(float) * s.num_targets);
      }
      ++kept;
    }
  }
  RETURN_IF_ERROR(source.Reset());
  if (kept != count) {
    return absl::DataLossError(absl::StrCat(s.name, ": expected ", count, " ", name,
                                            " rows, the source ended after ", kept));
  }
  return out;
}

absl::Status CheckTask(const v1::TrainConfig& config, const RowSchema& s) {
  const v1::LearnerConfig& l = config.learner();
  if (l.kind() == v1::LearnerConfig::NONE) return absl::OkStatus();
  if (l.task() == v1::TASK_CLASSIFICATION && !s.has_labels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "learner.task is TASK_CLASSIFICATION but data set '", s.name, "' has no class labels"));
  }
  if (l.task() == v1::TASK_REGRESSION && s.num_targets == 0) {
    return absl::InvalidArgumentError(absl::StrCat("learner.task is TASK_REGRESSION but data set '",
                                                   s.name, "' has no regression targets"));
  }
  return absl::OkStatus();
}

// split.k_fold: the fold of every row, random (KFoldSplits) or stratified
// (stratified_folds.h) by class or by the first target.
absl::StatusOr<std::vector<int32_t>> AssignFolds(const DataPlan& plan, const v1::SplitConfig& sc,
                                                 int64_t n, const std::vector<int32_t>& labels,
                                                 const std::vector<double>& targets) {
  absl::StatusOr<std::vector<int32_t>> fold;
  if (sc.stratify() && plan.classify) {
    fold = FoldsStratifiedByClass(labels, static_cast<int32_t>(plan.schema.class_names.size()),
                                  sc.k_fold(), sc.seed());
  } else if (sc.stratify()) {
    fold = FoldsStratifiedByTarget(targets, sc.k_fold(), sc.seed());
  } else {
    absl::StatusOr<std::vector<Fold>> folds = KFoldSplits(n, sc.k_fold(), sc.seed());
    if (folds.ok()) {
      fold.emplace(static_cast<size_t>(n), 0);
      for (size_t f = 0; f < folds->size(); ++f) {
        for (int64_t i : (*folds)[f].test)
          (*fold)[static_cast<size_t>(i)] = static_cast<int32_t>(f);
      }
    } else {
      fold = folds.status();
    }
  }
  if (!fold.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("split.k_fold: ", fold.status().message()));
  }
  return fold;
}

// The distinct groups of the rows, sorted; refuses a source without groups
// or with a separate test part (`field` names the split field).
absl::StatusOr<std::vector<std::string>> GroupsOf(const RowSchema& s, bool separate_test,
                                                  const char* field) {
  if (s.groups.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " splits by group, but data set '", s.name,
        "' has no groups (data.audio: {group} in file_pattern, or a group column in the "
        "manifest)"));
  }
  if (separate_test) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " splits the rows of one data set by group, but '", s.name,
                     "' has a separate test part (clips marked split=test)"));
  }
  const std::set<std::string> distinct(s.groups.begin(), s.groups.end());
  return std::vector<std::string>(distinct.begin(), distinct.end());
}

// split.leave_one_group_out: fold f = the rows of group f (groups sorted),
// for the first n (original) rows.
absl::Status AssignGroupFolds(DataPlan& plan, bool separate_test, int64_t n) {
  ASSIGN_OR_RETURN(plan.fold_groups,
                   GroupsOf(plan.schema, separate_test, "split.leave_one_group_out"));
  const int k = static_cast<int>(plan.fold_groups.size());
  if (k < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("split.leave_one_group_out needs at least 3 groups (a test group and an inner "
                     "cross-validation over at least two), data set '",
                     plan.schema.name, "' has ", k, ": ", absl::StrJoin(plan.fold_groups, ", ")));
  }
  std::map<std::string, int32_t> index;
  for (int f = 0; f < k; ++f) index[plan.fold_groups[static_cast<size_t>(f)]] = f;
  plan.fold.clear();
  for (int64_t i = 0; i < n; ++i) {
    plan.fold.push_back(index.at(plan.schema.groups[static_cast<size_t>(i)]));
  }
  plan.num_folds = k;
  return absl::OkStatus();
}

// split.per_class_train rows of every class for training and
// ceil(validation / C) of every class for validation, from `labels`.
absl::StatusOr<SplitIndices> SplitPerClassTrain(const DataPlan& plan, const v1::SplitConfig& sc,
                                                const std::vector<int32_t>& labels) {
  if (!plan.schema.has_labels) {
    return absl::InvalidArgumentError(
        "split.per_class_train needs a classification data set (one with labels)");
  }
  const int32_t classes = static_cast<int32_t>(plan.schema.class_names.size());
  const int64_t per_class_val =
      std::max<int64_t>(1, (sc.validation() + classes - 1) / std::max(1, classes));
  return SplitPerClass(labels, classes, sc.per_class_train(), per_class_val, sc.seed());
}

// split.test_groups: the test rows are those groups' rows (split.test of
// them); the others are cut into train and validation rows. Rows [0, n):
// the originals.
absl::StatusOr<SplitIndices> SplitByTestGroups(const DataPlan& plan, const v1::SplitConfig& sc,
                                               bool separate_test, int64_t n,
                                               const std::vector<int32_t>& labels) {
  ASSIGN_OR_RETURN(const std::vector<std::string> groups,
                   GroupsOf(plan.schema, separate_test, "split.test_groups"));
  const std::set<std::string> test(sc.test_groups().begin(), sc.test_groups().end());
  for (const std::string& g : test) {
    if (!std::binary_search(groups.begin(), groups.end(), g)) {
      return absl::InvalidArgumentError(
          absl::StrCat("split.test_groups: group '", g, "' is not in data set '", plan.schema.name,
                       "', whose groups are ", absl::StrJoin(groups, ", ")));
    }
  }
  std::vector<int64_t> pool, test_rows;
  for (int64_t i = 0; i < n; ++i) {
    (test.count(plan.schema.groups[static_cast<size_t>(i)]) ? test_rows : pool).push_back(i);
  }
  const int64_t m = static_cast<int64_t>(pool.size());
  if (m < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("split.test_groups leaves ", m, " rows outside the test groups of '",
                     plan.schema.name, "'; at least 2 needed (train and validation)"));
  }
  SplitIndices split;
  if (sc.per_class_train() > 0) {
    std::vector<int32_t> pool_labels;
    for (int64_t i : pool) pool_labels.push_back(labels[static_cast<size_t>(i)]);
    ASSIGN_OR_RETURN(split, SplitPerClassTrain(plan, sc, pool_labels));
  } else {
    const int64_t validation = sc.validation() > 0
                                   ? sc.validation()
                                   : std::max<int64_t>(1, (sc.train() > 0 ? sc.train() : m) / 10);
    const int64_t train = sc.train() > 0 ? sc.train() : m - validation;
    if (train < 1 || train + validation > m) {
      return absl::InvalidArgumentError(absl::StrCat(
          "split.train ", train, " + split.validation ", validation, " needs more than the ", m,
          " rows outside split.test_groups of '", plan.schema.name, "'"));
    }
    ASSIGN_OR_RETURN(split, SplitByCounts(m, train, validation, 0, sc.seed()));
  }
  for (std::vector<int64_t>* part : {&split.train, &split.validation}) {
    for (int64_t& i : *part) i = pool[static_cast<size_t>(i)];
  }
  split.test = SubsetOf(test_rows, sc.test(), sc.seed() ^ 0x7e57);
  return split;
}

// How many of the source's n rows are originals, not augmented copies
// (schema.copy_of); checks that they come first and that every copy names
// one of them.
absl::StatusOr<int64_t> CountOriginals(const RowSchema& s, int64_t n) {
  if (s.copy_of.empty()) return n;
  if (static_cast<int64_t>(s.copy_of.size()) != n) {
    return absl::DataLossError(absl::StrCat("data set '", s.name, "' has ", n, " rows but ",
                                            s.copy_of.size(), " copy_of entries"));
  }
  int64_t originals = 0;
  while (originals < n && s.copy_of[static_cast<size_t>(originals)] < 0) ++originals;
  for (int64_t i = originals; i < n; ++i) {
    const int64_t of = s.copy_of[static_cast<size_t>(i)];
    if (of < 0 || of >= originals) {
      return absl::DataLossError(absl::StrCat("data set '", s.name, "': row ", i,
                                              " is not a copy of one of the ", originals,
                                              " original rows before the copies"));
    }
  }
  return originals;
}

// The augmented copies (rows `originals` onward): a copy trains when its
// original does, in its original's fold (k-fold runs, where every original
// trains and its ordinal is its row); otherwise it is unused.
void AddCopies(DataPlan& plan, int64_t originals) {
  const std::vector<int64_t>& copy_of = plan.schema.copy_of;
  for (size_t i = static_cast<size_t>(originals); i < copy_of.size(); ++i) {
    const size_t of = static_cast<size_t>(copy_of[i]);
    const bool trains = plan.role[of] == DataPlan::kTrain;
    plan.role.push_back(trains ? DataPlan::kTrain : DataPlan::kUnused);
    if (!trains) continue;
    if (plan.num_folds > 0) plan.fold.push_back(plan.fold[of]);
    ++plan.train_rows;
    ++plan.augmented_rows;
  }
}

// The groups of the config fit the rows: the image group acts on
// channels-last images of its own size (size, an IDX file's shape, a CSV
// header's order); a patch encoder's group acts on its patches, its rows
// being the images of encoder.input_shape instead; the audio groups act on
// the front end's spectrogram (same bins, frames and bins per octave).
absl::Status CheckGroupLayouts(const v1::TrainConfig& config, const RowSchema& schema) {
  // The image group acts on channels-last images of its own size: the rows
  // must be such images (size, an IDX file's shape, a CSV header's order).
  // A patch encoder's group acts on its patches; its rows are the images of
  // encoder.input_shape instead.
  if (config.encoder().has_patch()) {
    const auto& shape = config.encoder().input_shape();
    if (shape.size() == 3) {
      RETURN_IF_ERROR(CheckImageLayout(schema, ImageShape{shape[0], shape[1], shape[2]},
                                       "encoder.input_shape"));
    }
  } else if (config.encoder().group().has_image()) {
    const v1::ImageTransformGroup& g = config.encoder().group().image();
    RETURN_IF_ERROR(CheckImageLayout(schema, ImageShape{g.height(), g.width(), g.channels()},
                                     "encoder.group.image"));
  }
  // The audio group acts on the front end's spectrogram: same bins, frames
  // and bins per octave.
  if (config.encoder().group().has_audio()) {
    RETURN_IF_ERROR(
        CheckAudioGroup(schema, config.encoder().group().audio(), "encoder.group.audio"));
  }
  if (config.certificate().group().has_audio()) {
    RETURN_IF_ERROR(
        CheckAudioGroup(schema, config.certificate().group().audio(), "certificate.group.audio"));
  }
  return absl::OkStatus();
}

// The test rows from a separate test part: split.test of them (0: all),
// drawn; records which in plan.test_part_rows.
absl::Status CollectTestPart(RowSource& test_part, const v1::SplitConfig& sc, DataPlan& plan) {
  std::vector<int32_t> unused;
  ASSIGN_OR_RETURN(const int64_t nt, ScanLabels(test_part, &unused));
  std::vector<int64_t> all(static_cast<size_t>(nt));
  for (int64_t i = 0; i < nt; ++i) all[static_cast<size_t>(i)] = i;
  std::vector<int8_t> test_role(static_cast<size_t>(nt), DataPlan::kUnused);
  for (int64_t i : SubsetOf(all, sc.test(), sc.seed() ^ 0x7e57)) {
    test_role[static_cast<size_t>(i)] = DataPlan::kTest;
  }
  plan.separate_test = true;
  for (int64_t i = 0; i < nt; ++i) {
    if (test_role[static_cast<size_t>(i)] == DataPlan::kTest) plan.test_part_rows.push_back(i);
  }
  ASSIGN_OR_RETURN(plan.test, CollectRows(test_part, test_role, DataPlan::kTest, "test"));
  return absl::OkStatus();
}

// A single split (no folds): by test groups, per class, or by counts.
absl::StatusOr<SplitIndices> SingleSplit(const DataPlan& plan, const v1::SplitConfig& sc,
                                         bool separate_test, int64_t n,
                                         const std::vector<int32_t>& labels) {
  if (!sc.test_groups().empty()) return SplitByTestGroups(plan, sc, separate_test, n, labels);
  if (sc.per_class_train() > 0) {
    ASSIGN_OR_RETURN(SplitIndices split, SplitPerClassTrain(plan, sc, labels));
    if (separate_test) {
      split.test.clear();
    } else {
      split.test = SubsetOf(split.test, sc.test(), sc.seed() ^ 0x7e57);
    }
    return split;
  }
  const int64_t train = sc.train() > 0 ? sc.train() : std::max<int64_t>(1, n * 8 / 10);
  const int64_t validation =
      sc.validation() > 0 ? sc.validation() : std::max<int64_t>(1, train / 10);
  const int64_t test = separate_test ? 0 : (sc.test() > 0 ? sc.test() : kRest);
  if (!separate_test && test == kRest && train + validation >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("split.train + split.validation = ", train + validation,
                     " leaves no test rows of the ", n, " rows of '", plan.schema.name, "'"));
  }
  absl::StatusOr<SplitIndices> s = SplitByCounts(n, train, validation, test, sc.seed());
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("split: ", s.status().message()));
  return *std::move(s);
}

}  // namespace

int64_t DataPlan::target_dim() const {
  return classify ? static_cast<int64_t>(schema.class_names.size()) : schema.num_targets;
}

absl::StatusOr<DataPlan> PlanData(const v1::TrainConfig& config) {
  ASSIGN_OR_RETURN(DataParts parts, OpenDataConfig(config.data()));
  DataPlan plan;
  plan.schema = parts.train->schema();
  RETURN_IF_ERROR(CheckTask(config, plan.schema));
  RETURN_IF_ERROR(CheckGroupLayouts(config, plan.schema));
  plan.classify = config.learner().task() == v1::TASK_CLASSIFICATION ||
                  (config.learner().task() == v1::TASK_UNSPECIFIED && plan.schema.has_labels);
  const v1::SplitConfig& sc = config.split();
  std::vector<int32_t> labels;
  std::vector<double> targets;
  const bool by_target = sc.k_fold() > 0 && sc.stratify() && !plan.classify;
  ASSIGN_OR_RETURN(const int64_t rows,
                   ScanLabels(*parts.train, &labels, by_target ? &targets : nullptr));
  if (!plan.schema.groups.empty() && static_cast<int64_t>(plan.schema.groups.size()) != rows) {
    return absl::DataLossError(absl::StrCat("data set '", plan.schema.name, "' has ", rows,
                                            " rows but ", plan.schema.groups.size(), " groups"));
  }
  // The split is drawn over the original rows alone; AddCopies follows it.
  ASSIGN_OR_RETURN(const int64_t n, CountOriginals(plan.schema, rows));
  if (static_cast<int64_t>(labels.size()) > n) labels.resize(static_cast<size_t>(n));
  if (static_cast<int64_t>(targets.size()) > n) targets.resize(static_cast<size_t>(n));
  if (n < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("data set '", plan.schema.name, "' has ", n, " rows; at least 2 needed"));
  }
  const bool separate_test = parts.test != nullptr;
  SplitIndices split;
  if (sc.leave_one_group_out()) {
    RETURN_IF_ERROR(AssignGroupFolds(plan, separate_test, n));
    plan.role.assign(static_cast<size_t>(n), DataPlan::kTrain);
    plan.train_rows = n;
    AddCopies(plan, n);
    plan.train = std::move(parts.train);
    return plan;
  }
  if (sc.k_fold() > 0) {
    if (separate_test) {
      return absl::InvalidArgumentError(
          absl::StrCat("split.k_fold cross-validates the rows of one data set, but '",
                       plan.schema.name, "' has a separate test part: use a single split"));
    }
    ASSIGN_OR_RETURN(plan.fold, AssignFolds(plan, sc, n, labels, targets));
    plan.num_folds = sc.k_fold();
    plan.role.assign(static_cast<size_t>(n), DataPlan::kTrain);
    plan.train_rows = n;
    AddCopies(plan, n);
    plan.train = std::move(parts.train);
    return plan;
  }
  ASSIGN_OR_RETURN(split, SingleSplit(plan, sc, separate_test, n, labels));
  plan.role.assign(static_cast<size_t>(n), DataPlan::kUnused);
  for (int64_t i : split.train) plan.role[static_cast<size_t>(i)] = DataPlan::kTrain;
  for (int64_t i : split.validation) plan.role[static_cast<size_t>(i)] = DataPlan::kValidation;
  for (int64_t i : split.test) plan.role[static_cast<size_t>(i)] = DataPlan::kTest;
  plan.train_rows = static_cast<int64_t>(split.train.size());
  AddCopies(plan, n);
  ASSIGN_OR_RETURN(plan.validation,
                   CollectRows(*parts.train, plan.role, DataPlan::kValidation, "validation"));
  if (separate_test) {
    RETURN_IF_ERROR(CollectTestPart(*parts.test, sc, plan));
  } else {
    ASSIGN_OR_RETURN(plan.test, CollectRows(*parts.train, plan.role, DataPlan::kTest, "test"));
  }
  if (plan.test.rows() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("split leaves no test rows of '", plan.schema.name, "'"));
  }
  plan.train = std::move(parts.train);
  return plan;
}

absl::Status ForEachTrainBlock(DataPlan& plan, int64_t block_rows, int shard, int num_shards,
                               const std::function<absl::Status(const TrainBlock&)>& fn) {
  const RowSchema& s = plan.schema;
  const int64_t d = s.dim, t = s.num_targets;
  std::vector<float> x(static_cast<size_t>(block_rows * d)), xo(x.size());
  std::vector<int32_t> labels(static_cast<size_t>(block_rows)), lo(labels.size());
  std::vector<float> y(static_cast<size_t>(block_rows * std::max<int64_t>(1, t))), yo(y.size());
  RETURN_IF_ERROR(plan.train->Reset());
  int64_t index = 0, ordinal = 0, out = 0, first = 0;
  auto flush = [&]() -> absl::Status {
    if (out == 0) return absl::OkStatus();
    TrainBlock b{out, xo.data(), s.has_labels ? lo.data() : nullptr, t > 0 ? yo.data() : nullptr,
                 first};
    out = 0;
    return fn(b);
  };
  while (true) {
    ASSIGN_OR_RETURN(int64_t got, plan.train->Next(block_rows, x.data(), labels.data(),
                                                   t > 0 ? y.data() : nullptr));
    if (got == 0) break;
    for (int64_t i = 0; i < got; ++i, ++index) {
      if (index >= static_cast<int64_t>(plan.role.size()) ||
          plan.role[static_cast<size_t>(index)] != DataPlan::kTrain) {
        continue;
      }
      if (ordinal++ % num_shards != shard) continue;
      if (out == 0) first = ordinal - 1;
      std::memcpy(xo.data() + out * d, x.data() + i * d, sizeof(float) * d);
      lo[static_cast<size_t>(out)] = labels[static_cast<size_t>(i)];
      if (t > 0) std::memcpy(yo.data() + out * t, y.data() + i * t, sizeof(float) * t);
      if (++out == block_rows) RETURN_IF_ERROR(flush());
    }
  }
  RETURN_IF_ERROR(flush());
  return plan.train->Reset();
}

absl::StatusOr<FloatMatrix> BlockTargets(const DataPlan& plan, const TrainBlock& block) {
  if (plan.classification()) {
    return OneVsAllTargets(absl::MakeConstSpan(block.labels, static_cast<size_t>(block.n)),
                           static_cast<int32_t>(plan.target_dim()));
  }
  FloatMatrix y = FloatMatrix::Zeros(block.n, plan.schema.num_targets);
  std::memcpy(y.mutable_data(), block.y, y.bytes());
  return y;
}

absl::StatusOr<FloatMatrix> DatasetTargets(const DataPlan& plan, const Dataset& data) {
  if (plan.classification()) {
    return OneVsAllTargets(data.labels, static_cast<int32_t>(plan.target_dim()));
  }
  return data.y;
}

std::string DescribeDataPlan(const v1::SplitConfig& sc, const DataPlan& plan) {
  const long long dim = static_cast<long long>(plan.schema.dim);
  const std::string copies =
      plan.augmented_rows > 0
          ? absl::StrCat(" (of them ", plan.augmented_rows, " augmented copies)")
          : "";
  if (plan.num_folds > 0) {
    std::vector<int64_t> sizes(static_cast<size_t>(plan.num_folds), 0);
    for (size_t t = 0; t < plan.fold.size(); ++t) {
      if (!plan.IsCopy(static_cast<int64_t>(t))) ++sizes[static_cast<size_t>(plan.fold[t])];
    }
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    const std::string kind =
        !plan.fold_groups.empty()
            ? "one per group: leave one group out"
            : (sc.stratify()
                   ? (plan.classification() ? "stratified by class" : "stratified by the target")
                   : "random");
    return absl::StrCat("data: ", plan.train_rows, " rows", copies, " of ", dim, " values in ",
                        plan.num_folds, " folds of ", *lo, *hi > *lo ? absl::StrCat("-", *hi) : "",
                        " rows (", kind, "), every ", copies.empty() ? "" : "original ",
                        "row tested once: no separate validation or test rows");
  }
  const int64_t classes = static_cast<int64_t>(plan.schema.class_names.size());
  if (sc.per_class_train() > 0 && classes > 0) {
    return absl::StrCat("data: ", plan.train_rows, " train (", sc.per_class_train(), " per class)",
                        copies, ", ", plan.validation.rows(), " validation (",
                        plan.validation.rows() / classes, " per class), ", plan.test.rows(),
                        " test rows of ", dim, " values");
  }
  return absl::StrCat(
      "data: ", plan.train_rows, " train", copies, ", ", plan.validation.rows(), " validation, ",
      plan.test.rows(), " test rows of ", dim, " values",
      sc.test_groups().empty()
          ? ""
          : absl::StrCat(" (test: the rows of group", sc.test_groups_size() > 1 ? "s " : " ",
                         absl::StrJoin(sc.test_groups(), ", "), ")"));
}

}  // namespace invariant::train
