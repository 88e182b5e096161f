// audio_test_model.h: a small seeded model of sound for the client tests
// (tests/cli/audio_cli_test.cc, tests/python via python_test_helper.cc), and
// 16-bit WAV files written by hand (the tests need no audio library).
//
// The model: the audio front end kAudioSampleRate Hz, 0.5 s clips → 24
// log-frequency bins × 30 frames = 720 values; a random-Fourier encoder over
// those 720 values with the identity group (one bank row per template) and a
// 3-class head (tools/test_models/test_models.h builds the encoder and head).
// The front end is written completed, as AudioFrontEnd::Complete would
// (every default filled in, `frames` derived), so building it needs no
// core/audio; the server checks it when it loads the bundle.
#ifndef INVARIANT_TESTS_CLI_AUDIO_TEST_MODEL_H_
#define INVARIANT_TESTS_CLI_AUDIO_TEST_MODEL_H_

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/model/model.h"
#include "tools/test_models/test_models.h"

namespace invariant::testing_models {

inline constexpr int kAudioSampleRate = 8000;
inline constexpr int kAudioBins = 24;
inline constexpr int kAudioFrames = 30;  // 1 + (4000 − 256) / 128

inline v1::AudioFrontEnd AudioTestFrontEnd() {
  v1::AudioFrontEnd a;
  a.set_sample_rate(kAudioSampleRate);
  a.set_clip_seconds(0.5);
  a.set_clip_policy(v1::AudioFrontEnd::CLIP_POLICY_CENTRE);
  a.set_trim_silence(false);
  a.set_trim_db(40);
  a.set_normalisation(v1::AudioFrontEnd::NORMALISATION_PEAK);
  a.set_frame_length(256);
  a.set_hop_length(128);
  a.set_fft_length(256);
  a.set_min_frequency(100);
  a.set_bins_per_octave(6);
  a.set_frequency_bins(kAudioBins);  // highest centre 100 · 2^(23/6) ≈ 1426 Hz < 4000
  a.set_compression_gain(1);
  a.set_subtract_frequency_mean(false);
  a.set_max_clip_seconds(10);
  a.set_frames(kAudioFrames);
  return a;
}

// Writes the audio model `name` (3 classes "yes", "no", "maybe") version 1
// under `models_root`; returns the bundle path.
inline absl::StatusOr<std::string> WriteAudioTestModel(const std::string& models_root,
                                                       const std::string& name, uint64_t seed) {
  TestModelSpec spec;
  spec.name = name;
  spec.input_dim = int64_t{kAudioBins} * kAudioFrames;
  spec.num_features = 16;
  spec.num_group_elements = 1;  // the identity group: one bank row per template
  spec.num_classes = 3;
  spec.seed = seed;
  absl::StatusOr<std::shared_ptr<const Model>> base = MakeTestModel(spec);
  if (!base.ok()) return base.status();
  v1::Manifest manifest = (*base)->manifest();
  v1::EncoderSpec* encoder = manifest.mutable_encoder();
  encoder->clear_input_shape();
  for (int64_t d : {int64_t{kAudioBins}, int64_t{kAudioFrames}, int64_t{1}}) {
    encoder->add_input_shape(d);
  }
  encoder->mutable_group()->clear_cyclic_shift();
  encoder->mutable_group()->mutable_identity()->set_dim(static_cast<int32_t>(spec.input_dim));
  manifest.mutable_head()->clear_class_names();
  for (const char* c : {"yes", "no", "maybe"}) manifest.mutable_head()->add_class_names(c);
  *manifest.mutable_audio() = AudioTestFrontEnd();
  absl::StatusOr<std::shared_ptr<const Model>> model =
      Model::Assemble(std::move(manifest), (*base)->tensors());
  if (!model.ok()) return model.status();
  const std::filesystem::path dir = std::filesystem::path(models_root) / name / "1";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / kBundleFileName).string();
  if (absl::Status s = (*model)->Save(path); !s.ok()) return s;
  return path;
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
