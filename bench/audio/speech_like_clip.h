// speech_like_clip.h: the seeded speech-like clips of the audio benchmarks
// (audio_bench.cc, fft_bench.cc).
//
// Contract: SpeechLikeClip(rate, seed) is one second at `rate` Hz: 0.2 s of
// faint noise, 0.6 s voiced (f0 gliding between 100 and 220 Hz, harmonics
// weighted by two formants), 0.2 s of noise; the same samples for the same
// arguments. Errors: none. Thread-safety: a pure function.
#ifndef INVARIANT_BENCH_AUDIO_SPEECH_LIKE_CLIP_H_
#define INVARIANT_BENCH_AUDIO_SPEECH_LIKE_CLIP_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/random.h"

namespace invariant::bench_audio {

inline std::vector<float> SpeechLikeClip(int rate, uint64_t seed) {
  constexpr double kPi = 3.14159265358979323846;
  Rng rng(seed);
  const double f0_start = 100 + 80 * rng.Uniform();
  const double f0_end = f0_start * (0.8 + 0.4 * rng.Uniform());
  const double f1 = 300 + 500 * rng.Uniform(), f2 = 900 + 1500 * rng.Uniform();
  std::vector<float> x(static_cast<size_t>(rate));
  double phase = 0;
  for (int i = 0; i < rate; ++i) {
    const double t = static_cast<double>(i) / rate;
    double v = 0.003 * rng.Normal();
    if (t >= 0.2 && t < 0.8) {
      const double u = (t - 0.2) / 0.6;
      const double f0 = f0_start + (f0_end - f0_start) * u;
      phase += 2 * kPi * f0 / rate;
      double voiced = 0;
      for (int h = 1; h * f0 < 0.45 * rate && h <= 30; ++h) {
        const double f = h * f0;
        const double gain = std::exp(-std::pow((f - f1) / 250, 2)) +
                            0.5 * std::exp(-std::pow((f - f2) / 400, 2)) + 0.03;
        voiced += gain * std::sin(h * phase);
      }
      v += 0.3 * std::sqrt(std::sin(kPi * u)) * voiced;
    }
    x[static_cast<size_t>(i)] = static_cast<float>(v);
  }
  return x;
}

}  // namespace invariant::bench_audio

#endif  // INVARIANT_BENCH_AUDIO_SPEECH_LIKE_CLIP_H_
