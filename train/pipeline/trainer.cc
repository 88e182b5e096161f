#include "train/pipeline/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/file.h"
#include "core/base/memory_limit.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/model/featurizer_factory.h"
#include "core/model/repository.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/lambda_selection.h"
#include "core/rls/linear_model.h"
#include "core/rls/metrics.h"
#include "train/pipeline/baseline_certificate.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/config.h"
#include "train/pipeline/cross_validation.h"
#include "train/pipeline/cv_rounds.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/feature_map.h"
#include "train/pipeline/pair_certificate.h"
#include "train/pipeline/progress.h"
#include "train/pipeline/publish.h"
#include "train/pipeline/report.h"
#include "train/pipeline/shard_file.h"
#include "train/pipeline/solve.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;

double TrainerSecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The run's state, shared by the stages.
struct Run {
  TrainOptions options;
  v1::TrainConfig config;
  std::string config_text;
  DataPlan plan;
  FeatureMap map;
  TrainReport report;
  TrainSummary* summary = nullptr;  // filled when the version is written, if set
  std::chrono::steady_clock::time_point stage_start = std::chrono::steady_clock::now();
  // split.k_fold: the test metrics are the folds' (report), not plan.test's;
  // plan.test holds fold 1's rows for the certificate.
  bool cross_validated = false;

  // Adds rows the feature map computed (training, validation, test) and the
  // seconds it took, the feature map alone: the report's featurize rate.
  void CountFeaturized(int64_t rows, double seconds) {
    report.featurized_rows += rows;
    report.featurize_seconds += seconds;
    report.featurize_rows_per_second =
        report.featurize_seconds > 0
            ? static_cast<double>(report.featurized_rows) / report.featurize_seconds
            : 0;
  }
  void CountFeaturized(int64_t rows, std::chrono::steady_clock::time_point since) {
    CountFeaturized(rows, TrainerSecondsSince(since));
  }
  // Adds training rows accumulated into ΦᵀΦ, ΦᵀY and the seconds it took.
  void CountAccumulated(int64_t rows, double seconds) {
    report.accumulated_rows += rows;
    report.accumulate_seconds += seconds;
  }

  void EndStage(const std::string& stage) {
    const auto now = std::chrono::steady_clock::now();
    report.stage_seconds.emplace_back(stage,
                                      std::chrono::duration<double>(now - stage_start).count());
    stage_start = now;
  }
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::optional<std::string> text = ReadWholeFile(path);
  if (!text.has_value()) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open the config file"));
  }
  return *std::move(text);
}

std::string ModelDir(const TrainOptions& o) { return invariant::ModelDir(o.models_dir, o.name); }

std::string ShardDir(const TrainOptions& o) {
  return o.shard_dir.empty() ? (fs::path(ModelDir(o)) / "shards").string() : o.shard_dir;
}

// The shape of a run's memory (training_memory.h); the solver is the one
// the reduce takes from sums.
TrainingShape ShapeOf(const Run& run) {
  TrainingShape s;
  s.feature_dim = run.map.model->feature_dim();
  s.target_dim = std::max<int64_t>(1, run.plan.target_dim());
  s.input_dim = run.plan.schema.dim;
  s.validation_rows = run.plan.validation.rows();
  // A block holds at most this process's rows (a shard's share of them).
  const int64_t shards = std::max(1, run.options.num_shards);
  s.block_rows = std::max<int64_t>(
      1, std::min(run.config.block_rows(), (run.plan.train_rows + shards - 1) / shards));
  s.prepared_bytes = static_cast<int64_t>(ResidentBytes());
  s.solver = ChooseHeadSolver(run.config.learner(), s.feature_dim, /*rows=*/0);
  return s;
}

// RESOURCE_EXHAUSTED when this shard's (or the reduce's) estimated peak
// passes the memory limit.
absl::Status CheckMemory(const Run& run, bool reduce) {
  const TrainingShape shape = ShapeOf(run);
  const TrainingMemory m = EstimateTrainingMemory(shape);
  const uint64_t limit = run.options.memory_limit_bytes != 0 ? run.options.memory_limit_bytes
                                                             : CgroupMemoryLimitBytes();
  return reduce ? CheckTrainingMemory("the reduce", m.reduce_bytes, limit, shape)
                : CheckTrainingMemory(
                      absl::StrCat("shard ", run.options.shard, " of ", run.options.num_shards),
                      m.shard_bytes, limit, shape);
}

// Stages data and bank.
absl::StatusOr<Run> Prepare(const TrainOptions& options) {
  Run run;
  run.options = options;
  ASSIGN_OR_RETURN(run.config_text, ReadFile(options.config_path));
  ASSIGN_OR_RETURN(run.config, ParseTrainConfig(run.config_text, options.config_path));
  ASSIGN_OR_RETURN(run.plan, PlanData(run.config));
  run.EndStage("data");
  std::fprintf(stderr, "%s\n", DescribeDataPlan(run.config.split(), run.plan).c_str());
  ASSIGN_OR_RETURN(run.map, BuildFeatureMap(run.config, run.plan));
  run.EndStage("bank");
  std::fprintf(stderr, "bank: %s encoder, %lld features, %.1f MiB of parameters\n",
               EncoderKindName(run.map.manifest.encoder()).c_str(),
               static_cast<long long>(run.map.model->feature_dim()),
               static_cast<double>(run.map.model->bytes()) / (1 << 20));
  return run;
}

// Stage featurize: ΦᵀΦ and ΦᵀY over this shard's training rows, or with
// keep_rows the featurized rows themselves (no Gram is formed).
absl::StatusOr<TrainingSet> Featurize(Run& run, int shard, int num_shards, bool keep_rows) {
  const Model& model = *run.map.model;
  const int64_t f = model.feature_dim();
  TrainingSet set;
  if (!keep_rows) {
    ASSIGN_OR_RETURN(set.sums,
                     GramAccumulator::Create(f, std::max<int64_t>(1, run.plan.target_dim())));
  }
  Progress progress("featurize", run.plan.train_rows / num_shards);
  int64_t rows = 0;
  double features = 0, accumulate = 0;
  std::vector<float> buffer;
  RETURN_IF_ERROR(ForEachTrainBlock(
      run.plan, run.config.block_rows(), shard, num_shards, [&](const TrainBlock& b) {
        FloatMatrix phi = keep_rows ? FloatMatrix::Zeros(b.n, f) : FloatMatrix();
        if (!keep_rows) buffer.resize(static_cast<size_t>(b.n * f));
        float* out = keep_rows ? phi.mutable_data() : buffer.data();
        const auto start = std::chrono::steady_clock::now();
        FeaturizeInParallel(model, b.n, b.x, out);
        features += TrainerSecondsSince(start);
        ASSIGN_OR_RETURN(FloatMatrix y, BlockTargets(run.plan, b));
        if (keep_rows) {
          set.phi.push_back(std::move(phi));
          set.y.push_back(std::move(y));
        } else {
          const auto add_start = std::chrono::steady_clock::now();
          RETURN_IF_ERROR(set.sums->Add(b.n, out, y.data()));
          accumulate += TrainerSecondsSince(add_start);
        }
        rows += b.n;
        progress.Advance(b.n);
        return absl::OkStatus();
      }));
  progress.Finish(FeaturizeLine(rows, features, accumulate, progress.seconds()));
  run.CountFeaturized(rows, features);
  if (!keep_rows) run.CountAccumulated(rows, accumulate);
  run.EndStage("featurize");
  return set;
}

FloatMatrix FeaturizeAll(const Model& model, const Dataset& data) {
  FloatMatrix phi = FloatMatrix::Zeros(data.rows(), model.feature_dim());
  FeaturizeInParallel(model, data.rows(), data.x.data(), phi.mutable_data());
  return phi;
}

RlsTask TaskOf(const Run& run) {
  return run.plan.classification() ? RlsTask::kClassification : RlsTask::kRegression;
}

// Stage solve for RIDGE and SPEC_AVG (solve.h), with the validation rows
// featurized here, after a CG solver has freed the training rows.
absl::StatusOr<LinearModel> Solve(Run& run, TrainingSet& set) {
  return SolveHead(
      run.config.learner(), run.map.model->feature_dim(), TaskOf(run), set,
      [&run]() -> absl::StatusOr<ValidationRows> {
        ValidationRows val;
        const auto featurize_start = std::chrono::steady_clock::now();
        val.phi = FeaturizeAll(*run.map.model, run.plan.validation);
        run.CountFeaturized(run.plan.validation.rows(), featurize_start);
        ASSIGN_OR_RETURN(val.y, DatasetTargets(run.plan, run.plan.validation));
        return val;
      },
      run.report);
}

// Test metrics of n × T scores against the test rows.
absl::Status Evaluate(Run& run, const FloatMatrix& scores, v1::Manifest& manifest) {
  const Dataset& test = run.plan.test;
  std::map<std::string, double>& m = run.report.test_metrics;
  if (run.plan.classification()) {
    const std::vector<int32_t> predicted = ArgmaxRows(scores);
    ASSIGN_OR_RETURN(double acc, Accuracy(predicted, test.labels));
    m["accuracy"] = acc;
    RecordConfusion(predicted, test.labels, run.plan.schema.class_names, run.report);
  } else {
    ASSIGN_OR_RETURN(m["rmse"], RootMeanSquaredError(scores, test.y));
    ASSIGN_OR_RETURN(m["mae"], MeanAbsoluteError(scores, test.y));
    RecordPredictions(test.rows(), scores.data(), test.y.data(), test.y.cols(),
                      run.plan.schema.target_names, run.report);
  }
  for (const auto& [k, v] : m) (*manifest.mutable_metrics())[absl::StrCat("test_", k)] = v;
  return absl::OkStatus();
}

void FillReport(Run& run, const v1::Manifest& manifest) {
  TrainReport& r = run.report;
  r.model_name = manifest.model_name();
  r.version = manifest.version();
  r.description = run.config.description();
  r.encoder_kind = EncoderKindName(manifest.encoder());
  r.group =
      manifest.encoder().has_spectral()
          ? absl::StrCat("torus generators: ", manifest.encoder().spectral().generators_size())
          : manifest.encoder().group().ShortDebugString();
  r.input_dim = manifest.input_dim();
  r.feature_dim = manifest.feature_dim();
  r.train_rows = run.plan.train_rows;
  r.augmented_train_rows = run.plan.augmented_rows;
  r.validation_rows = run.plan.validation.rows();  // k-fold: 0, inside the rounds
  // k-fold: every original row is tested once, by the round that holds it
  // out (an augmented copy never is).
  r.test_rows =
      run.cross_validated ? run.plan.train_rows - run.plan.augmented_rows : run.plan.test.rows();
  r.task = run.config.learner().kind() == v1::LearnerConfig::NONE ? "none"
           : run.plan.classification()                            ? "classification"
                                                                  : "regression";
  r.certificate = manifest.certificate();
}

// Writes the version directory (`model`'s bundle under `manifest`, its own
// with the run's records) and publishes it (publish.h); the "write" stage
// ends once the bundle is saved.
absl::StatusOr<std::string> WriteVersion(Run& run, int64_t version, const Model& model,
                                         const v1::Manifest& manifest) {
  ASSIGN_OR_RETURN(StagedVersion staged,
                   StageVersion(ModelDir(run.options), version, &model, manifest));
  run.EndStage("write");
  ASSIGN_OR_RETURN(std::string path,
                   PublishVersion(staged, run.report, run.options.testonly_hold_before_publish));
  if (run.summary != nullptr) {
    run.summary->test_metrics = run.report.test_metrics;
    run.summary->test_rows = run.report.test_rows;
    run.summary->k_fold = run.report.k_fold;
    run.summary->test_metrics_std = run.report.test_metrics_std;
    run.summary->test_metrics_pooled = run.report.test_metrics_pooled;
  }
  return path;
}

// Stages evaluate and write for a solved head (RIDGE, SPEC_AVG) or none
// (NONE). A cross-validated run's test metrics are already in the report.
absl::StatusOr<std::string> Finish(Run& run, const LinearModel* head) {
  ASSIGN_OR_RETURN(int64_t version, ChooseVersion(ModelDir(run.options), run.options.version));
  v1::Manifest manifest = run.map.manifest;
  manifest.set_model_name(run.options.name);
  manifest.set_version(version);
  manifest.set_created_by("invariant-train");
  manifest.set_created_unix_seconds(static_cast<int64_t>(std::time(nullptr)));
  manifest.set_training_config(run.config_text);
  ModelTensors tensors = run.map.tensors;
  if (head != nullptr) {
    v1::LinearHead& h = *manifest.mutable_head();
    h.set_task(run.plan.classification() ? v1::TASK_CLASSIFICATION : v1::TASK_REGRESSION);
    h.set_lambda(head->lambda);
    if (run.plan.classification()) {
      for (const std::string& c : run.plan.schema.class_names) h.add_class_names(c);
    } else {
      const std::vector<std::string>& names = run.plan.schema.target_names;
      for (int64_t t = 0; t < head->output_dim(); ++t) {
        h.add_target_names(static_cast<int64_t>(names.size()) == head->output_dim()
                               ? names[static_cast<size_t>(t)]
                               : absl::StrCat("y", t));
      }
    }
    tensors.f32[kHeadWeightsTensor] = head->weights;
    tensors.f32[kHeadBiasTensor] = head->bias;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model,
                   Model::Assemble(manifest, std::move(tensors)));
  // The model is assembled once; what it is measured to do (test metrics,
  // certificates) is stamped into a copy of its manifest, which the bundle is
  // written under (Model::SaveWithRecords).
  manifest = model->manifest();
  if (run.cross_validated) {
    for (const auto& [k, v] : run.report.test_metrics) {
      (*manifest.mutable_metrics())[absl::StrCat("test_", k)] = v;
      (*manifest.mutable_metrics())[absl::StrCat("test_", k, "_std")] =
          run.report.test_metrics_std[k];
      (*manifest.mutable_metrics())[absl::StrCat("test_", k, "_pooled")] =
          run.report.test_metrics_pooled[k];
    }
  } else if (model->has_head()) {
    FloatMatrix scores = FloatMatrix::Zeros(run.plan.test.rows(), model->output_dim());
    const auto featurize_start = std::chrono::steady_clock::now();
    model->Predict(run.plan.test.rows(), run.plan.test.x.data(), scores.mutable_data());
    run.CountFeaturized(run.plan.test.rows(), featurize_start);
    RETURN_IF_ERROR(Evaluate(run, scores, manifest));
  }
  ASSIGN_OR_RETURN(*manifest.mutable_certificate(),
                   CertifyServedModel(*model, run.plan.test.x, run.config, run.plan,
                                      run.config.encoder().seed() ^ kCertificateSeedSalt));
  RETURN_IF_ERROR(AddPairsCertificate(*model, run.config.certificate(), &manifest));
  RETURN_IF_ERROR(RecordBaselineCertificate(*model, run.plan.test.x, run.config, run.plan,
                                            run.config.encoder().seed() ^ kCertificateSeedSalt,
                                            run.report));
  run.EndStage("evaluate");
  FillReport(run, manifest);
  return WriteVersion(run, version, *model, manifest);
}

// split.k_fold or leave_one_group_out: every round on a feature map of its
// own training rows, the refit on all rows with run.map (cv_rounds.h); the
// refit is written. The certificate checks it on fold 1's rows.
absl::StatusOr<std::string> FinishCrossValidated(Run& run) {
  ASSIGN_OR_RETURN(CrossValidationRun cv,
                   RunCrossValidation(run.config, run.plan, *run.map.model, run.report));
  run.stage_start = std::chrono::steady_clock::now();
  std::fprintf(stderr, "%s", CrossValidationConsole(run.report).c_str());
  run.plan.test = std::move(cv.first);
  run.cross_validated = true;
  return Finish(run, &cv.cv.refit);
}

}  // namespace

absl::StatusOr<std::string> RunTraining(const TrainOptions& options, TrainSummary* summary) {
  RETURN_IF_ERROR(CheckVersionFree(ModelDir(options), options.version));
  ASSIGN_OR_RETURN(Run run, Prepare(options));
  run.summary = summary;
  switch (run.config.learner().kind()) {
    case v1::LearnerConfig::NONE:
      return Finish(run, nullptr);
    default: {
      if (run.plan.num_folds > 0) return FinishCrossValidated(run);
      const v1::LearnerConfig& l = run.config.learner();
      const HeadSolver kind =
          ChooseHeadSolver(l, run.map.model->feature_dim(), run.plan.train_rows);
      const bool keep_rows = l.kind() == v1::LearnerConfig::RIDGE &&
                             (kind == HeadSolver::kCgRows || kind == HeadSolver::kDualBand);
      ASSIGN_OR_RETURN(TrainingSet set, Featurize(run, 0, 1, keep_rows));
      ASSIGN_OR_RETURN(LinearModel head, Solve(run, set));
      set = TrainingSet();  // the sums are not needed past the solve
      run.EndStage("solve");
      return Finish(run, &head);
    }
  }
}

absl::StatusOr<std::string> RunShard(const TrainOptions& options) {
  ASSIGN_OR_RETURN(Run run, Prepare(options));
  if (run.config.learner().kind() != v1::LearnerConfig::RIDGE &&
      run.config.learner().kind() != v1::LearnerConfig::SPEC_AVG) {
    return absl::InvalidArgumentError(
        "--shard needs learner.kind RIDGE or SPEC_AVG (the others do not reduce from sums)");
  }
  if (run.plan.num_folds > 0) {
    return absl::InvalidArgumentError(
        "--shard does not combine with split.k_fold or split.leave_one_group_out");
  }
  RETURN_IF_ERROR(CheckMemory(run, /*reduce=*/false));
  ASSIGN_OR_RETURN(TrainingSet set,
                   Featurize(run, options.shard, options.num_shards, /*keep_rows=*/false));
  const GramAccumulator& acc = *set.sums;
  const std::string path = ShardFilePath(ShardDir(options), options.shard, options.num_shards);
  RETURN_IF_ERROR(WriteShardFile(path, ConfigFingerprint(run.config_text), options.shard,
                                 options.num_shards, acc));
  return path;
}

absl::StatusOr<std::string> RunReduce(const TrainOptions& options, TrainSummary* summary) {
  RETURN_IF_ERROR(CheckVersionFree(ModelDir(options), options.version));
  // The shards are waited for first: the bank is built once they are done.
  RETURN_IF_ERROR(
      WaitForShardFiles(ShardDir(options), options.num_shards, options.shard_wait_seconds));
  ASSIGN_OR_RETURN(Run run, Prepare(options));
  run.summary = summary;
  if (run.plan.num_folds > 0) {
    return absl::InvalidArgumentError(
        "--reduce does not combine with split.k_fold or split.leave_one_group_out");
  }
  RETURN_IF_ERROR(CheckMemory(run, /*reduce=*/true));
  const uint64_t fingerprint = ConfigFingerprint(run.config_text);
  // One D x D accumulator; each shard file is added to it a column at a time.
  ASSIGN_OR_RETURN(GramAccumulator total,
                   GramAccumulator::Create(run.map.model->feature_dim(),
                                           std::max<int64_t>(1, run.plan.target_dim())));
  for (int i = 0; i < options.num_shards; ++i) {
    const std::string path = ShardFilePath(ShardDir(options), i, options.num_shards);
    RETURN_IF_ERROR(MergeShardFile(path, fingerprint, i, options.num_shards, &total));
  }
  if (total.count() != run.plan.train_rows) {
    return absl::FailedPreconditionError(absl::StrCat("the shards hold ", total.count(),
                                                      " training rows, the config's split has ",
                                                      run.plan.train_rows));
  }
  run.EndStage("featurize");
  TrainingSet set;
  set.sums = std::move(total);
  ASSIGN_OR_RETURN(LinearModel head, Solve(run, set));
  set = TrainingSet();
  run.EndStage("solve");
  ASSIGN_OR_RETURN(std::string written, Finish(run, &head));
  if (options.remove_shards) RemoveShardFiles(ShardDir(options), options.num_shards);
  return written;
}

absl::StatusOr<TrainingPlan> PlanTraining(const TrainOptions& options) {
  ASSIGN_OR_RETURN(Run run, Prepare(options));
  TrainingPlan plan;
  plan.shape = ShapeOf(run);
  plan.memory = EstimateTrainingMemory(plan.shape);
  plan.train_rows = run.plan.train_rows;
  return plan;
}

}  // namespace invariant::train
