// test_audio_model.h: a small seeded model of sound for tests (test_models.h's
// counterpart for clips).
//
// The front end: 8 kHz, 0.25 s clips (centred), 256-sample frames every 128
// samples (14 frames), 16 log-frequency bins from 100 Hz at 4 per octave,
// max_clip_seconds 2 unless the spec says otherwise; completed by
// audio::AudioFrontEnd::Complete. The encoder: random Fourier features over
// the 16 × 14 = 224 values, identity group (one element), input_shape
// [16, 14, 1]; a seeded linear classifier head over `num_classes` classes
// (0 = featurize-only), named word_0, word_1, … unless class_names is given.
#ifndef INVARIANT_TESTS_TEST_MODELS_TEST_AUDIO_MODEL_H_
#define INVARIANT_TESTS_TEST_MODELS_TEST_AUDIO_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/model/model.h"

namespace invariant::testing_models {

struct TestAudioModelSpec {
  std::string name = "sound";
  int64_t version = 1;
  int num_features = 8;  // s: features = 2s
  int num_classes = 3;   // 0 = featurize-only
  uint64_t seed = 7;
  std::vector<std::string> class_names;  // empty: word_0 … word_{num_classes−1}
  double max_clip_seconds = 2;
  bool voice_activity = false;  // the front end's voice_activity, its defaults
};

// The completed front end of the test audio models.
v1::AudioFrontEnd TestAudioFrontEnd(double max_clip_seconds = 2, bool voice_activity = false);

absl::StatusOr<std::shared_ptr<const Model>> MakeTestAudioModel(const TestAudioModelSpec& spec);

// Writes the model to ROOT/<name>/<version>/model.bundle; returns the path.
absl::StatusOr<std::string> WriteTestAudioModel(const std::string& models_root,
                                                const TestAudioModelSpec& spec);

}  // namespace invariant::testing_models

#endif  // INVARIANT_TESTS_TEST_MODELS_TEST_AUDIO_MODEL_H_
