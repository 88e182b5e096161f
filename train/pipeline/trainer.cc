#include "train/pipeline/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "core/base/file.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/model/featurizer_factory.h"
#include "core/model/repository.h"
#include "core/rls/gram_accumulator.h"
#include "core/rls/lambda_selection.h"
#include "core/rls/linear_model.h"
#include "core/rls/metrics.h"
#include "core/rls/ridge.h"
#include "core/spectral/von_mises_krr.h"
#include "google/protobuf/text_format.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/feature_map.h"
#include "train/pipeline/progress.h"
#include "train/pipeline/report.h"
#include "train/pipeline/shard_file.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;

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
  // Every row the feature map computed (training, validation, test) and the
  // seconds it took: the report's featurize rate.
  int64_t featurized_rows = 0;
  double featurize_seconds = 0;

  void CountFeaturized(int64_t rows, std::chrono::steady_clock::time_point since) {
    featurized_rows += rows;
    featurize_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    report.featurized_rows = featurized_rows;
    report.featurize_rows_per_second =
        featurize_seconds > 0 ? static_cast<double>(featurized_rows) / featurize_seconds : 0;
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

// The certificate's draws: seeded from the encoder's seed, a stream of their own.
constexpr uint64_t kCertificateSeedSalt = 0xce47;

std::string ModelDir(const TrainOptions& o) { return invariant::ModelDir(o.models_dir, o.name); }

std::string ShardDir(const TrainOptions& o) {
  return o.shard_dir.empty() ? (fs::path(ModelDir(o)) / "shards").string() : o.shard_dir;
}

// Stages data and bank.
absl::StatusOr<Run> Prepare(const TrainOptions& options) {
  Run run;
  run.options = options;
  ASSIGN_OR_RETURN(run.config_text, ReadFile(options.config_path));
  ASSIGN_OR_RETURN(run.config, ParseTrainConfig(run.config_text, options.config_path));
  ASSIGN_OR_RETURN(run.plan, PlanData(run.config));
  run.EndStage("data");
  std::fprintf(stderr, "data: %lld train, %lld validation, %lld test rows of %lld values\n",
               static_cast<long long>(run.plan.train_rows),
               static_cast<long long>(run.plan.validation.rows()),
               static_cast<long long>(run.plan.test.rows()),
               static_cast<long long>(run.plan.schema.dim));
  ASSIGN_OR_RETURN(run.map, BuildFeatureMap(run.config, run.plan));
  run.EndStage("bank");
  std::fprintf(stderr, "bank: %s encoder, %lld features, %.1f MiB of parameters\n",
               EncoderKindName(run.map.manifest.encoder()).c_str(),
               static_cast<long long>(run.map.model->feature_dim()),
               static_cast<double>(run.map.model->bytes()) / (1 << 20));
  return run;
}

// model.Featurize over n rows in row chunks on the process thread pool
// (each chunk's encoder splits its work further on the same pool). Every
// row's features depend only on that row (the encoders' kernels are
// batch-independent), so the result is the same bits as one call.
void ParallelFeaturize(const Model& model, int64_t n, const float* x, float* out) {
  constexpr int64_t kChunkRows = 256;
  ParallelFor((n + kChunkRows - 1) / kChunkRows, [&](int64_t chunk) {
    const int64_t start = chunk * kChunkRows;
    const int64_t rows = std::min(kChunkRows, n - start);
    model.Featurize(rows, x + start * model.input_dim(), out + start * model.feature_dim());
  });
}

// Stage featurize: ΦᵀΦ and ΦᵀY over this shard's training rows.
absl::StatusOr<GramAccumulator> Featurize(Run& run, int shard, int num_shards) {
  const Model& model = *run.map.model;
  const int64_t f = model.feature_dim();
  ASSIGN_OR_RETURN(GramAccumulator acc,
                   GramAccumulator::Create(f, std::max<int64_t>(1, run.plan.target_dim())));
  Progress progress("featurize", run.plan.train_rows / num_shards);
  std::vector<float> phi;
  RETURN_IF_ERROR(ForEachTrainBlock(run.plan, run.config.block_rows(), shard, num_shards,
                                    [&](const TrainBlock& b) {
                                      phi.resize(static_cast<size_t>(b.n * f));
                                      ParallelFeaturize(model, b.n, b.x, phi.data());
                                      ASSIGN_OR_RETURN(FloatMatrix y, BlockTargets(run.plan, b));
                                      RETURN_IF_ERROR(acc.Add(b.n, phi.data(), y.data()));
                                      progress.Advance(b.n);
                                      return absl::OkStatus();
                                    }));
  const double seconds = progress.Finish();
  run.featurized_rows += acc.count();
  run.featurize_seconds += seconds;
  run.CountFeaturized(0, std::chrono::steady_clock::now());
  run.EndStage("featurize");
  return acc;
}

FloatMatrix FeaturizeAll(const Model& model, const Dataset& data) {
  FloatMatrix phi = FloatMatrix::Zeros(data.rows(), model.feature_dim());
  ParallelFeaturize(model, data.rows(), data.x.data(), phi.mutable_data());
  return phi;
}

RlsTask TaskOf(const Run& run) {
  return run.plan.classification() ? RlsTask::kClassification : RlsTask::kRegression;
}

constexpr int kMaxGridExtensions = 8;

// −1 when λ is the smallest of a grid of two or more values, +1 the largest, else 0.
int LambdaGridEnd(double lambda, const std::vector<double>& grid) {
  if (grid.size() < 2) return 0;
  if (lambda <= *std::min_element(grid.begin(), grid.end())) return -1;
  if (lambda >= *std::max_element(grid.begin(), grid.end())) return 1;
  return 0;
}

// A chosen λ at an end of its grid may be a bound, not an optimum: say so in
// the report and on stderr.
void WarnAtGridEnd(Run& run, const std::vector<double>& grid) {
  const int end = LambdaGridEnd(run.report.lambda, grid);
  if (end == 0) return;
  const std::string warning = absl::StrCat(
      "lambda ", run.report.lambda, " is the ", end < 0 ? "smallest" : "largest",
      " value of learner.lambda_grid: the best lambda may lie beyond it; widen the grid or set "
      "learner.extend_lambda_grid");
  std::fprintf(stderr, "warning: %s\n", warning.c_str());
  run.report.warnings.push_back(warning);
}

// Stage solve for RIDGE and SPEC_AVG: the head over the features. SPEC_AVG's
// default estimator, SPEC_AVG_LEAST_SQUARES, is the ridge solve below on the
// invariant features; SPEC_AVG_ALGORITHM1 is the literal average here.
absl::StatusOr<LinearModel> Solve(Run& run, const GramAccumulator& acc) {
  const v1::LearnerConfig& l = run.config.learner();
  if (l.kind() == v1::LearnerConfig::SPEC_AVG &&
      l.spec_avg_estimator() == v1::LearnerConfig::SPEC_AVG_ALGORITHM1) {
    // Spec-Avg (Algorithm 1): f̂ = (1/n) Σ y_i ψ(x_i) over the invariant
    // features, which is ΦᵀY / N; no bias (feature 0 is the constant).
    // With center_targets the constant feature's coefficient is ȳ and the
    // others come from y − ȳ: Σ (y_i − ȳ) φ(x_i) = ΦᵀY − Σφ · ȳ.
    const double n = static_cast<double>(acc.count());
    Eigen::MatrixXd w = acc.phi_t_y() / n;
    if (l.center_targets()) {
      const Eigen::RowVectorXd y_mean = acc.y_sum().transpose() / n;
      w -= (acc.phi_sum() / n) * y_mean;
      w.row(0) = y_mean;  // feature 0 is the constant function 1
    }
    LinearModel m;
    m.weights = FloatMatrix::FromEigen(w);
    m.bias = FloatMatrix::Zeros(1, m.weights.cols());
    return m;
  }
  const RidgeSolverKind kind =
      l.ridge_solver() == v1::LearnerConfig::RIDGE_SOLVER_EIGEN      ? RidgeSolverKind::kEigen
      : l.ridge_solver() == v1::LearnerConfig::RIDGE_SOLVER_CHOLESKY ? RidgeSolverKind::kCholesky
                                                                     : RidgeSolverKind::kAuto;
  ASSIGN_OR_RETURN(std::unique_ptr<RidgeSolver> solver, MakeGramRidgeSolver(acc, kind));
  const auto featurize_start = std::chrono::steady_clock::now();
  FloatMatrix val_phi = FeaturizeAll(*run.map.model, run.plan.validation);
  run.CountFeaturized(run.plan.validation.rows(), featurize_start);
  ASSIGN_OR_RETURN(FloatMatrix val_y, DatasetTargets(run.plan, run.plan.validation));
  std::vector<double> grid(l.lambda_grid().begin(), l.lambda_grid().end());
  ASSIGN_OR_RETURN(LinearModelSelection sel,
                   ChooseLambda(*solver, grid, val_phi, val_y, TaskOf(run)));
  // learner.extend_lambda_grid: a decade beyond whichever end was chosen,
  // until the choice is inside the grid (at most kMaxGridExtensions decades).
  for (int i = 0; i < kMaxGridExtensions && l.extend_lambda_grid() &&
                  LambdaGridEnd(sel.curve.best_lambda(), grid) != 0;
       ++i) {
    const int end = LambdaGridEnd(sel.curve.best_lambda(), grid);
    grid.push_back(end < 0 ? *std::min_element(grid.begin(), grid.end()) / 10
                           : *std::max_element(grid.begin(), grid.end()) * 10);
    std::sort(grid.begin(), grid.end());
    ASSIGN_OR_RETURN(sel, ChooseLambda(*solver, grid, val_phi, val_y, TaskOf(run)));
  }
  const bool regression = sel.curve.task != RlsTask::kClassification;
  run.report.validation_metric = regression ? "rmse" : "accuracy";
  for (size_t i = 0; i < sel.curve.lambdas.size(); ++i) {
    const double score = sel.curve.scores[i];
    run.report.validation_curve.emplace_back(sel.curve.lambdas[i],
                                             regression ? std::sqrt(score) : score);
  }
  run.report.lambda = sel.curve.best_lambda();
  WarnAtGridEnd(run, grid);
  return sel.model;
}

// Test metrics of n × T scores against the test rows.
absl::Status Evaluate(Run& run, const FloatMatrix& scores, v1::Manifest& manifest) {
  const Dataset& test = run.plan.test;
  std::map<std::string, double>& m = run.report.test_metrics;
  if (run.plan.classification()) {
    ASSIGN_OR_RETURN(double acc, Accuracy(ArgmaxRows(scores), test.labels));
    m["accuracy"] = acc;
  } else {
    ASSIGN_OR_RETURN(m["rmse"], RootMeanSquaredError(scores, test.y));
    ASSIGN_OR_RETURN(m["mae"], MeanAbsoluteError(scores, test.y));
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
  r.validation_rows = run.plan.validation.rows();
  r.test_rows = run.plan.test.rows();
  r.task = run.config.learner().kind() == v1::LearnerConfig::NONE ? "none"
           : run.plan.classification()                            ? "classification"
                                                                  : "regression";
  r.certificate = manifest.certificate();
}

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

// An explicit --version that exists is refused before any data is read (the
// publish step checks again, for a writer that appears meanwhile).
absl::Status CheckVersionFree(const TrainOptions& o) {
  if (o.version <= 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<int64_t> versions, ListVersionDirs(ModelDir(o)));
  if (std::find(versions.begin(), versions.end(), o.version) != versions.end()) {
    return absl::AlreadyExistsError(
        absl::StrCat((fs::path(ModelDir(o)) / std::to_string(o.version)).string(), ": version ",
                     o.version, " exists and is never overwritten"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ChooseVersion(const TrainOptions& o) {
  if (o.version > 0) return o.version;
  return NextVersion(ModelDir(o));
}

// Writes the version directory (bundle optional) and commits it.
absl::StatusOr<std::string> WriteVersion(Run& run, int64_t version, const Model* model) {
  ASSIGN_OR_RETURN(StagedVersion staged, StagedVersion::Create(ModelDir(run.options), version));
  if (model != nullptr) {
    RETURN_IF_ERROR(model->Save((fs::path(staged.path()) / kBundleFileName).string()));
  }
  run.EndStage("write");
  RETURN_IF_ERROR(
      WriteText((fs::path(staged.path()) / "report.json").string(), ReportToJson(run.report)));
  RETURN_IF_ERROR(
      WriteText((fs::path(staged.path()) / "report.md").string(), ReportToMarkdown(run.report)));
  if (run.options.testonly_hold_before_publish) {
    std::fprintf(stderr, "invariant-train: holding %s\n", staged.path().c_str());
    std::fflush(stderr);
    absl::Notification never;
    never.WaitForNotification();  // until a signal ends the process
  }
  RETURN_IF_ERROR(staged.Publish());
  if (run.summary != nullptr) {
    run.summary->test_metrics = run.report.test_metrics;
    run.summary->test_rows = run.plan.test.rows();
  }
  return staged.final_path();
}

// Stages solve, evaluate, write for RIDGE, SPEC_AVG and NONE.
absl::StatusOr<std::string> Finish(Run& run, const std::optional<GramAccumulator>& acc) {
  ASSIGN_OR_RETURN(int64_t version, ChooseVersion(run.options));
  v1::Manifest manifest = run.map.manifest;
  manifest.set_model_name(run.options.name);
  manifest.set_version(version);
  manifest.set_created_by("invariant-train");
  manifest.set_created_unix_seconds(static_cast<int64_t>(std::time(nullptr)));
  manifest.set_training_config(run.config_text);
  ModelTensors tensors = run.map.tensors;
  if (acc.has_value()) {
    ASSIGN_OR_RETURN(LinearModel head, Solve(run, *acc));
    run.EndStage("solve");
    v1::LinearHead& h = *manifest.mutable_head();
    h.set_task(run.plan.classification() ? v1::TASK_CLASSIFICATION : v1::TASK_REGRESSION);
    h.set_lambda(head.lambda);
    if (run.plan.classification()) {
      for (const std::string& c : run.plan.schema.class_names) h.add_class_names(c);
    } else {
      const std::vector<std::string>& names = run.plan.schema.target_names;
      for (int64_t t = 0; t < head.output_dim(); ++t) {
        h.add_target_names(static_cast<int64_t>(names.size()) == head.output_dim()
                               ? names[static_cast<size_t>(t)]
                               : absl::StrCat("y", t));
      }
    }
    tensors.f32[kHeadWeightsTensor] = head.weights;
    tensors.f32[kHeadBiasTensor] = head.bias;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, Model::Assemble(manifest, tensors));
  if (model->has_head()) {
    FloatMatrix scores = FloatMatrix::Zeros(run.plan.test.rows(), model->output_dim());
    const auto featurize_start = std::chrono::steady_clock::now();
    model->Predict(run.plan.test.rows(), run.plan.test.x.data(), scores.mutable_data());
    run.CountFeaturized(run.plan.test.rows(), featurize_start);
    RETURN_IF_ERROR(Evaluate(run, scores, manifest));
  }
  ASSIGN_OR_RETURN(*manifest.mutable_certificate(),
                   CertifyModel(*model, run.plan.test.x, run.config.certificate(),
                                run.config.encoder().seed() ^ kCertificateSeedSalt));
  run.EndStage("evaluate");
  ASSIGN_OR_RETURN(model, Model::Assemble(manifest, std::move(tensors)));
  FillReport(run, model->manifest());
  return WriteVersion(run, version, model.get());
}

// KERNEL_RIDGE_VON_MISES: the non-invariant baseline; evaluated and reported,
// not served (it has no finite feature map), so no bundle is written.
absl::StatusOr<std::string> FinishKernelRidge(Run& run) {
  const int64_t d = run.plan.schema.dim;
  Dataset train;
  train.x = FloatMatrix::Zeros(run.plan.train_rows, d);
  train.y = FloatMatrix::Zeros(run.plan.train_rows, 1);
  int64_t row = 0;
  RETURN_IF_ERROR(
      ForEachTrainBlock(run.plan, run.config.block_rows(), 0, 1, [&](const TrainBlock& b) {
        std::memcpy(train.x.mutable_row(row), b.x, sizeof(float) * b.n * d);
        std::memcpy(train.y.mutable_row(row), b.y, sizeof(float) * b.n);
        row += b.n;
        return absl::OkStatus();
      }));
  run.EndStage("featurize");
  const v1::LearnerConfig& l = run.config.learner();
  std::vector<double> grid(l.lambda_grid().begin(), l.lambda_grid().end());
  ASSIGN_OR_RETURN(VonMisesKrr krr,
                   VonMisesKrr::Fit(static_cast<int32_t>(d), train.rows(), train.x.data(),
                                    train.y.data(), l.von_mises_eta(), grid));
  const Dataset& val = run.plan.validation;
  std::vector<float> out(static_cast<size_t>(val.rows() * krr.num_models()));
  krr.Predict(val.rows(), val.x.data(), out.data());
  int64_t best = 0;
  run.report.validation_metric = "rmse";
  for (int64_t m = 0; m < krr.num_models(); ++m) {
    double mse = 0;
    for (int64_t i = 0; i < val.rows(); ++i) {
      const double e = out[static_cast<size_t>(i * krr.num_models() + m)] - val.y.row(i)[0];
      mse += e * e / static_cast<double>(val.rows());
    }
    run.report.validation_curve.emplace_back(grid[static_cast<size_t>(m)], std::sqrt(mse));
    if (std::sqrt(mse) <= run.report.validation_curve[static_cast<size_t>(best)].second) best = m;
  }
  run.report.lambda = grid[static_cast<size_t>(best)];
  WarnAtGridEnd(run, grid);
  run.EndStage("solve");
  const int64_t k = krr.num_models();
  BatchFunction f = [&](int64_t n, const float* x, float* y) {
    std::vector<float> all(static_cast<size_t>(n * k));
    krr.Predict(n, x, all.data());
    for (int64_t i = 0; i < n; ++i) y[i] = all[static_cast<size_t>(i * k + best)];
  };
  FloatMatrix scores = FloatMatrix::Zeros(run.plan.test.rows(), 1);
  f(run.plan.test.rows(), run.plan.test.x.data(), scores.mutable_data());
  v1::Manifest manifest = run.map.manifest;
  RETURN_IF_ERROR(Evaluate(run, scores, manifest));
  ASSIGN_OR_RETURN(
      *manifest.mutable_certificate(),
      CertifyPredictor(f, 1, run.config.encoder(), run.plan.test.x, run.config.certificate(),
                       run.config.encoder().seed() ^ kCertificateSeedSalt));
  run.EndStage("evaluate");
  ASSIGN_OR_RETURN(int64_t version, ChooseVersion(run.options));
  manifest.set_model_name(run.options.name);
  manifest.set_version(version);
  FillReport(run, manifest);
  run.report.encoder_kind = "kernel_ridge_von_mises";
  run.report.feature_dim = 0;
  return WriteVersion(run, version, nullptr);
}

}  // namespace

absl::StatusOr<std::string> RunTraining(const TrainOptions& options, TrainSummary* summary) {
  RETURN_IF_ERROR(CheckVersionFree(options));
  ASSIGN_OR_RETURN(Run run, Prepare(options));
  run.summary = summary;
  switch (run.config.learner().kind()) {
    case v1::LearnerConfig::KERNEL_RIDGE_VON_MISES:
      return FinishKernelRidge(run);
    case v1::LearnerConfig::NONE:
      return Finish(run, std::nullopt);
    default: {
      ASSIGN_OR_RETURN(GramAccumulator acc, Featurize(run, 0, 1));
      return Finish(run, std::move(acc));
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
  ASSIGN_OR_RETURN(GramAccumulator acc, Featurize(run, options.shard, options.num_shards));
  const std::string path = ShardFilePath(ShardDir(options), options.shard, options.num_shards);
  RETURN_IF_ERROR(WriteShardFile(path, ConfigFingerprint(run.config_text), options.shard,
                                 options.num_shards, acc));
  return path;
}

absl::StatusOr<std::string> RunReduce(const TrainOptions& options, TrainSummary* summary) {
  RETURN_IF_ERROR(CheckVersionFree(options));
  ASSIGN_OR_RETURN(Run run, Prepare(options));
  run.summary = summary;
  const uint64_t fingerprint = ConfigFingerprint(run.config_text);
  std::optional<GramAccumulator> total;
  for (int i = 0; i < options.num_shards; ++i) {
    const std::string path = ShardFilePath(ShardDir(options), i, options.num_shards);
    ASSIGN_OR_RETURN(GramAccumulator part, ReadShardFile(path, fingerprint, i, options.num_shards));
    if (!total.has_value()) {
      total = std::move(part);
    } else {
      RETURN_IF_ERROR(total->Merge(part));
    }
  }
  if (!total.has_value() || total->count() != run.plan.train_rows) {
    return absl::FailedPreconditionError(absl::StrCat("the shards hold ",
                                                      total.has_value() ? total->count() : 0,
                                                      " training rows, the config's "
                                                      "split has ",
                                                      run.plan.train_rows));
  }
  run.EndStage("featurize");
  return Finish(run, std::move(total));
}

absl::StatusOr<v1::InvarianceCertificate> RunCertify(const TrainOptions& options,
                                                     const std::string& model_path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(options.config_path));
  ASSIGN_OR_RETURN(v1::TrainConfig config, ParseTrainConfig(text, options.config_path));
  std::error_code ec;
  const std::string bundle = fs::is_directory(model_path, ec)
                                 ? (fs::path(model_path) / kBundleFileName).string()
                                 : model_path;
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, Model::Load(bundle));
  ASSIGN_OR_RETURN(DataPlan plan, PlanData(config));
  if (plan.test.x.cols() != model->input_dim()) {
    return absl::InvalidArgumentError(absl::StrCat(options.config_path, ": the test rows have ",
                                                   plan.test.x.cols(), " values, but ", bundle,
                                                   " takes input_dim ", model->input_dim()));
  }
  return CertifyModel(*model, plan.test.x, config.certificate(),
                      config.encoder().seed() ^ kCertificateSeedSalt);
}

}  // namespace invariant::train
