// test_models.h: THE one place tests and benchmarks get served models from.
//
// Builds small, seeded random-Fourier models (cyclic-shift group, bank rows
// g_k⁻¹·ω_j) with Model::Assemble and writes them as bundles under a models
// root with Model::Save. Swap this for invariant-train output when the
// training job can be driven from tests.
#ifndef INVARIANT_TESTS_TEST_MODELS_TEST_MODELS_H_
#define INVARIANT_TESTS_TEST_MODELS_TEST_MODELS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/random.h"
#include "core/model/model.h"

namespace invariant::testing_models {

struct TestModelSpec {
  std::string name = "rf";
  int64_t version = 1;
  int64_t input_dim = 16;
  int num_features = 8;        // s: features = 2s
  int num_group_elements = 4;  // r: shifts 0..r−1
  int num_classes = 3;         // 0 = featurize-only (no head)
  bool regression = false;     // head is a regressor with num_classes targets
  uint64_t seed = 1;
  // Stored as the manifest's input_columns (the training data's column
  // names) when not empty; must then hold input_dim names.
  std::vector<std::string> input_columns;
};

// An in-memory model for `spec`.
absl::StatusOr<std::shared_ptr<const Model>> MakeTestModel(const TestModelSpec& spec);

// Writes `spec`'s model to ROOT/<name>/<version>/model.bundle and returns the
// bundle path.
absl::StatusOr<std::string> WriteTestModel(const std::string& models_root,
                                           const TestModelSpec& spec);

// Seeded head tensors, drawn from `rng` in this order: "head/weights" f × t
// standard normal, then "head/bias" 1 × t normal with standard deviation 0.1.
void AddSeededHead(int64_t f, int64_t t, Rng& rng, ModelTensors* tensors);

// What every test model's manifest shares: format 1, `name`, `version`,
// `input_dim`, `created_by`, and a random-Fourier encoder seeded with `seed`
// (`num_features` s, `num_group_elements` r, bandwidth `sigma`); the caller
// adds the input shape and the group.
v1::Manifest TestManifest(const std::string& name, int64_t version, int64_t input_dim,
                          const std::string& created_by, uint64_t seed, int num_features,
                          int num_group_elements, double sigma);

// An identity group over the d inputs (placement TEMPLATES) and the
// tensor "encoder/bank": s × d normal draws from `rng` divided by `sigma`,
// in row-major order: the random-Fourier encoder of the test models of
// sound and of image files.
void AddIdentityBank(int64_t d, int s, double sigma, Rng& rng, v1::Manifest* manifest,
                     ModelTensors* tensors);

// A seeded linear head over the 2s features of a random-Fourier encoder with
// `num_features` s: λ 1e-3, `task`, one name an output (class names for
// classification, target names for regression), its tensors from
// AddSeededHead(2s, names.size(), rng).
void AddTestHead(int num_features, v1::Task task, const std::vector<std::string>& names, Rng& rng,
                 v1::Manifest* manifest, ModelTensors* tensors);

// Saves `model` to ROOT/<manifest name>/<manifest version>/model.bundle and
// returns the bundle path.
absl::StatusOr<std::string> SaveToRepository(const std::string& models_root, const Model& model);

// Writes a file that is not a valid bundle to ROOT/<name>/<version>/model.bundle.
absl::StatusOr<std::string> WriteCorruptModel(const std::string& models_root,
                                              const std::string& name, int64_t version);

}  // namespace invariant::testing_models

#endif  // INVARIANT_TESTS_TEST_MODELS_TEST_MODELS_H_
