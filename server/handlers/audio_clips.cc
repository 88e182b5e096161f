#include "server/handlers/audio_clips.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/audio/resample.h"
#include "core/audio/wav.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "float32_le / int16_le samples are copied as they are: a little-endian host is needed"
#endif

namespace invariant::server {
namespace {

// A clip's samples at their rate, once decoded.
struct Samples {
  int sample_rate = 0;
  std::vector<float> values;
};

// The rate of raw samples: the clip's, or the model's when 0.
absl::StatusOr<int> RawRate(const ClipView& clip, int64_t index, int model_rate,
                            const InferFieldNames& names) {
  const int rate = clip.sample_rate == 0 ? model_rate : clip.sample_rate;
  if (rate < audio::kMinSampleRate || rate > audio::kMaxSampleRate) {
    return absl::InvalidArgumentError(
        absl::StrCat(names.Clip(index, ClipPart::kSampleRate), ": expected 0 (the model's ",
                     model_rate, " Hz) or a rate in [", audio::kMinSampleRate, ", ",
                     audio::kMaxSampleRate, "] Hz, received ", clip.sample_rate));
  }
  return rate;
}

// OK when a clip at `rate` can be resampled to the model's rate.
absl::Status CheckRatio(int rate, int model_rate, const std::string& field) {
  const double ratio = static_cast<double>(std::max(rate, model_rate)) / std::min(rate, model_rate);
  if (ratio <= audio::kMaxRatio) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": expected a sample rate within a factor ", audio::kMaxRatio, " of the model's ",
      model_rate, " Hz (so that it can be resampled), received ", rate, " Hz"));
}

absl::Status CheckLength(int64_t count, int rate, double max_clip_seconds,
                         const std::string& field) {
  const int64_t max_samples = MaxClipSamples(max_clip_seconds, rate);
  if (count <= max_samples) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": expected at most ", max_samples,
                                                 " samples (max_clip_seconds=", max_clip_seconds,
                                                 " at ", rate, " Hz), received ", count));
}

// The cheap checks of one clip, before any memory is allocated for the
// batch: a WAV's header is read (not its samples) and its length held to its
// own rate. Returns the clip's length in seconds.
absl::StatusOr<double> CheckClip(const ClipView& clip, int64_t index, int model_rate,
                                 double max_clip_seconds, const InferFieldNames& names) {
  using Format = ClipView::Format;
  switch (clip.format) {
    case Format::kNone:
      return absl::InvalidArgumentError(
          absl::StrCat(names.Clip(index, ClipPart::kClip),
                       ": no samples: expected one of wav, float32_le or int16_le"));
    case Format::kWav: {
      const std::string field = names.Clip(index, ClipPart::kWav);
      if (clip.bytes.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": expected a whole WAV file, received 0 bytes (zero samples)"));
      }
      absl::StatusOr<audio::WavHeader> header = audio::ReadWavHeader(clip.bytes, field);
      if (!header.ok()) return header.status();
      if (absl::Status s = CheckRatio(header->sample_rate, model_rate, field); !s.ok()) return s;
      if (absl::Status s =
              CheckLength(header->samples, header->sample_rate, max_clip_seconds, field);
          !s.ok()) {
        return s;
      }
      return static_cast<double>(header->samples) / header->sample_rate;
    }
    case Format::kFloat32:
    case Format::kInt16: {
      const bool f32 = clip.format == Format::kFloat32;
      const size_t width = f32 ? sizeof(float) : sizeof(int16_t);
      const std::string field = names.Clip(index, f32 ? ClipPart::kFloat32 : ClipPart::kInt16);
      if (clip.bytes.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": expected at least one sample, received 0 bytes (zero samples)"));
      }
      if (clip.bytes.size() % width != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": expected a multiple of ", width, " bytes (little-endian ",
                         f32 ? "float32" : "int16", " samples), received ", clip.bytes.size()));
      }
      absl::StatusOr<int> rate = RawRate(clip, index, model_rate, names);
      if (!rate.ok()) return rate.status();
      if (absl::Status s = CheckRatio(*rate, model_rate, names.Clip(index, ClipPart::kSampleRate));
          !s.ok()) {
        return s;
      }
      const int64_t samples = static_cast<int64_t>(clip.bytes.size() / width);
      if (absl::Status s = CheckLength(samples, *rate, max_clip_seconds, field); !s.ok()) return s;
      return static_cast<double>(samples) / *rate;
    }
  }
  return 0.0;
}

// The samples of a clip CheckClip passed.
absl::StatusOr<Samples> DecodeClip(const ClipView& clip, int64_t index, int model_rate,
                                   double max_clip_seconds, const InferFieldNames& names) {
  Samples out;
  if (clip.format == ClipView::Format::kWav) {
    const std::string field = names.Clip(index, ClipPart::kWav);
    absl::StatusOr<audio::Clip> wav = audio::DecodeWav(
        clip.bytes, MaxClipSamples(max_clip_seconds, audio::kMaxSampleRate), field);
    if (!wav.ok()) return wav.status();
    if (wav->samples.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": expected at least one sample, received zero samples"));
    }
    if (absl::Status s = CheckRatio(wav->sample_rate, model_rate, field); !s.ok()) return s;
    if (absl::Status s = CheckLength(static_cast<int64_t>(wav->samples.size()), wav->sample_rate,
                                     max_clip_seconds, field);
        !s.ok()) {
      return s;
    }
    out.sample_rate = wav->sample_rate;
    out.values = std::move(wav->samples);
    return out;
  }
  absl::StatusOr<int> rate = RawRate(clip, index, model_rate, names);
  if (!rate.ok()) return rate.status();
  out.sample_rate = *rate;
  if (clip.format == ClipView::Format::kFloat32) {
    out.values.resize(clip.bytes.size() / sizeof(float));
    std::memcpy(out.values.data(), clip.bytes.data(), clip.bytes.size());
    for (size_t i = 0; i < out.values.size(); ++i) {
      if (!std::isfinite(out.values[i])) {
        return absl::InvalidArgumentError(absl::StrCat(names.Clip(index, ClipPart::kFloat32), "[",
                                                       i, "]: expected a finite sample, received ",
                                                       out.values[i]));
      }
    }
  } else {
    std::vector<int16_t> pcm(clip.bytes.size() / sizeof(int16_t));
    std::memcpy(pcm.data(), clip.bytes.data(), clip.bytes.size());
    out.values = audio::Int16ToFloat(pcm);
  }
  return out;
}

}  // namespace

double EffectiveMaxClipSeconds(const audio::AudioFrontEnd& front_end, double server_limit) {
  // 0 in the spec means the front end's default.
  const double model_limit = front_end.spec().max_clip_seconds() > 0
                                 ? front_end.spec().max_clip_seconds()
                                 : audio::AudioFrontEnd::kDefaultMaxClipSeconds;
  if (server_limit <= 0) return model_limit;
  return std::min(model_limit, server_limit);
}

int64_t MaxClipSamples(double max_clip_seconds, int sample_rate) {
  return static_cast<int64_t>(std::floor(max_clip_seconds * sample_rate));
}

absl::StatusOr<double> PlanClipBatch(const InferRequest& request,
                                     const audio::AudioFrontEnd& front_end, int64_t max_rows,
                                     double max_clip_seconds) {
  const InferFieldNames& names = request.fields;
  const int64_t n = static_cast<int64_t>(request.clips.size());
  if (n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(names.clips, ": empty batch: expected at least one clip, received 0"));
  }
  if (request.declared_rows != 0 && request.declared_rows != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.num_rows, ": expected ", n, " (one row per clip), received ", request.declared_rows));
  }
  if (n > max_rows) {
    return absl::InvalidArgumentError(absl::StrCat(names.clips, ": expected at most ", max_rows,
                                                   " clips per request, received ", n));
  }
  const int model_rate = front_end.spec().sample_rate();
  // Every clip is cut or padded to the front end's clip_seconds: a clip
  // costs its own length (decoding, resampling) and the front end's span.
  const double span = front_end.spec().clip_seconds();
  double seconds = 0;
  for (int64_t i = 0; i < n; ++i) {
    absl::StatusOr<double> length =
        CheckClip(request.clips[i], i, model_rate, max_clip_seconds, names);
    if (!length.ok()) return length.status();
    seconds += *length + span;
  }
  return seconds;
}

absl::StatusOr<DecodedRows> DecodeClipBatch(const InferRequest& request,
                                            const audio::AudioFrontEnd& front_end, int64_t max_rows,
                                            double max_clip_seconds,
                                            const std::function<absl::Status()>& keep_going,
                                            std::vector<audio::ClipSpeech>* speech) {
  absl::StatusOr<double> planned = PlanClipBatch(request, front_end, max_rows, max_clip_seconds);
  if (!planned.ok()) return planned.status();
  const int64_t n = static_cast<int64_t>(request.clips.size());
  const int model_rate = front_end.spec().sample_rate();
  const int64_t dim = front_end.output_dim();
  std::vector<float> rows(static_cast<size_t>(n * dim));
  if (speech != nullptr) speech->assign(static_cast<size_t>(n), audio::ClipSpeech{});
  for (int64_t i = 0; i < n; ++i) {
    if (keep_going) {
      if (absl::Status s = keep_going(); !s.ok()) return s;
    }
    absl::StatusOr<Samples> samples =
        DecodeClip(request.clips[i], i, model_rate, max_clip_seconds, request.fields);
    if (!samples.ok()) return samples.status();
    if (absl::Status s = front_end.Apply(
            samples->values, samples->sample_rate, rows.data() + i * dim,
            request.fields.Clip(i, ClipPart::kClip), speech != nullptr ? &(*speech)[i] : nullptr);
        !s.ok()) {
      return s;
    }
  }
  return DecodedRows(n, std::move(rows));
}

}  // namespace invariant::server
