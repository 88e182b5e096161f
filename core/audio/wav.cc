#include "core/audio/wav.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/file.h"

namespace invariant::audio {
namespace {

// libsndfile's virtual I/O over a byte string (read only).
struct MemoryFile {
  std::string_view bytes;
  sf_count_t position = 0;
};

sf_count_t MemoryLength(void* user) {
  return static_cast<sf_count_t>(static_cast<MemoryFile*>(user)->bytes.size());
}

sf_count_t MemorySeek(sf_count_t offset, int whence, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t size = static_cast<sf_count_t>(file->bytes.size());
  sf_count_t base = 0;
  if (whence == SEEK_CUR) base = file->position;
  if (whence == SEEK_END) base = size;
  const sf_count_t target = base + offset;
  if (target < 0) return -1;
  file->position = std::min(target, size);
  return file->position;
}

sf_count_t MemoryRead(void* out, sf_count_t count, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t size = static_cast<sf_count_t>(file->bytes.size());
  const sf_count_t n = std::max<sf_count_t>(0, std::min(count, size - file->position));
  if (n > 0) std::memcpy(out, file->bytes.data() + file->position, static_cast<size_t>(n));
  file->position += n;
  return n;
}

sf_count_t MemoryWrite(const void*, sf_count_t, void*) { return 0; }

sf_count_t MemoryTell(void* user) { return static_cast<MemoryFile*>(user)->position; }

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};

uint64_t Little(const unsigned char* b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

uint64_t Big(const unsigned char* b, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | b[i];
  return v;
}

// The RIFF forms DecodeWav accepts: "RIFF" (little-endian), "RIFX"
// (big-endian), "RF64" (sizes in a ds64 chunk), each followed by "WAVE".
enum class Form { kNone, kRiff, kRifx, kRf64 };

Form FormOf(std::string_view bytes) {
  if (bytes.size() < 12 || bytes.substr(8, 4) != "WAVE") return Form::kNone;
  const std::string_view id = bytes.substr(0, 4);
  if (id == "RIFF") return Form::kRiff;
  if (id == "RIFX") return Form::kRifx;
  if (id == "RF64") return Form::kRf64;
  return Form::kNone;
}

// True when `bytes` (shorter than 12) could be the start of a WAV header.
bool IsHeaderPrefix(std::string_view bytes) {
  if (bytes.empty()) return false;
  for (const std::string_view id : {"RIFF", "RIFX", "RF64"}) {
    const size_t n = std::min<size_t>(4, bytes.size());
    if (bytes.substr(0, n) != id.substr(0, n)) continue;
    if (bytes.size() <= 8) return true;
    const std::string_view wave = "WAVE";
    return bytes.substr(8) == wave.substr(0, bytes.size() - 8);
  }
  return false;
}

// The byte length the header declares for the "data" chunk, when the chunk
// list can be walked to it (libsndfile shortens a data chunk that runs past
// the end of the file without saying so; this is how DecodeWav notices).
std::optional<uint64_t> DeclaredDataBytes(std::string_view bytes, Form form) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto read32 = [&](size_t at) {
    return form == Form::kRifx ? Big(b + at, 4) : Little(b + at, 4);
  };
  std::optional<uint64_t> ds64_data;
  size_t at = 12;
  while (at + 8 <= bytes.size()) {
    const std::string_view id = bytes.substr(at, 4);
    const uint64_t size = read32(at + 4);
    if (id == "ds64" && at + 8 + 16 <= bytes.size()) ds64_data = Little(b + at + 8 + 8, 8);
    if (id == "data") {
      if (form == Form::kRf64 && size == 0xFFFFFFFFu) return ds64_data;
      // 0xFFFFFFFF: a stream written before its length was known (libsndfile
      // reads to the end of the file).
      if (size == 0xFFFFFFFFu) return std::nullopt;
      return size;
    }
    if (size > bytes.size()) return std::nullopt;
    at += 8 + size + (size & 1);
  }
  return std::nullopt;
}

// Bytes per sample of one channel, 0 for a format DecodeWav refuses.
int SampleBytes(int subtype) {
  switch (subtype) {
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
      return 1;
    case SF_FORMAT_PCM_16:
      return 2;
    case SF_FORMAT_PCM_24:
      return 3;
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
      return 4;
    case SF_FORMAT_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

absl::Status InvalidWav(const std::string& what, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", message));
}

void PutLittle(std::string& out, uint32_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

namespace {

// A WAV file opened for reading, its header checked.
struct OpenedWav {
  std::unique_ptr<SNDFILE, SndfileCloser> file;
  SF_INFO info;
  WavHeader header;
};

absl::StatusOr<OpenedWav> OpenWav(std::string_view bytes, MemoryFile* memory,
                                  const std::string& what) {
  const Form form = FormOf(bytes);
  if (form == Form::kNone) {
    if (bytes.size() < 12 && IsHeaderPrefix(bytes)) {
      return InvalidWav(what, absl::StrCat("truncated WAV header (", bytes.size(), " bytes)"));
    }
    return InvalidWav(what, "not a WAV file (no RIFF, RIFX or RF64 header with WAVE)");
  }
  *memory = MemoryFile{bytes, 0};
  SF_VIRTUAL_IO io{MemoryLength, MemorySeek, MemoryRead, MemoryWrite, MemoryTell};
  OpenedWav wav;
  SF_INFO& info = wav.info;
  std::memset(&info, 0, sizeof info);
  wav.file.reset(sf_open_virtual(&io, SFM_READ, &info, memory));
  if (wav.file == nullptr) {
    return InvalidWav(
        what, absl::StrCat("truncated or malformed WAV header (", sf_strerror(nullptr), ")"));
  }
  const int major = info.format & SF_FORMAT_TYPEMASK;
  const int subtype = info.format & SF_FORMAT_SUBMASK;
  if (major != SF_FORMAT_WAV && major != SF_FORMAT_WAVEX && major != SF_FORMAT_RF64) {
    return InvalidWav(what, "not a WAV file");
  }
  const int sample_bytes = SampleBytes(subtype);
  if (sample_bytes == 0) {
    return InvalidWav(
        what, absl::StrCat("unsupported sample format (libsndfile subtype 0x", absl::Hex(subtype),
                           "); PCM 8/16/24/32-bit, float, double, A-law and "
                           "µ-law are accepted"));
  }
  if (info.channels < 1) return InvalidWav(what, "no channels");
  if (info.samplerate < kMinSampleRate || info.samplerate > kMaxSampleRate) {
    return InvalidWav(what, absl::StrCat("sample rate ", info.samplerate, " Hz outside [",
                                         kMinSampleRate, ", ", kMaxSampleRate, "]"));
  }
  // What the header claims (before libsndfile shortens it to the file).
  int64_t header_frames = info.frames;
  const std::optional<uint64_t> declared = DeclaredDataBytes(bytes, form);
  const uint64_t frame_bytes = uint64_t{static_cast<uint32_t>(info.channels)} * sample_bytes;
  if (declared.has_value()) {
    header_frames = static_cast<int64_t>(std::min<uint64_t>(*declared / frame_bytes, INT64_MAX));
  }
  header_frames = std::max<int64_t>(header_frames, info.frames);
  if (header_frames == 0) return InvalidWav(what, "zero samples");
  wav.header.sample_rate = info.samplerate;
  wav.header.samples = header_frames;
  return wav;
}

}  // namespace

absl::StatusOr<WavHeader> ReadWavHeader(std::string_view bytes, const std::string& what) {
  MemoryFile memory{bytes, 0};
  absl::StatusOr<OpenedWav> wav = OpenWav(bytes, &memory, what);
  if (!wav.ok()) return wav.status();
  return wav->header;
}

absl::StatusOr<Clip> DecodeWav(std::string_view bytes, int64_t max_samples,
                               const std::string& what) {
  MemoryFile memory{bytes, 0};
  absl::StatusOr<OpenedWav> wav = OpenWav(bytes, &memory, what);
  if (!wav.ok()) return wav.status();
  std::unique_ptr<SNDFILE, SndfileCloser> file = std::move(wav->file);
  const SF_INFO& info = wav->info;
  const int64_t header_frames = wav->header.samples;
  if (header_frames > max_samples) {
    return InvalidWav(what, absl::StrCat("too many samples: the header says ", header_frames,
                                         " per channel, at most ", max_samples, " are accepted"));
  }
  if (header_frames != info.frames) {
    return InvalidWav(what, absl::StrCat("truncated: the header says ", header_frames,
                                         " samples, the file holds ", info.frames));
  }

  Clip clip;
  clip.sample_rate = info.samplerate;
  clip.samples.resize(static_cast<size_t>(info.frames));
  // PCM is read normalised (x / 2^(bits−1), libsndfile's default); float and
  // double samples as they are. Read in blocks so that many channels never
  // need a buffer of frames × channels.
  sf_command(file.get(), SFC_SET_NORM_FLOAT, nullptr, SF_TRUE);
  const int channels = info.channels;
  const sf_count_t block = std::max<sf_count_t>(1, 16384 / channels);
  std::vector<float> buffer(static_cast<size_t>(block * channels));
  int64_t done = 0;
  while (done < info.frames) {
    const sf_count_t want = std::min<sf_count_t>(block, info.frames - done);
    const sf_count_t got = sf_readf_float(file.get(), buffer.data(), want);
    if (got <= 0) break;
    for (sf_count_t i = 0; i < got; ++i) {
      const float* frame = buffer.data() + i * channels;
      double sum = 0.0;
      bool finite = true;
      for (int c = 0; c < channels; ++c) {
        finite = finite && std::isfinite(frame[c]);
        sum += frame[c];
      }
      if (!finite) {
        return InvalidWav(what, absl::StrCat("sample ", done + i, " is NaN or infinite"));
      }
      clip.samples[static_cast<size_t>(done + i)] =
          channels == 1 ? frame[0] : static_cast<float>(sum / channels);
    }
    done += got;
  }
  if (done != info.frames) {
    return InvalidWav(what, absl::StrCat("truncated: the header says ", info.frames,
                                         " samples, the file holds ", done));
  }
  return clip;
}

absl::StatusOr<Clip> ReadWavFile(const std::string& path, int64_t max_samples) {
  const std::optional<std::string> bytes = ReadWholeFile(path);
  if (!bytes.has_value()) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  return DecodeWav(*bytes, max_samples, path);
}

std::string EncodeWav16(const Clip& clip) {
  const uint32_t data_bytes = static_cast<uint32_t>(clip.samples.size() * 2);
  const uint32_t rate = static_cast<uint32_t>(clip.sample_rate);
  std::string out;
  out.reserve(44 + data_bytes);
  out += "RIFF";
  PutLittle(out, 36 + data_bytes, 4);
  out += "WAVEfmt ";
  PutLittle(out, 16, 4);        // fmt chunk size
  PutLittle(out, 1, 2);         // PCM
  PutLittle(out, 1, 2);         // mono
  PutLittle(out, rate, 4);      // sample rate
  PutLittle(out, rate * 2, 4);  // byte rate
  PutLittle(out, 2, 2);         // block align
  PutLittle(out, 16, 2);        // bits per sample
  out += "data";
  PutLittle(out, data_bytes, 4);
  for (const float x : clip.samples) {
    const double scaled = std::isfinite(x) ? std::round(double{x} * 32768.0) : 0.0;
    const auto v = static_cast<int16_t>(std::clamp(scaled, -32768.0, 32767.0));
    PutLittle(out, static_cast<uint16_t>(v), 2);
  }
  return out;
}

}  // namespace invariant::audio
