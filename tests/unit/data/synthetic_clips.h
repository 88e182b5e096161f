// synthetic_clips.h: small spoken-word-like WAV files for the audio source's
// and the trainer's tests, written at test time.
//
// A "word" of class c is a 0.15 s tone with a Hann envelope whose pitch
// glides (class 0 up, class 1 down, class 2 flat, ...) from a base pitch of
// 300 Hz · 1.5^c; a "speaker" shifts every pitch by a few semitones, and a
// take moves the word within the clip and adds seeded noise. Clips are mono
// 16-bit PCM (audio::EncodeWav16).
#ifndef INVARIANT_TESTS_UNIT_DATA_SYNTHETIC_CLIPS_H_
#define INVARIANT_TESTS_UNIT_DATA_SYNTHETIC_CLIPS_H_

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/audio/wav.h"
#include "core/base/random.h"

namespace invariant::testing {

// A front end for the test clips: 0.25 s at 8 kHz, 24 log bins from 200 Hz
// (6 per octave) × 30 frames = 720 values per row.
inline constexpr char kTestFrontEnd[] = R"pb(
  sample_rate: 8000
  clip_seconds: 0.25
  clip_policy: CLIP_POLICY_CENTRE
  trim_silence: true
  normalisation: NORMALISATION_PEAK
  frame_length: 128
  hop_length: 64
  min_frequency: 200
  bins_per_octave: 6
  frequency_bins: 24
  max_clip_seconds: 2
)pb";
inline constexpr int kTestBins = 24;
inline constexpr int kTestFrames = 30;  // 1 + (2000 − 128) / 64

inline std::vector<float> SyntheticWord(int label, double speaker_semitones, int take,
                                        int sample_rate) {
  const double seconds = 0.3, word = 0.15;
  const int n = static_cast<int>(seconds * sample_rate);
  std::vector<float> x(static_cast<size_t>(n), 0.0f);
  Rng rng(static_cast<uint64_t>(1000 * label + 17 * take) + 7);
  const double start = 0.02 + 0.1 * rng.Uniform();
  const double base = 300.0 * std::pow(1.5, label) * std::pow(2.0, speaker_semitones / 12.0);
  const double glide = label % 3 == 0 ? 0.3 : (label % 3 == 1 ? -0.3 : 0.0);
  double phase = 0;
  for (int i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / sample_rate - start;
    double v = 0.002 * (2 * rng.Uniform() - 1);
    if (t >= 0 && t < word) {
      const double f = base * (1 + glide * t / word);
      phase += 2 * M_PI * f / sample_rate;
      const double envelope = 0.5 - 0.5 * std::cos(2 * M_PI * t / word);
      v += 0.6 * envelope * std::sin(phase);
    }
    x[static_cast<size_t>(i)] = static_cast<float>(v);
  }
  return x;
}

// Upward zero crossings per second of x over [begin, end), interpolated
// linearly between samples: the frequency of a steady tone.
inline double UpwardCrossingRate(const std::vector<float>& x, size_t begin, size_t end, int rate) {
  double first = -1, last = -1;
  int count = 0;
  for (size_t i = begin + 1; i < end; ++i) {
    if (x[i - 1] < 0 && x[i] >= 0) {
      const double t = static_cast<double>(i - 1) + x[i - 1] / (x[i - 1] - x[i]);
      if (first < 0) first = t;
      last = t;
      ++count;
    }
  }
  return (count - 1) * rate / (last - first);
}

inline void WriteClip(const std::string& path, const std::vector<float>& samples, int sample_rate) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  audio::Clip clip;
  clip.sample_rate = sample_rate;
  clip.samples = samples;
  std::ofstream(path, std::ios::binary) << audio::EncodeWav16(clip);
}

// Writes DIR/<speaker>/<label>_<speaker>_<take>.wav for every label in
// [0, labels), speaker of `speakers` (speaker s shifted by 2·s − 2
// semitones) and take in [0, takes); returns the paths written, sorted.
inline std::vector<std::string> WriteSpokenDigits(const std::string& dir, int labels,
                                                  const std::vector<std::string>& speakers,
                                                  int takes, int sample_rate = 8000) {
  std::vector<std::string> paths;
  for (size_t s = 0; s < speakers.size(); ++s) {
    for (int label = 0; label < labels; ++label) {
      for (int take = 0; take < takes; ++take) {
        const std::string path = dir + "/" + speakers[s] + "/" + std::to_string(label) + "_" +
                                 speakers[s] + "_" + std::to_string(take) + ".wav";
        WriteClip(path, SyntheticWord(label, 2.0 * static_cast<double>(s) - 2, take, sample_rate),
                  sample_rate);
        paths.push_back(path);
      }
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace invariant::testing

#endif  // INVARIANT_TESTS_UNIT_DATA_SYNTHETIC_CLIPS_H_
