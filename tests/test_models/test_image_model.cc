#include "tests/test_models/test_image_model.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "tests/test_models/test_models.h"

namespace invariant::testing_models {

v1::ImageFrontEnd TestImageFrontEnd(int64_t max_pixels) {
  v1::ImageFrontEnd spec;
  spec.set_height(8);
  spec.set_width(8);
  spec.set_channels(3);
  spec.set_max_pixels(max_pixels);
  return spec;
}

absl::StatusOr<std::shared_ptr<const Model>> MakeTestImageModel(const TestImageModelSpec& spec) {
  const v1::ImageFrontEnd front_end = TestImageFrontEnd(spec.max_pixels);
  const int64_t d = int64_t{front_end.height()} * front_end.width() * front_end.channels();
  const int s = spec.num_features;
  const double sigma = std::sqrt(static_cast<double>(d)) / 4;
  Rng rng(spec.seed);
  v1::Manifest manifest = TestManifest(spec.name, spec.version, d, "tests/test_models (image)",
                                       spec.seed, s, /*num_group_elements=*/1, sigma);
  *manifest.mutable_image() = front_end;
  manifest.set_input_scaling(v1::INPUT_SCALING_UNIT_BYTE);
  v1::EncoderSpec* encoder = manifest.mutable_encoder();
  for (int64_t side : {front_end.height(), front_end.width(), front_end.channels()}) {
    encoder->add_input_shape(side);
  }
  ModelTensors tensors;
  AddIdentityBank(d, s, sigma, rng, &manifest, &tensors);
  if (spec.num_classes > 0) {
    std::vector<std::string> names;
    for (int c = 0; c < spec.num_classes; ++c) names.push_back(absl::StrCat("shape_", c));
    AddTestHead(s, v1::TASK_CLASSIFICATION, names, rng, &manifest, &tensors);
  }
  return Model::Assemble(std::move(manifest), std::move(tensors));
}

absl::StatusOr<std::string> WriteTestImageModel(const std::string& models_root,
                                                const TestImageModelSpec& spec) {
  absl::StatusOr<std::shared_ptr<const Model>> model = MakeTestImageModel(spec);
  if (!model.ok()) return model.status();
  return SaveToRepository(models_root, **model);
}

}  // namespace invariant::testing_models
