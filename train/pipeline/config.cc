#include "train/pipeline/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/audio/front_end.h"
#include "core/base/file.h"
#include "core/base/status_macros.h"
#include "core/groups/group_factory.h"
#include "core/image/front_end.h"
#include "core/model/encoder_kinds.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "train/data/audio_augment.h"

namespace invariant::train {
namespace {

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  explicit CollectErrors(std::string origin) : origin_(std::move(origin)) {}
  void AddError(int line, int column, const std::string& message) override {
    errors_.push_back(absl::StrCat(origin_, ":", line + 1, ":", column + 1, ": ", message));
  }
  void AddWarning(int line, int column, const std::string& message) override {
    AddError(line, column, message);
  }
  std::string joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::string origin_;
  std::vector<std::string> errors_;
};

// `group` is one the factory makes: every field in range, checked when the
// config is read rather than when the encoder is built, after the data.
absl::Status CheckGroup(const v1::GroupSpec& group, absl::string_view owner) {
  absl::Status made = MakeGroupDistribution(group).status();
  if (made.ok()) return made;
  return absl::InvalidArgumentError(absl::StrCat(owner, ".", made.message()));
}

absl::Status ValidateEncoder(v1::TrainConfig& c) {
  v1::EncoderSpec& e = *c.mutable_encoder();
  ASSIGN_OR_RETURN(const EncoderKind* kind, FindEncoderKind(e, "encoder"));
  RETURN_IF_ERROR(kind->validate_config(e));
  if (kind->needs_group && e.group().kind_case() == v1::GroupSpec::KIND_NOT_SET) {
    return absl::InvalidArgumentError(
        "encoder.group must set one of permutation, block_permutation, matrix_permutation, "
        "cyclic_shift, sign_flip, image, identity, audio, dihedral; got none");
  }
  if (e.group().kind_case() != v1::GroupSpec::KIND_NOT_SET) {
    RETURN_IF_ERROR(CheckGroup(e.group(), "encoder"));
  }
  return absl::OkStatus();
}

// split.test_groups and split.leave_one_group_out (the groups themselves
// are checked against the data by PlanData).
absl::Status ValidateGroupSplits(const v1::TrainConfig& c) {
  const v1::SplitConfig& s = c.split();
  for (int i = 0; i < s.test_groups_size(); ++i) {
    if (s.test_groups(i).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("split.test_groups[", i, "] is empty: name a group"));
    }
  }
  if (!s.test_groups().empty() && (s.k_fold() != 0 || s.leave_one_group_out())) {
    return absl::InvalidArgumentError(
        "split.test_groups fixes one test set: it does not combine with split.k_fold or "
        "split.leave_one_group_out");
  }
  if (!s.leave_one_group_out()) return absl::OkStatus();
  if (s.k_fold() != 0 || s.stratify()) {
    return absl::InvalidArgumentError(
        "split.leave_one_group_out makes one fold per group: leave split.k_fold and "
        "split.stratify unset");
  }
  if (s.train() != 0 || s.validation() != 0 || s.test() != 0 || s.per_class_train() != 0) {
    return absl::InvalidArgumentError(
        "split.leave_one_group_out replaces split.train, validation, test and per_class_train: "
        "leave them unset");
  }
  if (c.learner().kind() != v1::LearnerConfig::RIDGE) {
    return absl::InvalidArgumentError(
        "split.leave_one_group_out needs learner.kind RIDGE (the folds are cross-validated ridge "
        "heads)");
  }
  return absl::OkStatus();
}

// split.k_fold and learner.cg (after ValidateLearner has set the kind).
absl::Status ValidateSolverAndFolds(v1::TrainConfig& c) {
  const v1::SplitConfig& s = c.split();
  RETURN_IF_ERROR(ValidateGroupSplits(c));
  if (s.stratify() && s.k_fold() == 0) {
    return absl::InvalidArgumentError(
        "split.stratify stratifies the folds of split.k_fold: set k_fold (>= 3) or drop it");
  }
  if (s.k_fold() != 0) {
    if (s.k_fold() < 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("split.k_fold must be 0 (one split) or >= 3 (a test fold and an inner "
                       "cross-validation over at least two folds), got ",
                       s.k_fold()));
    }
    if (s.train() != 0 || s.validation() != 0 || s.test() != 0 || s.per_class_train() != 0) {
      return absl::InvalidArgumentError(
          "split.k_fold replaces split.train, validation, test and per_class_train: leave them "
          "unset");
    }
    if (c.learner().kind() != v1::LearnerConfig::RIDGE) {
      return absl::InvalidArgumentError(
          "split.k_fold needs learner.kind RIDGE (the folds are cross-validated ridge heads)");
    }
  }
  v1::LearnerConfig::ConjugateGradient& cg = *c.mutable_learner()->mutable_cg();
  if (!(cg.tolerance() >= 0 && cg.tolerance() < 1) ||
      !(cg.selection_tolerance() >= 0 && cg.selection_tolerance() < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "learner.cg.tolerance and selection_tolerance must be in [0, 1) (0: the default), got ",
        cg.tolerance(), " and ", cg.selection_tolerance()));
  }
  if (cg.max_iterations() < 0 || cg.preconditioner_rank() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("learner.cg.max_iterations and preconditioner_rank must be >= 0, got ",
                     cg.max_iterations(), " and ", cg.preconditioner_rank()));
  }
  if (cg.tolerance() == 0) cg.set_tolerance(1e-10);
  if (cg.selection_tolerance() == 0) cg.set_selection_tolerance(std::max(1e-6, cg.tolerance()));
  if (cg.selection_tolerance() < cg.tolerance()) {
    return absl::InvalidArgumentError(
        absl::StrCat("learner.cg.selection_tolerance (", cg.selection_tolerance(),
                     ") must be >= learner.cg.tolerance (", cg.tolerance(), ")"));
  }
  if (cg.max_iterations() == 0) cg.set_max_iterations(2000);
  if (cg.preconditioner_rank() == 0) cg.set_preconditioner_rank(512);
  return absl::OkStatus();
}

absl::Status ValidateLearner(v1::TrainConfig& c) {
  v1::LearnerConfig& l = *c.mutable_learner();
  // Spectral features default to Spec-Avg, every other encoder to ridge.
  if (l.kind() == v1::LearnerConfig::KIND_UNSPECIFIED) {
    l.set_kind(c.encoder().has_spectral() ? v1::LearnerConfig::SPEC_AVG : v1::LearnerConfig::RIDGE);
  }
  if (l.kind() == v1::LearnerConfig::SPEC_AVG && !c.encoder().has_spectral()) {
    return absl::InvalidArgumentError(
        "learner.kind SPEC_AVG requires encoder.spectral; got another encoder");
  }
  if (l.spec_avg_estimator() != v1::LearnerConfig::SPEC_AVG_ESTIMATOR_UNSPECIFIED &&
      l.kind() != v1::LearnerConfig::SPEC_AVG) {
    return absl::InvalidArgumentError(
        absl::StrCat("learner.spec_avg_estimator applies to learner.kind SPEC_AVG only; got kind ",
                     v1::LearnerConfig::Kind_Name(l.kind())));
  }
  // Spec-Avg's default estimator: least squares on the invariant features
  // (Algorithm 1 with the empirical second moment), within 1.5x of kernel
  // ridge on the §6 torus where Algorithm 1 literally is not
  // (research/results/torus.md). SPEC_AVG_ALGORITHM1 selects the literal one.
  if (l.kind() == v1::LearnerConfig::SPEC_AVG &&
      l.spec_avg_estimator() == v1::LearnerConfig::SPEC_AVG_ESTIMATOR_UNSPECIFIED) {
    l.set_spec_avg_estimator(v1::LearnerConfig::SPEC_AVG_LEAST_SQUARES);
  }
  if (l.kind() != v1::LearnerConfig::NONE && l.task() == v1::TASK_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        "learner.task must be TASK_CLASSIFICATION or TASK_REGRESSION, got TASK_UNSPECIFIED");
  }
  if (l.lambda_grid().empty()) {
    for (double lam = 1e-8; lam <= 1.5; lam *= 10) l.add_lambda_grid(lam);
  }
  for (int i = 0; i < l.lambda_grid_size(); ++i) {
    if (!(l.lambda_grid(i) > 0) || !std::isfinite(l.lambda_grid(i))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "learner.lambda_grid[", i, "] must be > 0, got ", l.lambda_grid(i), " (and finite)"));
    }
  }
  if (l.kind() == v1::LearnerConfig::KERNEL_RIDGE_VON_MISES) {
    // A paper baseline with no finite feature map, never served: the
    // reproduction that compares against it runs it.
    return absl::InvalidArgumentError(
        "learner.kind KERNEL_RIDGE_VON_MISES is not trained by invariant-train (the von Mises "
        "kernel ridge baseline has no feature map to serve): it runs in the torus reproduction, "
        "build/bin/invariant-repro-torus (research/repro/torus.sh)");
  }
  if (!std::isfinite(l.von_mises_eta())) {
    return absl::InvalidArgumentError(
        absl::StrCat("learner.von_mises_eta must be finite, got ", l.von_mises_eta()));
  }
  return absl::OkStatus();
}

// data.audio: a source, a front end, classification, the augmentation; the
// encoder's input shape from the front end when the config leaves it empty.
absl::Status ValidateAudioData(v1::TrainConfig& c) {
  const auto& a = c.data().audio();
  if (a.dir().empty() == a.manifest().empty()) {
    return absl::InvalidArgumentError("data.audio must set exactly one of dir, manifest");
  }
  if (!a.has_front_end()) {
    return absl::InvalidArgumentError(
        "data.audio.front_end must be set (the model stores it and the server applies it)");
  }
  if (c.learner().task() == v1::TASK_REGRESSION) {
    return absl::InvalidArgumentError(
        "data.audio is classification only (labels from file names or the manifest): "
        "learner.task must be TASK_CLASSIFICATION");
  }
  if (a.has_augmentation()) {
    RETURN_IF_ERROR(
        ValidateAudioAugmentation(a.augmentation(), a.front_end(), "data.audio.augmentation"));
  }
  // A spectrogram is an F × T × 1 image: an encoder that reads the input's
  // shape (patch) gets it from the front end unless the config says.
  if (c.encoder().input_shape().empty()) {
    absl::StatusOr<v1::AudioFrontEnd> fe = audio::AudioFrontEnd::Complete(a.front_end());
    if (!fe.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("data.audio.front_end: ", fe.status().message()));
    }
    for (int64_t side : {int64_t{fe->frequency_bins()}, int64_t{fe->frames()}, int64_t{1}}) {
      c.mutable_encoder()->add_input_shape(side);
    }
  }
  return absl::OkStatus();
}

// data.image_files: a source, a front end, classification; the encoder's
// input shape from the front end when the config leaves it empty.
absl::Status ValidateImageFileData(v1::TrainConfig& c) {
  const auto& f = c.data().image_files();
  if (f.dir().empty() == f.manifest().empty()) {
    return absl::InvalidArgumentError("data.image_files must set exactly one of dir, manifest");
  }
  if (!f.has_front_end()) {
    return absl::InvalidArgumentError(
        "data.image_files.front_end must be set (the model stores it and the server applies it)");
  }
  if (c.learner().task() == v1::TASK_REGRESSION) {
    return absl::InvalidArgumentError(
        "data.image_files is classification only (labels from class folders or the manifest): "
        "learner.task must be TASK_CLASSIFICATION");
  }
  absl::StatusOr<v1::ImageFrontEnd> fe = image::ImageFrontEnd::Complete(f.front_end());
  if (!fe.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.image_files.front_end: ", fe.status().message()));
  }
  if (c.encoder().input_shape().empty()) {
    for (int64_t side : {fe->height(), fe->width(), fe->channels()}) {
      c.mutable_encoder()->add_input_shape(side);
    }
  }
  return absl::OkStatus();
}

// data: one source is set, and the one set is well formed (defaults filled).
absl::Status ValidateData(v1::TrainConfig& c) {
  if (c.data().source_case() == v1::DataConfig::SOURCE_NOT_SET) {
    return absl::InvalidArgumentError(
        "data must set one of idx, csv, fashion_mnist, xperm, torus, coulomb, audio, cifar, "
        "image_files; got none");
  }
  if (c.data().has_audio()) RETURN_IF_ERROR(ValidateAudioData(c));
  if (c.data().has_image_files()) RETURN_IF_ERROR(ValidateImageFileData(c));
  if (c.data().has_fashion_mnist() && c.data().fashion_mnist().dir().empty()) {
    c.mutable_data()->mutable_fashion_mnist()->set_dir("/usr/share/datasets/fashion-mnist");
  }
  if (c.data().has_csv()) {
    const auto& csv = c.data().csv();
    if (csv.path().empty()) return absl::InvalidArgumentError("data.csv.path must be set");
    if (csv.label_column().empty() == csv.target_column().empty()) {
      return absl::InvalidArgumentError(
          "data.csv must set exactly one of label_column, target_column");
    }
  }
  if (c.data().has_torus()) {
    RETURN_IF_ERROR(CheckFieldRange("data.torus.dim", c.data().torus().dim(), 1, 64));
    RETURN_IF_ERROR(
        CheckFieldRange("data.torus.num_points", c.data().torus().num_points(), 2, 1e8));
    RETURN_IF_ERROR(
        CheckFieldRange("data.torus.noise_stddev", c.data().torus().noise_stddev(), 0, 1e12));
  }
  if (c.data().has_coulomb()) {
    const auto& q = c.data().coulomb();
    RETURN_IF_ERROR(CheckFieldRange("data.coulomb.num_molecules", q.num_molecules(), 2, 1e8));
    RETURN_IF_ERROR(CheckFieldRange("data.coulomb.max_atoms", q.max_atoms(), 2, 64));
    RETURN_IF_ERROR(CheckFieldRange("data.coulomb.noise_stddev", q.noise_stddev(), 0, 1e12));
  }
  return absl::OkStatus();
}

// certificate: its defaults filled, its group (when set) one the factory makes.
absl::Status ValidateCertificate(v1::TrainConfig& c) {
  if (c.certificate().num_points() == 0) c.mutable_certificate()->set_num_points(200);
  if (c.certificate().num_group_elements() == 0) {
    c.mutable_certificate()->set_num_group_elements(32);
  }
  if (c.certificate().has_group()) {
    RETURN_IF_ERROR(CheckGroup(c.certificate().group(), "certificate"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateTrainConfig(v1::TrainConfig& c) {
  RETURN_IF_ERROR(ValidateData(c));
  const auto& s = c.split();
  for (auto [name, v] : {std::pair<const char*, int64_t>{"split.train", s.train()},
                         {"split.validation", s.validation()},
                         {"split.test", s.test()},
                         {"split.per_class_train", s.per_class_train()}}) {
    if (v < 0) return absl::InvalidArgumentError(absl::StrCat(name, " must be >= 0, got ", v));
  }
  RETURN_IF_ERROR(ValidateEncoder(c));
  // The patch features are averaged over the image group after the
  // preprocessing: per-pixel statistics (a mean image that is not itself
  // mirror-symmetric) would break the invariance; per-channel ones commute
  // with every permutation of the pixels.
  const v1::Preprocess& pre = c.preprocess();
  if (c.encoder().has_patch() && c.encoder().patch().has_image_group() &&
      (pre.center() || pre.scale()) && !pre.per_channel()) {
    return absl::InvalidArgumentError(
        "encoder.patch.image_group needs preprocess.per_channel with preprocess.center or scale: "
        "per-pixel statistics are not invariant to the image group, so the features would not "
        "be either");
  }
  RETURN_IF_ERROR(ValidateLearner(c));
  RETURN_IF_ERROR(ValidateSolverAndFolds(c));
  if (c.has_second_layer()) {
    RETURN_IF_ERROR(
        CheckFieldRange("second_layer.num_features", c.second_layer().num_features(), 1, 1e6));
    RETURN_IF_ERROR(CheckFieldPositive("second_layer.sigma", c.second_layer().sigma()));
  }
  RETURN_IF_ERROR(ValidateCertificate(c));
  if (c.block_rows() == 0) c.set_block_rows(4096);
  RETURN_IF_ERROR(CheckFieldRange("block_rows", c.block_rows(), 1, 1 << 20));
  return absl::OkStatus();
}

absl::StatusOr<v1::TrainConfig> ParseTrainConfig(const std::string& text,
                                                 const std::string& origin) {
  v1::TrainConfig config;
  google::protobuf::TextFormat::Parser parser;
  CollectErrors errors(origin);
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &config)) {
    return absl::InvalidArgumentError(errors.joined());
  }
  absl::Status s = ValidateTrainConfig(config);
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", s.message()));
  return config;
}

absl::StatusOr<v1::TrainConfig> LoadTrainConfig(const std::string& path) {
  std::optional<std::string> text = ReadWholeFile(path);
  if (!text.has_value()) return absl::NotFoundError(absl::StrCat(path, ": cannot open config"));
  return ParseTrainConfig(*text, path);
}

}  // namespace invariant::train
