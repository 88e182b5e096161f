#include "client/loadgen/clip_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/cli/clips.h"
#include "client/client.h"
#include "core/audio/wav.h"
#include "core/base/json.h"
#include "core/base/random.h"

namespace invariant::loadgen {
namespace {

constexpr double kPi = 3.14159265358979323846;

void AppendLittleEndian(uint64_t bits, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

int16_t ToInt16(float x) {
  const double v = std::nearbyint(static_cast<double>(x) * 32768.0);
  return static_cast<int16_t>(std::clamp(v, -32768.0, 32767.0));
}

std::vector<int16_t> ToInt16(const std::vector<float>& samples) {
  std::vector<int16_t> pcm(samples.size());
  std::transform(samples.begin(), samples.end(), pcm.begin(), [](float x) { return ToInt16(x); });
  return pcm;
}

}  // namespace

const char* ClipEncodingName(ClipEncoding encoding) {
  switch (encoding) {
    case ClipEncoding::kWav:
      return "wav";
    case ClipEncoding::kFloat32:
      return "float32";
    case ClipEncoding::kInt16:
      return "int16";
  }
  return "wav";
}

absl::StatusOr<std::vector<LoadClip>> ReadLoadClips(const std::string& paths) {
  absl::StatusOr<std::vector<cli::ClipFile>> files = cli::ListClipFiles(paths);
  if (!files.ok()) return files.status();
  std::vector<LoadClip> clips;
  for (const cli::ClipFile& file : *files) {
    absl::StatusOr<std::string> bytes = cli::ReadClipBytes(file);
    if (!bytes.ok()) return bytes.status();
    if (static_cast<int64_t>(bytes->size()) > kMaxClipFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(file.id, ": ", bytes->size(), " bytes, more than ", kMaxClipFileBytes));
    }
    absl::StatusOr<audio::Clip> clip =
        audio::DecodeWav(*bytes, static_cast<int64_t>(bytes->size()), file.id);
    if (!clip.ok()) return clip.status();
    LoadClip load;
    load.sample_rate = clip->sample_rate;
    load.samples = std::move(clip->samples);
    load.wav = *std::move(bytes);
    clips.push_back(std::move(load));
  }
  return clips;
}

std::vector<LoadClip> SyntheticClips(int64_t count, double seconds, int rate, uint64_t seed) {
  std::vector<LoadClip> clips;
  const int64_t n = std::max<int64_t>(1, std::llround(seconds * rate));
  for (int64_t c = 0; c < count; ++c) {
    Rng rng = Rng::ForStream(seed, static_cast<uint64_t>(c));
    const double f0_start = 100 + 80 * rng.Uniform();
    const double f0_end = std::min(220.0, f0_start * (0.8 + 0.4 * rng.Uniform()));
    const double f1 = 300 + 500 * rng.Uniform(), f2 = 900 + 1500 * rng.Uniform();
    LoadClip clip;
    clip.sample_rate = rate;
    clip.samples.resize(static_cast<size_t>(n));
    double phase = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double u = (static_cast<double>(i) / n - 0.2) / 0.6;  // 0..1 over the voiced part
      double v = 0.003 * rng.Normal();
      if (u >= 0 && u < 1) {
        const double f0 = f0_start + (f0_end - f0_start) * u;
        phase += 2 * kPi * f0 / rate;
        double voiced = 0;
        for (int h = 1; h * f0 < 0.45 * rate && h <= 30; ++h) {
          const double f = h * f0;
          voiced += (std::exp(-std::pow((f - f1) / 250, 2)) +
                     0.5 * std::exp(-std::pow((f - f2) / 400, 2)) + 0.03) *
                    std::sin(h * phase);
        }
        v += 0.3 * std::sqrt(std::sin(kPi * u)) * voiced;
      }
      clip.samples[static_cast<size_t>(i)] = static_cast<float>(std::clamp(v, -1.0, 1.0));
    }
    clip.wav = audio::EncodeWav16({rate, clip.samples});
    clips.push_back(std::move(clip));
  }
  return clips;
}

v1::AudioClip ToAudioClip(const LoadClip& clip, ClipEncoding encoding) {
  switch (encoding) {
    case ClipEncoding::kWav:
      return WavClip(clip.wav);
    case ClipEncoding::kFloat32:
      return FloatClip(clip.samples, clip.sample_rate);
    case ClipEncoding::kInt16:
      return Int16Clip(ToInt16(clip.samples), clip.sample_rate);
  }
  return WavClip(clip.wav);
}

absl::Status ValidateRestClips(const std::vector<LoadClip>& clips, ClipEncoding encoding,
                               RestEncoding rest_encoding) {
  if (encoding == ClipEncoding::kWav && rest_encoding != RestEncoding::kBinary) {
    return absl::InvalidArgumentError(
        "--clip_encoding=wav: WAV files go over REST as BYTES, which have no JSON form; use "
        "--rest_encoding=binary or --clip_encoding=float32 / int16");
  }
  if (encoding != ClipEncoding::kWav) {
    for (const LoadClip& clip : clips) {
      if (clip.sample_rate != clips.front().sample_rate) {
        return absl::InvalidArgumentError(
            absl::StrCat("--clip: a REST request of samples has one sample_rate; the clips have ",
                         clips.front().sample_rate, " and ", clip.sample_rate,
                         " Hz (use --clip_encoding=wav or clips of one rate)"));
      }
    }
  }
  return absl::OkStatus();
}

EncodedInferRequest EncodeClipInferRequest(const std::vector<const LoadClip*>& clips,
                                           const std::vector<std::string>& outputs,
                                           ClipEncoding encoding, RestEncoding rest_encoding) {
  EncodedInferRequest request;
  std::string& body = request.body;
  const size_t n = clips.size();
  const bool binary = rest_encoding == RestEncoding::kBinary;
  std::string tail;  // the binary tensors, in input order
  if (encoding == ClipEncoding::kWav) {
    for (const LoadClip* clip : clips) {
      AppendLittleEndian(clip->wav.size(), 4, &tail);
      tail += clip->wav;
    }
    body = absl::StrCat("{\"inputs\":[{\"name\":\"", kOipInputName,
                        "\",\"datatype\":\"BYTES\",\"shape\":[", n,
                        "],\"parameters\":{\"binary_data_size\":", tail.size(), "}}]");
  } else {
    size_t length = 0;
    bool ragged = false;
    for (const LoadClip* clip : clips) {
      ragged = ragged || (length != 0 && clip->samples.size() != length);
      length = std::max(length, clip->samples.size());
    }
    const bool fp32 = encoding == ClipEncoding::kFloat32;
    body = absl::StrCat("{\"parameters\":{\"sample_rate\":", clips.front()->sample_rate,
                        "},\"inputs\":[{\"name\":\"", kOipInputName, "\",\"datatype\":\"",
                        fp32 ? "FP32" : "INT16", "\",\"shape\":[", n, ",", length, "]");
    std::string data;
    for (const LoadClip* clip : clips) {
      for (size_t i = 0; i < length; ++i) {
        const float x = i < clip->samples.size() ? clip->samples[i] : 0.0f;
        if (binary && fp32) {
          uint32_t bits = 0;
          std::memcpy(&bits, &x, sizeof(bits));
          AppendLittleEndian(bits, 4, &tail);
        } else if (binary) {
          AppendLittleEndian(static_cast<uint16_t>(ToInt16(x)), 2, &tail);
        } else {
          if (!data.empty()) data += ',';
          if (fp32) {
            AppendJsonNumber(x, &data);
          } else {
            absl::StrAppend(&data, ToInt16(x));
          }
        }
      }
    }
    const size_t sample_bytes = tail.size();
    if (binary) {
      absl::StrAppend(&body, ",\"parameters\":{\"binary_data_size\":", sample_bytes, "}}");
    } else {
      absl::StrAppend(&body, ",\"data\":[", data, "]}");
    }
    if (ragged) {
      absl::StrAppend(&body, ",{\"name\":\"input_lengths\",\"datatype\":\"INT64\",\"shape\":[", n,
                      "]");
      std::string lengths;
      for (const LoadClip* clip : clips) {
        if (binary) {
          AppendLittleEndian(clip->samples.size(), 8, &tail);
        } else {
          if (!lengths.empty()) lengths += ',';
          absl::StrAppend(&lengths, clip->samples.size());
        }
      }
      if (binary) {
        absl::StrAppend(&body, ",\"parameters\":{\"binary_data_size\":", 8 * n, "}}");
      } else {
        absl::StrAppend(&body, ",\"data\":[", lengths, "]}");
      }
    }
    body += "]";
  }
  AppendRequestedOutputs(outputs, binary, &body);
  request.json_bytes = static_cast<int64_t>(body.size());
  request.content_type = binary ? "application/octet-stream" : "application/json";
  body += tail;
  return request;
}

absl::StatusOr<int> SampleRateFromModelMetadata(absl::string_view body) {
  absl::StatusOr<JsonValue> json = ParseJson(body, kMaxJsonDepth);
  if (!json.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("model metadata ", json.status().message()));
  }
  const JsonValue* properties = json->is_object() ? json->Find("properties") : nullptr;
  const JsonValue* rate =
      properties != nullptr && properties->is_object() ? properties->Find("sample_rate") : nullptr;
  if (rate == nullptr) return 0;
  int value = 0;
  if (!((rate->is_string() && absl::SimpleAtoi(rate->text(), &value)) ||
        (rate->is_number() && absl::SimpleAtoi(rate->text(), &value))) ||
      value < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model metadata: properties.sample_rate: expected a positive integer, received ",
        rate->is_string() || rate->is_number() ? rate->text() : std::string(rate->TypeName())));
  }
  return value;
}

}  // namespace invariant::loadgen
