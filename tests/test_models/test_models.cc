#include "tests/test_models/test_models.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"

namespace invariant::testing_models {

namespace fs = std::filesystem;

absl::StatusOr<std::shared_ptr<const Model>> MakeTestModel(const TestModelSpec& spec) {
  const int64_t d = spec.input_dim;
  const int s = spec.num_features;
  const int r = spec.num_group_elements;
  const double sigma = std::sqrt(static_cast<double>(d));
  Rng rng(spec.seed);

  v1::Manifest manifest =
      TestManifest(spec.name, spec.version, d, "tests/test_models", spec.seed, s, r, sigma);
  for (const std::string& column : spec.input_columns) manifest.add_input_columns(column);
  manifest.set_input_scaling(v1::INPUT_SCALING_NONE);
  v1::EncoderSpec* encoder = manifest.mutable_encoder();
  encoder->add_input_shape(d);
  v1::GroupSpec* group = encoder->mutable_group();
  group->mutable_cyclic_shift()->set_length(static_cast<int32_t>(d));
  group->mutable_cyclic_shift()->set_max_shift(0);
  group->set_placement(v1::GroupSpec::PLACEMENT_TEMPLATES);
  (*manifest.mutable_metrics())["test_accuracy"] = 0.875;
  manifest.mutable_certificate()->set_max_discrepancy(1e-6);
  manifest.mutable_certificate()->set_num_points(32);

  ModelTensors tensors;
  FloatMatrix bank = FloatMatrix::Zeros(static_cast<int64_t>(s) * r, d);
  for (int j = 0; j < s; ++j) {
    std::vector<float> omega(static_cast<size_t>(d));
    for (float& w : omega) w = static_cast<float>(rng.Normal() / sigma);
    for (int k = 0; k < r; ++k) {
      float* row = bank.mutable_row(static_cast<int64_t>(j) * r + k);
      for (int64_t i = 0; i < d; ++i) row[(i + k) % d] = omega[static_cast<size_t>(i)];
    }
  }
  tensors.f32["encoder/bank"] = std::move(bank);

  if (spec.num_classes > 0) {
    std::vector<std::string> names;
    for (int c = 0; c < spec.num_classes; ++c) {
      names.push_back(absl::StrCat(spec.regression ? "target_" : "class_", c));
    }
    AddTestHead(s, spec.regression ? v1::TASK_REGRESSION : v1::TASK_CLASSIFICATION, names, rng,
                &manifest, &tensors);
  }
  return Model::Assemble(std::move(manifest), std::move(tensors));
}

v1::Manifest TestManifest(const std::string& name, int64_t version, int64_t input_dim,
                          const std::string& created_by, uint64_t seed, int num_features,
                          int num_group_elements, double sigma) {
  v1::Manifest manifest;
  manifest.set_format_version(1);
  manifest.set_model_name(name);
  manifest.set_version(version);
  manifest.set_input_dim(input_dim);
  manifest.set_created_by(created_by);
  v1::EncoderSpec* encoder = manifest.mutable_encoder();
  encoder->set_seed(seed);
  v1::RandomFourierParams* rf = encoder->mutable_random_fourier();
  rf->set_num_features(num_features);
  rf->set_num_group_elements(num_group_elements);
  rf->set_sigma(sigma);
  return manifest;
}

void AddIdentityBank(int64_t d, int s, double sigma, Rng& rng, v1::Manifest* manifest,
                     ModelTensors* tensors) {
  v1::GroupSpec* group = manifest->mutable_encoder()->mutable_group();
  group->mutable_identity()->set_dim(static_cast<int32_t>(d));
  group->set_placement(v1::GroupSpec::PLACEMENT_TEMPLATES);
  FloatMatrix bank = FloatMatrix::Zeros(s, d);
  for (int64_t i = 0; i < s * d; ++i) {
    bank.mutable_data()[i] = static_cast<float>(rng.Normal() / sigma);
  }
  tensors->f32["encoder/bank"] = std::move(bank);
}

void AddTestHead(int num_features, v1::Task task, const std::vector<std::string>& names, Rng& rng,
                 v1::Manifest* manifest, ModelTensors* tensors) {
  v1::LinearHead* head = manifest->mutable_head();
  head->set_lambda(1e-3);
  head->set_task(task);
  for (const std::string& name : names) {
    if (task == v1::TASK_REGRESSION) {
      head->add_target_names(name);
    } else {
      head->add_class_names(name);
    }
  }
  AddSeededHead(2 * static_cast<int64_t>(num_features), static_cast<int64_t>(names.size()), rng,
                tensors);
}

void AddSeededHead(int64_t f, int64_t t, Rng& rng, ModelTensors* tensors) {
  FloatMatrix weights = FloatMatrix::Zeros(f, t);
  for (int64_t i = 0; i < f * t; ++i) weights.mutable_data()[i] = static_cast<float>(rng.Normal());
  FloatMatrix bias = FloatMatrix::Zeros(1, t);
  for (int64_t c = 0; c < t; ++c) bias.mutable_data()[c] = static_cast<float>(0.1 * rng.Normal());
  tensors->f32[kHeadWeightsTensor] = std::move(weights);
  tensors->f32[kHeadBiasTensor] = std::move(bias);
}

absl::StatusOr<std::string> SaveToRepository(const std::string& models_root, const Model& model) {
  const fs::path dir = fs::path(models_root) / model.manifest().model_name() /
                       std::to_string(model.manifest().version());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create '", dir.string(), "': ", ec.message()));
  }
  const std::string path = (dir / kBundleFileName).string();
  if (absl::Status s = model.Save(path); !s.ok()) return s;
  return path;
}

absl::StatusOr<std::string> WriteTestModel(const std::string& models_root,
                                           const TestModelSpec& spec) {
  absl::StatusOr<std::shared_ptr<const Model>> model = MakeTestModel(spec);
  if (!model.ok()) return model.status();
  return SaveToRepository(models_root, **model);
}

absl::StatusOr<std::string> WriteCorruptModel(const std::string& models_root,
                                              const std::string& name, int64_t version) {
  const fs::path dir = fs::path(models_root) / name / std::to_string(version);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string path = (dir / kBundleFileName).string();
  std::ofstream out(path, std::ios::binary);
  out << "INVBNDL" << std::string(200, '\x5a');
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  return path;
}

}  // namespace invariant::testing_models
