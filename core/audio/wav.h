// wav.h: sound clips from WAV files, decoded by libsndfile.
//
// A clip is mono float samples at its own rate: PCM 8/16/24/32-bit samples
// are scaled to [−1, 1) (x / 2^(bits−1)), float WAVs are taken as they are,
// and several channels are averaged. Decoding never trusts the header: the
// frame count is checked against `max_samples` before any sample is read, so
// a header that claims hours of audio allocates nothing.
//
// Errors are INVALID_ARGUMENT and start with `what` (a file path, or the
// request field such as "inputs.clips[3].wav"): not a WAV file (no RIFF/RIFX
// or RF64 header with WAVE), a truncated or malformed header, a data chunk
// longer than the file ("truncated: the header says N samples, the file
// holds M"; a data size of 0xFFFFFFFF, written by streaming tools, means
// "to the end of the file"), an unsupported
// sample format (e.g. A-law is accepted by libsndfile, but ADPCM and other
// compressed codecs are refused), zero samples, more than max_samples samples
// per channel, a sample rate outside [kMinSampleRate, kMaxSampleRate], and a
// NaN or infinite sample. A file that cannot be opened is NOT_FOUND.
//
// Thread-safety: free functions with no shared state.
#ifndef INVARIANT_CORE_AUDIO_WAV_H_
#define INVARIANT_CORE_AUDIO_WAV_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace invariant::audio {

// The rates a clip may have (Hz), WAV or raw samples alike.
inline constexpr int kMinSampleRate = 1000;
inline constexpr int kMaxSampleRate = 384000;

struct Clip {
  int sample_rate = 0;         // Hz
  std::vector<float> samples;  // mono
};

// What a WAV file's header says, every check of DecodeWav but the length
// and the samples themselves done: its rate and its samples per channel
// (what the header claims, which DecodeWav then holds the file to). Reads
// the header only, so a server can refuse or price a clip before decoding it.
struct WavHeader {
  int sample_rate = 0;
  int64_t samples = 0;
};
absl::StatusOr<WavHeader> ReadWavHeader(std::string_view bytes, const std::string& what);

// Decodes a whole WAV file held in memory.
absl::StatusOr<Clip> DecodeWav(std::string_view bytes, int64_t max_samples,
                               const std::string& what);

// Reads and decodes the WAV file at `path` (errors start with the path).
absl::StatusOr<Clip> ReadWavFile(const std::string& path, int64_t max_samples);

// Encodes `clip` as a 16-bit PCM mono WAV file (samples clipped to [−1, 1]);
// for tests, tools and clients that send WAV bytes.
std::string EncodeWav16(const Clip& clip);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_WAV_H_
