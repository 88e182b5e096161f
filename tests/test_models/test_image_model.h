// test_image_model.h: a small seeded model of image files for tests
// (test_audio_model.h's counterpart for encoded images).
//
// The front end: 8 × 8 RGB, FIT_CROP, bilinear, background 0, max_pixels
// as the spec says (0: the default). The encoder: random Fourier features
// over the 192 values, identity group, input_shape [8, 8, 3]; a seeded
// linear classifier head over `num_classes` classes (0 = featurize-only),
// named shape_0, shape_1, ….
#ifndef INVARIANT_TESTS_TEST_MODELS_TEST_IMAGE_MODEL_H_
#define INVARIANT_TESTS_TEST_MODELS_TEST_IMAGE_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/model/model.h"

namespace invariant::testing_models {

struct TestImageModelSpec {
  std::string name = "pictures";
  int64_t version = 1;
  int num_features = 8;  // s: features = 2s
  int num_classes = 3;   // 0 = featurize-only
  uint64_t seed = 11;
  int64_t max_pixels = 0;
};

v1::ImageFrontEnd TestImageFrontEnd(int64_t max_pixels = 0);

absl::StatusOr<std::shared_ptr<const Model>> MakeTestImageModel(const TestImageModelSpec& spec);

// Writes the model to ROOT/<name>/<version>/model.bundle; returns the path.
absl::StatusOr<std::string> WriteTestImageModel(const std::string& models_root,
                                                const TestImageModelSpec& spec);

}  // namespace invariant::testing_models

#endif  // INVARIANT_TESTS_TEST_MODELS_TEST_IMAGE_MODEL_H_
