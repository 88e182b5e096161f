// wav_test_files.h: hand-made WAV files for the core/audio tests, so that
// each test says exactly which header fields and bytes a file has.
#ifndef INVARIANT_TESTS_UNIT_AUDIO_WAV_TEST_FILES_H_
#define INVARIANT_TESTS_UNIT_AUDIO_WAV_TEST_FILES_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace invariant::audio {

inline void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A RIFF/WAVE file: a fmt chunk (format_tag, channels, rate, bits; `fmt_extra`
// appended after the 16 standard bytes) and a data chunk holding `data`,
// whose size field says `declared_data` (default: data.size()).
inline std::string WavBytes(int format_tag, int channels, int rate, int bits,
                            const std::string& data,
                            std::optional<uint32_t> declared_data = std::nullopt,
                            const std::string& fmt_extra = "", int block_align = 0) {
  if (block_align == 0) block_align = channels * bits / 8;
  std::string fmt;
  PutLe(fmt, static_cast<uint16_t>(format_tag), 2);
  PutLe(fmt, static_cast<uint16_t>(channels), 2);
  PutLe(fmt, static_cast<uint32_t>(rate), 4);
  PutLe(fmt, static_cast<uint32_t>(rate) * block_align, 4);
  PutLe(fmt, static_cast<uint16_t>(block_align), 2);
  PutLe(fmt, static_cast<uint16_t>(bits), 2);
  fmt += fmt_extra;
  std::string out = "RIFF";
  PutLe(out, 4 + 8 + fmt.size() + 8 + data.size(), 4);
  out += "WAVEfmt ";
  PutLe(out, fmt.size(), 4);
  out += fmt;
  out += "data";
  PutLe(out, declared_data.value_or(static_cast<uint32_t>(data.size())), 4);
  out += data;
  return out;
}

inline std::string FloatBytes(std::initializer_list<float> values) {
  std::string out;
  for (const float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    PutLe(out, bits, 4);
  }
  return out;
}

}  // namespace invariant::audio

#endif  // INVARIANT_TESTS_UNIT_AUDIO_WAV_TEST_FILES_H_
