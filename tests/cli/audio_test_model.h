// audio_test_model.h: the model of sound of the client tests
// (tests/cli/audio_cli_test.cc, tests/python via python_test_helper.cc), and
// 16-bit WAV files written by hand (the tests need no audio library).
//
// The model is tests/test_models/test_audio_model.h's (8 kHz, 0.25 s clips,
// 16 bins × 14 frames, random Fourier features over them) with 16 features,
// the classes "yes", "no", "maybe" and a 10 s clip limit.
#ifndef INVARIANT_TESTS_CLI_AUDIO_TEST_MODEL_H_
#define INVARIANT_TESTS_CLI_AUDIO_TEST_MODEL_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/random.h"
#include "tests/test_models/test_audio_model.h"

namespace invariant::testing_models {

inline constexpr int kAudioSampleRate = 8000;  // the test model's rate

// Writes the audio model `name` (3 classes "yes", "no", "maybe") version 1
// under `models_root`, with the front end's voice activity when
// `voice_activity`; returns the bundle path.
inline absl::StatusOr<std::string> WriteAudioTestModel(const std::string& models_root,
                                                       const std::string& name, uint64_t seed,
                                                       bool voice_activity = false) {
  TestAudioModelSpec spec;
  spec.voice_activity = voice_activity;
  spec.name = name;
  spec.num_features = 16;
  spec.num_classes = 3;
  spec.seed = seed;
  spec.class_names = {"yes", "no", "maybe"};
  spec.max_clip_seconds = 10;
  return WriteTestAudioModel(models_root, spec);
}

// A seeded test sound: a chirp from `f0` Hz plus a little noise, 16-bit.
inline std::vector<int16_t> TestTone(int64_t samples, int sample_rate, double f0, uint64_t seed) {
  Rng rng(seed);
  std::vector<int16_t> pcm(static_cast<size_t>(samples));
  for (int64_t i = 0; i < samples; ++i) {
    const double t = static_cast<double>(i) / sample_rate;
    const double x =
        0.6 * std::sin(2 * 3.14159265358979323846 * f0 * t * (1 + t)) + 0.05 * rng.Normal();
    pcm[static_cast<size_t>(i)] =
        static_cast<int16_t>(std::lround(std::fmax(-1.0, std::fmin(1.0, x)) * 32767));
  }
  return pcm;
}

// A mono 16-bit PCM WAV file of `pcm` (the 44-byte canonical header).
inline std::string Wav16(const std::vector<int16_t>& pcm, int sample_rate) {
  std::string out;
  auto u32 = [&out](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  auto u16 = [&out](uint32_t v) {
    for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  const uint32_t data_bytes = static_cast<uint32_t>(pcm.size() * 2);
  out += "RIFF";
  u32(36 + data_bytes);
  out += "WAVEfmt ";
  u32(16);
  u16(1);  // PCM
  u16(1);  // mono
  u32(static_cast<uint32_t>(sample_rate));
  u32(static_cast<uint32_t>(sample_rate) * 2);  // bytes per second
  u16(2);                                       // block align
  u16(16);                                      // bits per sample
  out += "data";
  u32(data_bytes);
  for (int16_t x : pcm) u16(static_cast<uint16_t>(x));
  return out;
}

}  // namespace invariant::testing_models

#endif  // INVARIANT_TESTS_CLI_AUDIO_TEST_MODEL_H_
