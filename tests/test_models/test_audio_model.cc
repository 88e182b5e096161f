#include "tests/test_models/test_audio_model.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/audio/front_end.h"
#include "core/base/random.h"
#include "tests/test_models/test_models.h"

namespace invariant::testing_models {

v1::AudioFrontEnd TestAudioFrontEnd(double max_clip_seconds, bool voice_activity) {
  v1::AudioFrontEnd spec;
  spec.set_sample_rate(8000);
  spec.set_clip_seconds(0.25);
  spec.set_clip_policy(v1::AudioFrontEnd::CLIP_POLICY_CENTRE);
  spec.set_normalisation(v1::AudioFrontEnd::NORMALISATION_PEAK);
  spec.set_frame_length(256);
  spec.set_hop_length(128);
  spec.set_min_frequency(100);
  spec.set_bins_per_octave(4);
  spec.set_frequency_bins(16);
  spec.set_max_clip_seconds(max_clip_seconds);
  if (voice_activity) spec.mutable_voice_activity()->set_enabled(true);
  absl::StatusOr<v1::AudioFrontEnd> completed = audio::AudioFrontEnd::Complete(spec);
  return completed.ok() ? *completed : spec;  // an incomplete spec fails Assemble, naming it
}

absl::StatusOr<std::shared_ptr<const Model>> MakeTestAudioModel(const TestAudioModelSpec& spec) {
  const v1::AudioFrontEnd front_end = TestAudioFrontEnd(spec.max_clip_seconds, spec.voice_activity);
  const int64_t bins = front_end.frequency_bins();
  const int64_t frames = front_end.frames();
  const int64_t d = bins * frames;
  const int s = spec.num_features;
  const double sigma = std::sqrt(static_cast<double>(d));
  Rng rng(spec.seed);

  v1::Manifest manifest = TestManifest(spec.name, spec.version, d, "tests/test_models (audio)",
                                       spec.seed, s, /*num_group_elements=*/1, sigma);
  *manifest.mutable_audio() = front_end;
  v1::EncoderSpec* encoder = manifest.mutable_encoder();
  encoder->add_input_shape(bins);
  encoder->add_input_shape(frames);
  encoder->add_input_shape(1);
  ModelTensors tensors;
  AddIdentityBank(d, s, sigma, rng, &manifest, &tensors);
  if (spec.num_classes > 0) {
    std::vector<std::string> names;
    for (int c = 0; c < spec.num_classes; ++c) {
      names.push_back(c < static_cast<int>(spec.class_names.size())
                          ? spec.class_names[static_cast<size_t>(c)]
                          : absl::StrCat("word_", c));
    }
    AddTestHead(s, v1::TASK_CLASSIFICATION, names, rng, &manifest, &tensors);
  }
  return Model::Assemble(std::move(manifest), std::move(tensors));
}

absl::StatusOr<std::string> WriteTestAudioModel(const std::string& models_root,
                                                const TestAudioModelSpec& spec) {
  absl::StatusOr<std::shared_ptr<const Model>> model = MakeTestAudioModel(spec);
  if (!model.ok()) return model.status();
  return SaveToRepository(models_root, **model);
}

}  // namespace invariant::testing_models
