#include "train/pipeline/config.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

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

absl::Status Range(const std::string& field, double v, double lo, double hi) {
  if (v >= lo && v <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be in [", lo, ", ", hi, "], got ", v));
}

absl::Status Positive(const std::string& field, double v) {
  if (v > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got ", v));
}

absl::Status ValidateEncoder(v1::TrainConfig& c) {
  v1::EncoderSpec& e = *c.mutable_encoder();
  switch (e.params_case()) {
    case v1::EncoderSpec::kCdf: {
      v1::CdfParams& p = *e.mutable_cdf();
      RETURN_IF_ERROR(Range("encoder.cdf.num_templates", p.num_templates(), 1, 1e6));
      if (!e.group().enumerate()) {
        RETURN_IF_ERROR(Range("encoder.cdf.num_group_elements", p.num_group_elements(), 1, 1e5));
      }
      if (p.pooling() == v1::POOLING_UNSPECIFIED) p.set_pooling(v1::POOLING_CDF);
      if (p.pooling() == v1::POOLING_CDF) {
        RETURN_IF_ERROR(Range("encoder.cdf.num_bins", p.num_bins(), 1, 1000));
        if (p.range() == 0) p.set_range(1.0);
        RETURN_IF_ERROR(Positive("encoder.cdf.range", p.range()));
      }
      if (p.template_kind() == v1::TEMPLATE_KIND_UNSPECIFIED) {
        p.set_template_kind(v1::TEMPLATE_GAUSSIAN_REJECTION);
      }
      if (p.template_kind() == v1::TEMPLATE_GAUSSIAN) {
        return absl::InvalidArgumentError(
            "encoder.cdf.template_kind must be one of GAUSSIAN_REJECTION, SPHERE, "
            "STANDARD_NORMAL, DATA, got TEMPLATE_GAUSSIAN");
      }
      if (p.epsilon() == 0) p.set_epsilon(0.1);
      break;
    }
    case v1::EncoderSpec::kRandomFourier: {
      v1::RandomFourierParams& p = *e.mutable_random_fourier();
      RETURN_IF_ERROR(Range("encoder.random_fourier.num_features", p.num_features(), 1, 1e6));
      if (!e.group().enumerate()) {
        RETURN_IF_ERROR(
            Range("encoder.random_fourier.num_group_elements", p.num_group_elements(), 1, 1e5));
      }
      RETURN_IF_ERROR(Positive("encoder.random_fourier.sigma", p.sigma()));
      break;
    }
    case v1::EncoderSpec::kNystrom: {
      v1::NystromParams& p = *e.mutable_nystrom();
      RETURN_IF_ERROR(Range("encoder.nystrom.num_landmarks", p.num_landmarks(), 1, 1e5));
      if (!e.group().enumerate()) {
        RETURN_IF_ERROR(
            Range("encoder.nystrom.num_group_elements", p.num_group_elements(), 1, 1e5));
      }
      RETURN_IF_ERROR(Positive("encoder.nystrom.sigma", p.sigma()));
      if (p.eigen_cutoff() == 0) p.set_eigen_cutoff(1e-6);
      break;
    }
    case v1::EncoderSpec::kSpectral: {
      const v1::SpectralParams& p = e.spectral();
      RETURN_IF_ERROR(Range("encoder.spectral.dim", p.dim(), 1, 64));
      if (p.generators().empty()) {
        return absl::InvalidArgumentError(
            "encoder.spectral.generators must name at least one generator, got none");
      }
      break;
    }
    case v1::EncoderSpec::PARAMS_NOT_SET:
      return absl::InvalidArgumentError(
          "encoder must set one of cdf, random_fourier, nystrom, spectral; got none");
  }
  if (e.params_case() != v1::EncoderSpec::kSpectral &&
      e.group().kind_case() == v1::GroupSpec::KIND_NOT_SET) {
    return absl::InvalidArgumentError(
        "encoder.group must set one of permutation, block_permutation, matrix_permutation, "
        "cyclic_shift, sign_flip, image; got none");
  }
  return absl::OkStatus();
}

absl::Status ValidateLearner(v1::TrainConfig& c) {
  v1::LearnerConfig& l = *c.mutable_learner();
  if (l.kind() == v1::LearnerConfig::KIND_UNSPECIFIED) l.set_kind(v1::LearnerConfig::RIDGE);
  if (l.kind() == v1::LearnerConfig::SPEC_AVG && !c.encoder().has_spectral()) {
    return absl::InvalidArgumentError(
        "learner.kind SPEC_AVG requires encoder.spectral; got another encoder");
  }
  if (l.kind() != v1::LearnerConfig::NONE && l.task() == v1::TASK_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        "learner.task must be TASK_CLASSIFICATION or TASK_REGRESSION, got TASK_UNSPECIFIED");
  }
  if (l.lambda_grid().empty()) {
    for (double lam = 1e-8; lam <= 1.5; lam *= 10) l.add_lambda_grid(lam);
  }
  for (int i = 0; i < l.lambda_grid_size(); ++i) {
    if (!(l.lambda_grid(i) > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("learner.lambda_grid[", i, "] must be > 0, got ", l.lambda_grid(i)));
    }
  }
  if (l.kind() == v1::LearnerConfig::KERNEL_RIDGE_VON_MISES && l.task() != v1::TASK_REGRESSION) {
    return absl::InvalidArgumentError(
        "learner.kind KERNEL_RIDGE_VON_MISES needs learner.task TASK_REGRESSION");
  }
  if (l.kind() == v1::LearnerConfig::KERNEL_RIDGE_VON_MISES && l.von_mises_eta() <= 0) {
    l.set_von_mises_eta(1.0);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateTrainConfig(v1::TrainConfig& c) {
  if (c.data().source_case() == v1::DataConfig::SOURCE_NOT_SET) {
    return absl::InvalidArgumentError(
        "data must set one of idx, csv, fashion_mnist, xperm, torus, coulomb; got none");
  }
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
    RETURN_IF_ERROR(Range("data.torus.dim", c.data().torus().dim(), 1, 64));
    RETURN_IF_ERROR(Range("data.torus.num_points", c.data().torus().num_points(), 2, 1e8));
  }
  if (c.data().has_coulomb()) {
    const auto& q = c.data().coulomb();
    RETURN_IF_ERROR(Range("data.coulomb.num_molecules", q.num_molecules(), 2, 1e8));
    RETURN_IF_ERROR(Range("data.coulomb.max_atoms", q.max_atoms(), 2, 64));
  }
  const auto& s = c.split();
  for (auto [name, v] : {std::pair<const char*, int64_t>{"split.train", s.train()},
                         {"split.validation", s.validation()},
                         {"split.test", s.test()},
                         {"split.per_class_train", s.per_class_train()}}) {
    if (v < 0) return absl::InvalidArgumentError(absl::StrCat(name, " must be >= 0, got ", v));
  }
  RETURN_IF_ERROR(ValidateEncoder(c));
  RETURN_IF_ERROR(ValidateLearner(c));
  if (c.has_second_layer()) {
    RETURN_IF_ERROR(Range("second_layer.num_features", c.second_layer().num_features(), 1, 1e6));
    RETURN_IF_ERROR(Positive("second_layer.sigma", c.second_layer().sigma()));
  }
  if (c.certificate().num_points() == 0) c.mutable_certificate()->set_num_points(200);
  if (c.certificate().num_group_elements() == 0) {
    c.mutable_certificate()->set_num_group_elements(32);
  }
  if (c.block_rows() == 0) c.set_block_rows(4096);
  RETURN_IF_ERROR(Range("block_rows", c.block_rows(), 1, 1 << 20));
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
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open config"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseTrainConfig(ss.str(), path);
}

}  // namespace invariant::train
