// wav_fuzz.cc: libFuzzer target for WAV decoding and the audio front end
// (core/audio/wav.h, front_end.h).
//
// Input: the bytes of a WAV file (the seeds in corpus/wav_fuzz/ are tiny
// PCM 8/16/24-bit, float, µ-law and RF64 files and refused ones: truncated
// header or data, a header claiming 2^31 bytes, IMA ADPCM, 500 Hz, NaN).
// DecodeWav, with at most kMaxSamples samples, must return a clip or an
// INVALID_ARGUMENT naming the input (never crash, never allocate for samples
// the file does not hold). A decoded clip has 1..kMaxSamples finite samples
// at a rate in [kMinSampleRate, kMaxSampleRate]; it survives EncodeWav16 →
// DecodeWav with its rate and length; and two front ends (one with trimming,
// peak normalisation and centring, one with RMS, start and mean removal)
// turn it into finite rows, non-negative without mean removal, or refuse it
// only for a resampling ratio beyond kMaxRatio or a sample beyond
// ±kMaxSampleMagnitude.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/audio/front_end.h"
#include "core/audio/resample.h"
#include "core/audio/wav.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using invariant::fuzz::Check;
namespace audio = invariant::audio;

constexpr int64_t kMaxSamples = 1 << 15;

std::unique_ptr<const audio::AudioFrontEnd> MakeFrontEnd(bool variant) {
  invariant::v1::AudioFrontEnd spec;
  spec.set_sample_rate(8000);
  spec.set_clip_seconds(0.25);
  spec.set_frame_length(200);
  spec.set_hop_length(80);
  spec.set_min_frequency(100);
  spec.set_bins_per_octave(6);
  spec.set_frequency_bins(30);
  spec.set_trim_silence(!variant);
  if (variant) {
    spec.set_normalisation(invariant::v1::AudioFrontEnd::NORMALISATION_RMS);
    spec.set_clip_policy(invariant::v1::AudioFrontEnd::CLIP_POLICY_START);
    spec.set_subtract_frequency_mean(true);
  }
  auto front = audio::AudioFrontEnd::Create(spec);
  Check(front.ok(), "the fuzz front ends are valid");
  return std::move(*front);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<const audio::AudioFrontEnd> fronts[2] = {MakeFrontEnd(false),
                                                                        MakeFrontEnd(true)};
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto clip = audio::DecodeWav(bytes, kMaxSamples, "fuzz.wav");
  if (!clip.ok()) {
    Check(clip.status().code() == absl::StatusCode::kInvalidArgument,
          "a refused WAV is INVALID_ARGUMENT");
    Check(clip.status().message().rfind("fuzz.wav: ", 0) == 0, "the error names the input");
    return 0;
  }
  const std::vector<float>& x = clip->samples;
  Check(!x.empty() && static_cast<int64_t>(x.size()) <= kMaxSamples,
        "a decoded clip has 1..max_samples samples");
  Check(clip->sample_rate >= audio::kMinSampleRate && clip->sample_rate <= audio::kMaxSampleRate,
        "a decoded clip's rate is in range");
  for (const float v : x) Check(std::isfinite(v), "decoded samples are finite");

  const auto again = audio::DecodeWav(audio::EncodeWav16(*clip), kMaxSamples, "again");
  Check(again.ok(), "an encoded clip decodes");
  Check(again->sample_rate == clip->sample_rate && again->samples.size() == x.size(),
        "an encoded clip keeps its rate and length");

  const double ratio = 8000.0 / clip->sample_rate;
  float peak = 0.0f;
  for (const float v : x) peak = std::max(peak, std::fabs(v));
  const bool acceptable = ratio <= audio::kMaxRatio && ratio >= 1.0 / audio::kMaxRatio &&
                          peak <= audio::AudioFrontEnd::kMaxSampleMagnitude;
  for (int i = 0; i < 2; ++i) {
    std::vector<float> row(fronts[i]->output_dim());
    const absl::Status status = fronts[i]->Apply(x, clip->sample_rate, row.data(), "fuzz");
    Check(status.ok() == acceptable,
          "the front end takes every clip it can resample with samples in range");
    if (!status.ok()) {
      Check(status.code() == absl::StatusCode::kInvalidArgument,
            "a refused clip is INVALID_ARGUMENT");
      continue;
    }
    for (const float v : row) {
      Check(std::isfinite(v), "front-end values are finite");
      if (i == 0) Check(v >= 0.0f, "log1p of magnitudes is non-negative");
    }
  }
  return 0;
}
