// compression.h: LOG1P as before; PCEN as bundle.proto's Pcen states it, its
// defaults and range checks, and what it is for: a steady level or colouring
// of a bin divided out, which log1p keeps.
#include "core/audio/compression.h"

#include <cmath>
#include <vector>

#include "core/audio/front_end.h"
#include "core/base/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

using ::testing::HasSubstr;

v1::AudioFrontEnd PcenSpec() {
  v1::AudioFrontEnd spec;
  spec.set_sample_rate(8000);
  spec.set_hop_length(128);
  spec.set_compression_gain(10);
  spec.set_compression(v1::AudioFrontEnd::COMPRESSION_PCEN);
  EXPECT_TRUE(CompleteCompression(&spec).ok());
  return spec;
}

std::vector<float> Values(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(std::abs(rng.Normal()) * 3);
  return v;
}

TEST(CompressionTest, CompleteFillsLibrosasDefaultsOnlyForPcen) {
  v1::AudioFrontEnd spec = PcenSpec();
  EXPECT_EQ(spec.pcen().time_constant_seconds(), 0.4);
  EXPECT_EQ(spec.pcen().alpha(), 0.98);
  EXPECT_EQ(spec.pcen().delta(), 2);
  EXPECT_EQ(spec.pcen().power(), 0.5);
  EXPECT_EQ(spec.pcen().epsilon(), 1e-6);
  v1::AudioFrontEnd log1p;
  ASSERT_TRUE(CompleteCompression(&log1p).ok());
  EXPECT_FALSE(log1p.has_pcen());
}

TEST(CompressionTest, CompleteErrorsNameTheField) {
  const auto error = [](const std::function<void(v1::AudioFrontEnd&)>& edit) {
    v1::AudioFrontEnd spec;
    spec.set_compression(v1::AudioFrontEnd::COMPRESSION_PCEN);
    edit(spec);
    return std::string(CompleteCompression(&spec).message());
  };
  EXPECT_THAT(error([](auto& s) { s.mutable_pcen()->set_alpha(1.5); }),
              HasSubstr("audio.pcen.alpha: 1.5 must be in (0, 1]"));
  EXPECT_THAT(error([](auto& s) { s.mutable_pcen()->set_power(-1); }),
              HasSubstr("audio.pcen.power"));
  EXPECT_THAT(error([](auto& s) { s.mutable_pcen()->set_delta(NAN); }),
              HasSubstr("audio.pcen.delta"));
  EXPECT_THAT(error([](auto& s) { s.mutable_pcen()->set_epsilon(2); }),
              HasSubstr("audio.pcen.epsilon"));
  EXPECT_THAT(error([](auto& s) { s.mutable_pcen()->set_time_constant_seconds(100); }),
              HasSubstr("audio.pcen.time_constant_seconds"));
  EXPECT_THAT(
      error([](auto& s) { s.set_compression(static_cast<v1::AudioFrontEnd::Compression>(7)); }),
      HasSubstr("audio.compression: unknown value 7"));
  EXPECT_THAT(error([](auto& s) {
                s.set_compression(v1::AudioFrontEnd::COMPRESSION_LOG1P);
                s.mutable_pcen()->set_alpha(0.5);
              }),
              HasSubstr("audio.pcen: set, but compression is not COMPRESSION_PCEN"));
  // Through the front end's Complete too.
  v1::AudioFrontEnd spec;
  spec.set_sample_rate(8000);
  spec.set_clip_seconds(0.5);
  spec.set_frame_length(128);
  spec.set_hop_length(128);
  spec.set_min_frequency(100);
  spec.set_bins_per_octave(12);
  spec.set_frequency_bins(24);
  spec.set_compression(v1::AudioFrontEnd::COMPRESSION_PCEN);
  spec.mutable_pcen()->set_alpha(2);
  EXPECT_THAT(std::string(AudioFrontEnd::Complete(spec).status().message()),
              HasSubstr("audio.pcen.alpha"));
}

TEST(CompressionTest, Log1pIsLog1pOfTheGainTimesTheValue) {
  v1::AudioFrontEnd spec;
  spec.set_compression_gain(10);
  const std::vector<float> v = Values(3 * 20, 1);
  std::vector<float> row = v;
  Compress(spec, 20, 0, 3, 0, 20, row.data());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(row[i], std::log1p(10.0f * v[i])) << i;
}

TEST(CompressionTest, PcenFollowsTheStatedRecurrenceFromTheFirstFrame) {
  const v1::AudioFrontEnd spec = PcenSpec();
  const int64_t frames = 40, begin = 5, end = 33;
  const std::vector<float> v = Values(2 * frames, 2);
  std::vector<float> row = v;
  Compress(spec, frames, 0, 2, begin, end, row.data());
  const double t = 0.4 * 8000 / 128, s = (std::sqrt(1 + 4 * t * t) - 1) / (2 * t * t);
  for (int64_t k = 0; k < 2; ++k) {
    double m = 0;
    for (int64_t f = 0; f < frames; ++f) {
      const size_t i = static_cast<size_t>(k * frames + f);
      if (f < begin || f >= end) {
        EXPECT_EQ(row[i], v[i]) << "frame " << f << " is outside [begin, end): untouched";
        continue;
      }
      const double e = 10.0 * v[i];
      m = f == begin ? e : (1 - s) * m + s * e;
      const double want = std::pow(e / std::pow(1e-6 + m, 0.98) + 2, 0.5) - std::sqrt(2.0);
      EXPECT_NEAR(row[i], want, 1e-6 * std::max(1.0, std::abs(want))) << k << "," << f;
    }
  }
  // Silence stays 0 exactly.
  std::vector<float> zeros(frames, 0.0f);
  Compress(spec, frames, 0, 1, 0, frames, zeros.data());
  for (float z : zeros) EXPECT_EQ(z, 0.0f);
}

TEST(CompressionTest, PcenDividesOutASteadyColouringThatLog1pKeeps) {
  // Bins of the same signal through channel gains 1…1000 (a microphone's or
  // a room's colouring): once the smoother has settled, PCEN's bins agree to
  // within 1000^(1 − alpha) ≈ 15 %, log1p's differ by more than 3×.
  const int64_t frames = 200;
  const std::vector<float> base = Values(frames, 3);
  const float gains[] = {1, 10, 100, 1000};
  std::vector<float> pcen, log1p;
  for (float g : gains) {
    for (float x : base) pcen.push_back(g * x);
  }
  log1p = pcen;
  Compress(PcenSpec(), frames, 0, 4, 0, frames, pcen.data());
  v1::AudioFrontEnd plain;
  plain.set_compression_gain(10);
  Compress(plain, frames, 0, 4, 0, frames, log1p.data());
  const auto mean = [&](const std::vector<float>& row, int k) {
    double sum = 0;
    for (int64_t t = frames / 2; t < frames; ++t) sum += row[static_cast<size_t>(k * frames + t)];
    return sum / (frames / 2);
  };
  EXPECT_LT(mean(pcen, 3) / mean(pcen, 0), 1.15);
  EXPECT_GT(mean(pcen, 3) / mean(pcen, 0), 1.0);
  EXPECT_GT(mean(log1p, 3) / mean(log1p, 0), 3.0);
}

}  // namespace
}  // namespace invariant::audio
