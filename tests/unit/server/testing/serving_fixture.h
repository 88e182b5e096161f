// serving_fixture.h: the in-process serving stack the handler tests share — a
// models directory with a classifier "clf" and a featurizer "feat" (test
// models, input dimension 16), a registry that has loaded both, a batcher of 2
// threads cutting batches at 4 rows (so 10-row requests are split), and the
// FeatureHandler over them. One directory per test process: ctest runs the
// tests of a suite in parallel processes.
#ifndef INVARIANT_TESTS_UNIT_SERVER_TESTING_SERVING_FIXTURE_H_
#define INVARIANT_TESTS_UNIT_SERVER_TESTING_SERVING_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "server/batching/batcher.h"
#include "server/handlers/feature_handler.h"
#include "server/lifecycle/registry.h"
#include "tests/test_models/test_audio_model.h"
#include "tests/test_models/test_image_model.h"
#include "tests/test_models/test_models.h"

namespace invariant::server {

class ServingFixture : public ::testing::Test {
 protected:
  // `prefix` names the models directory under the test temp dir.
  explicit ServingFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    namespace fs = std::filesystem;
    root_ = (fs::path(::testing::TempDir()) / (prefix_ + "_" + std::to_string(getpid()))).string();
    fs::remove_all(root_);
    testing_models::TestModelSpec classifier;
    classifier.name = "clf";
    ASSERT_TRUE(testing_models::WriteTestModel(root_, classifier).ok());
    testing_models::TestModelSpec featurizer;
    featurizer.name = "feat";
    featurizer.num_classes = 0;
    ASSERT_TRUE(testing_models::WriteTestModel(root_, featurizer).ok());
    RegistryOptions options;
    options.root = root_;
    registry_ = std::make_unique<Registry>(
        options, [](const std::string& path) { return Model::Load(path); }, registry_observers_);
    registry_->Rescan();
    ASSERT_TRUE(registry_->Serving());
    BatcherOptions batcher_options;
    batcher_options.max_batch_rows = 4;  // 10-row requests are split into pieces
    batcher_options.max_concurrent_batches = 2;
    batcher_options.observers = batch_observers_;
    batcher_ = std::make_unique<Batcher>(batcher_options);
    features_ = std::make_unique<FeatureHandler>(registry_.get(), batcher_.get(), 100);
  }
  void TearDown() override {
    if (batcher_ != nullptr) batcher_->Stop();
    std::filesystem::remove_all(root_);
  }

  // Writes the test audio model "sound" (tests/test_models/test_audio_model.h)
  // beside the others and loads it.
  std::shared_ptr<const Model> AddSoundModel() {
    testing_models::TestAudioModelSpec spec;
    EXPECT_TRUE(testing_models::WriteTestAudioModel(root_, spec).ok());
    registry_->Rescan();
    auto handle = registry_->Lookup("sound");
    EXPECT_TRUE(handle.ok()) << handle.status();
    return handle.ok() ? handle->servable : nullptr;
  }

  // Writes the test image model "pictures" (tests/test_models/test_image_model.h)
  // beside the others and loads it.
  std::shared_ptr<const Model> AddImageModel(int64_t max_pixels = 0) {
    testing_models::TestImageModelSpec spec;
    spec.max_pixels = max_pixels;
    EXPECT_TRUE(testing_models::WriteTestImageModel(root_, spec).ok());
    registry_->Rescan();
    auto handle = registry_->Lookup("pictures");
    EXPECT_TRUE(handle.ok()) << handle.status();
    return handle.ok() ? handle->servable : nullptr;
  }

  // n × d seeded standard-normal rows.
  static std::vector<float> RandomRows(int64_t n, int64_t d, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> x(static_cast<size_t>(n * d));
    for (float& v : x) v = static_cast<float>(rng.Normal());
    return x;
  }

  std::string prefix_;
  std::string root_;
  // The batcher's observers (a test sets them before SetUp, e.g. in its
  // constructor, to count the batches and their methods).
  BatcherObservers batch_observers_;
  // The registry's observers, likewise (e.g. to count the lookups).
  Registry::Observers registry_observers_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<FeatureHandler> features_;
};

}  // namespace invariant::server

#endif  // INVARIANT_TESTS_UNIT_SERVER_TESTING_SERVING_FIXTURE_H_
