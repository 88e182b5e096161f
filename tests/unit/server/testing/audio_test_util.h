// audio_test_util.h: clips for the audio serving tests — seeded 16-bit
// samples, and WAV files written byte by byte (independent of core/audio's
// encoder, so the decoder is checked against the format, not itself).
#ifndef INVARIANT_TESTS_UNIT_SERVER_TESTING_AUDIO_TEST_UTIL_H_
#define INVARIANT_TESTS_UNIT_SERVER_TESTING_AUDIO_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "invariant/v1/feature_service.pb.h"

namespace invariant::server::audio_test {

// n seeded 16-bit samples: a tone whose pitch depends on the seed, plus noise.
inline std::vector<int16_t> Pcm16(int64_t n, uint64_t seed) {
  Rng rng(seed);
  const double freq = 300.0 + 50.0 * static_cast<double>(seed % 10);
  std::vector<int16_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double v =
        9000.0 * std::sin(2 * 3.14159265358979 * freq * static_cast<double>(i) / 8000) +
        1500.0 * rng.Normal();
    out[static_cast<size_t>(i)] =
        static_cast<int16_t>(std::lround(std::fmax(-32768, std::fmin(32767, v))));
  }
  return out;
}

inline std::vector<float> ToFloat(const std::vector<int16_t>& pcm) {
  std::vector<float> out(pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) out[i] = static_cast<float>(pcm[i]) / 32768.0f;
  return out;
}

inline std::string Bytes(const void* data, size_t size) {
  return std::string(static_cast<const char*>(data), size);
}
template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return Bytes(v.data(), v.size() * sizeof(T));
}

inline void Put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
inline void Put16(std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }

// A RIFF/WAVE file: `format` 1 (PCM) or 3 (IEEE float), `channels`
// interleaved, `bits` per sample, `data` the sample bytes as they are.
inline std::string Wav(int format, int channels, int rate, int bits, const std::string& data) {
  std::string s = "RIFF";
  Put32(s, static_cast<uint32_t>(36 + data.size()));
  s += "WAVEfmt ";
  Put32(s, 16);
  Put16(s, static_cast<uint16_t>(format));
  Put16(s, static_cast<uint16_t>(channels));
  Put32(s, static_cast<uint32_t>(rate));
  Put32(s, static_cast<uint32_t>(rate * channels * bits / 8));
  Put16(s, static_cast<uint16_t>(channels * bits / 8));
  Put16(s, static_cast<uint16_t>(bits));
  s += "data";
  Put32(s, static_cast<uint32_t>(data.size()));
  s += data;
  return s;
}

// A mono 16-bit PCM WAV of `pcm` at `rate`.
inline std::string Wav16(const std::vector<int16_t>& pcm, int rate) {
  return Wav(1, 1, rate, 16, Bytes(pcm));
}

// A Featurize request to the test model "sound" of `n` int16 clips of
// `samples` seeded samples each (clip i seeded i + 1).
inline v1::FeaturizeRequest ClipsRequest(int n, int64_t samples) {
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("sound");
  for (int i = 0; i < n; ++i) {
    request.mutable_inputs()->add_clips()->set_int16_le(Bytes(Pcm16(samples, i + 1)));
  }
  return request;
}

}  // namespace invariant::server::audio_test

#endif  // INVARIANT_TESTS_UNIT_SERVER_TESTING_AUDIO_TEST_UTIL_H_
