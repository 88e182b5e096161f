#include "core/audio/front_end.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "core/base/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;

// 16 kHz, 0.5 s, 1024-sample frames every 256, 48 bins at 12 per octave from
// 200 Hz (up to 200 · 2^(47/12) ≈ 3020 Hz).
v1::AudioFrontEnd TestSpec() {
  v1::AudioFrontEnd spec;
  spec.set_sample_rate(16000);
  spec.set_clip_seconds(0.5);
  spec.set_frame_length(1024);
  spec.set_hop_length(256);
  spec.set_min_frequency(200);
  spec.set_bins_per_octave(12);
  spec.set_frequency_bins(48);
  return spec;
}

std::unique_ptr<const AudioFrontEnd> Make(const v1::AudioFrontEnd& spec) {
  auto front = AudioFrontEnd::Create(spec);
  EXPECT_TRUE(front.ok()) << front.status();
  return front.ok() ? std::move(*front) : nullptr;
}

std::vector<float> Tone(double frequency, int rate, double seconds, double amplitude = 0.3) {
  std::vector<float> x(static_cast<size_t>(std::llround(seconds * rate)));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(amplitude * std::sin(2 * kPi * frequency * i / rate));
  }
  return x;
}

std::vector<float> Row(const AudioFrontEnd& front, const std::vector<float>& x, int rate) {
  std::vector<float> row(front.output_dim(), -1.0f);
  const absl::Status status = front.Apply(x, rate, row.data(), "clip");
  EXPECT_TRUE(status.ok()) << status;
  return row;
}

// The row averaged over frames: one value per frequency bin.
std::vector<double> Profile(const AudioFrontEnd& front, const std::vector<float>& row) {
  std::vector<double> p(front.frequency_bins(), 0.0);
  for (int64_t k = 0; k < front.frequency_bins(); ++k) {
    for (int64_t t = 0; t < front.frames(); ++t) p[k] += row[k * front.frames() + t];
  }
  return p;
}

int ArgMax(const std::vector<double>& p) {
  return static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());
}

double Centre(const v1::AudioFrontEnd& spec, double k) {
  return spec.min_frequency() * std::exp2(k / spec.bins_per_octave());
}

TEST(AudioFrontEndTest, CompleteFillsTheDefaultsAndDerivesFrames) {
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_frame_length(1000);
  const auto done = AudioFrontEnd::Complete(spec);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->fft_length(), 1024);
  EXPECT_EQ(done->trim_db(), 40);
  EXPECT_EQ(done->compression_gain(), 1);
  EXPECT_EQ(done->frames(), 1 + (8000 - 1000) / 256);
  EXPECT_EQ(done->max_clip_seconds(), 0);
  // Completing again changes nothing; a spec with the right frames is taken.
  const auto again = AudioFrontEnd::Complete(*done);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->SerializeAsString(), done->SerializeAsString());
}

TEST(AudioFrontEndTest, CompleteErrorsNameTheField) {
  const std::vector<std::pair<std::function<void(v1::AudioFrontEnd&)>, std::string>> cases = {
      {[](v1::AudioFrontEnd& s) { s.set_sample_rate(500); }, "audio.sample_rate"},
      {[](v1::AudioFrontEnd& s) { s.set_clip_seconds(0); }, "audio.clip_seconds"},
      {[](v1::AudioFrontEnd& s) { s.set_clip_seconds(0.01); }, "audio.clip_seconds"},
      {[](v1::AudioFrontEnd& s) { s.set_clip_seconds(std::nan("")); }, "audio.clip_seconds"},
      {[](v1::AudioFrontEnd& s) { s.set_frame_length(0); }, "audio.frame_length"},
      {[](v1::AudioFrontEnd& s) { s.set_hop_length(0); }, "audio.hop_length"},
      {[](v1::AudioFrontEnd& s) { s.set_fft_length(512); }, "audio.fft_length"},
      {[](v1::AudioFrontEnd& s) { s.set_fft_length(1025); }, "audio.fft_length"},
      {[](v1::AudioFrontEnd& s) { s.set_min_frequency(0); }, "audio.min_frequency"},
      // Coarser than an octave: a single bin's triangle would reach past
      // every spectrum (and overflow the FFT bin index).
      {[](v1::AudioFrontEnd& s) {
         s.set_bins_per_octave(0.01);
         s.set_frequency_bins(1);
       },
       "audio.bins_per_octave"},
      {[](v1::AudioFrontEnd& s) { s.set_bins_per_octave(-1); }, "audio.bins_per_octave"},
      {[](v1::AudioFrontEnd& s) { s.set_frequency_bins(0); }, "audio.frequency_bins"},
      {[](v1::AudioFrontEnd& s) { s.set_frequency_bins(200); }, "above the Nyquist frequency"},
      {[](v1::AudioFrontEnd& s) { s.set_trim_db(-3); }, "audio.trim_db"},
      {[](v1::AudioFrontEnd& s) { s.set_compression_gain(-1); }, "audio.compression_gain"},
      {[](v1::AudioFrontEnd& s) { s.set_compression_gain(2e6); }, "audio.compression_gain"},
      {[](v1::AudioFrontEnd& s) { s.set_max_clip_seconds(-1); }, "audio.max_clip_seconds"},
      {[](v1::AudioFrontEnd& s) { s.set_frames(27); }, "audio.frames"},
      {[](v1::AudioFrontEnd& s) {
         s.set_normalisation(static_cast<v1::AudioFrontEnd::Normalisation>(9));
       },
       "audio.normalisation"},
      {[](v1::AudioFrontEnd& s) {
         s.set_clip_seconds(600);
         s.set_hop_length(1);
       },
       "values in a row"},
  };
  for (const auto& c : cases) {
    v1::AudioFrontEnd spec = TestSpec();
    c.first(spec);
    const auto done = AudioFrontEnd::Complete(spec);
    ASSERT_FALSE(done.ok()) << c.second;
    EXPECT_EQ(done.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(done.status().message(), HasSubstr(c.second));
    EXPECT_FALSE(AudioFrontEnd::Create(spec).ok());
  }
}

TEST(AudioFrontEndTest, ApplyRefusesBadClipsNamingThem) {
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_max_clip_seconds(1);
  const auto front = Make(spec);
  ASSERT_NE(front, nullptr);
  EXPECT_EQ(front->MaxSamples(16000), 16000);
  EXPECT_EQ(front->MaxSamples(8000), 8000);
  std::vector<float> row(front->output_dim());
  const auto refuse = [&](const std::vector<float>& x, int rate, const std::string& words) {
    const absl::Status status = front->Apply(x, rate, row.data(), "inputs.clips[1]");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << words;
    EXPECT_THAT(status.message(), HasSubstr("inputs.clips[1]: " + words));
  };
  refuse({}, 16000, "zero samples");
  refuse({0.1f, std::numeric_limits<float>::quiet_NaN()}, 16000, "sample 1 is NaN or infinite");
  refuse({0.1f, std::numeric_limits<float>::infinity()}, 16000, "sample 1 is NaN or infinite");
  refuse(std::vector<float>(16001, 0.0f), 16000, "16001 samples at 16000 Hz, more than the 16000");
  refuse(std::vector<float>(8001, 0.0f), 8000, "8001 samples at 8000 Hz");
  refuse({0.1f}, 500, "sample rate 500 Hz outside");
  refuse({0.1f, 0.2f, 3e38f}, 16000, "sample 2 is 3e+38, beyond ±1.67772e+07");
  refuse({-16777218.0f}, 16000, "sample 0 is -1.67772e+07, beyond");
  EXPECT_TRUE(front->Apply({16777216.0f, -16777216.0f}, 22050, row.data(), "x").ok());
  EXPECT_TRUE(front->Apply(std::vector<float>(16000, 0.0f), 16000, row.data(), "x").ok());
  // 0 means 60 s.
  EXPECT_EQ(Make(TestSpec())->MaxSamples(16000), 60 * 16000);
}

TEST(AudioFrontEndTest, ASilentClipGivesZeros) {
  for (const bool subtract_mean : {false, true}) {
    for (const auto normalisation :
         {v1::AudioFrontEnd::NORMALISATION_PEAK, v1::AudioFrontEnd::NORMALISATION_RMS}) {
      v1::AudioFrontEnd spec = TestSpec();
      spec.set_trim_silence(true);
      spec.set_subtract_frequency_mean(subtract_mean);
      spec.set_normalisation(normalisation);
      const auto front = Make(spec);
      const std::vector<float> row = Row(*front, std::vector<float>(3000, 0.0f), 16000);
      EXPECT_EQ(row, std::vector<float>(front->output_dim(), 0.0f));
    }
  }
}

TEST(AudioFrontEndTest, NormalisesSubnormalClipsWithoutOverflow) {
  // 1 / peak is above FLT_MAX here (found by wav_fuzz).
  const float tiny = std::numeric_limits<float>::denorm_min() * 1000;
  for (const auto normalisation :
       {v1::AudioFrontEnd::NORMALISATION_PEAK, v1::AudioFrontEnd::NORMALISATION_RMS}) {
    v1::AudioFrontEnd spec = TestSpec();
    spec.set_normalisation(normalisation);
    const auto front = Make(spec);
    std::vector<float> x(4000, 0.0f);
    x[100] = tiny;
    x[2000] = -tiny / 2;
    const std::vector<float> row = Row(*front, x, 16000);
    float largest = 0;
    for (const float v : row) {
      ASSERT_TRUE(std::isfinite(v));
      largest = std::max(largest, v);
    }
    EXPECT_GT(largest, 0.1f);  // normalised to full scale
  }
}

TEST(AudioFrontEndTest, AToneLandsInTheBinWhoseCentreIsNearest) {
  const v1::AudioFrontEnd spec = TestSpec();
  const auto front = Make(spec);
  for (const double k : {10.0, 10.3, 10.7, 24.0, 24.45, 30.0, 40.2}) {
    const std::vector<double> p =
        Profile(*front, Row(*front, Tone(Centre(spec, k), 16000, 0.5), 16000));
    EXPECT_EQ(ArgMax(p), static_cast<int>(std::lround(k))) << "tone at bin " << k;
  }
}

TEST(AudioFrontEndTest, A400CentShiftMovesThePatternByFourBins) {
  const v1::AudioFrontEnd spec = TestSpec();
  const auto front = Make(spec);
  // A tone with two harmonics, at two pitches 400 cents apart.
  const auto voice = [](double f0) {
    std::vector<float> x = Tone(f0, 16000, 0.5, 0.3);
    const std::vector<float> h2 = Tone(2 * f0, 16000, 0.5, 0.15);
    const std::vector<float> h3 = Tone(3 * f0, 16000, 0.5, 0.1);
    for (size_t i = 0; i < x.size(); ++i) x[i] += h2[i] + h3[i];
    return x;
  };
  const double f0 = Centre(spec, 10.4);
  const std::vector<double> low = Profile(*front, Row(*front, voice(f0), 16000));
  const std::vector<double> high =
      Profile(*front, Row(*front, voice(f0 * std::exp2(400.0 / 1200)), 16000));
  EXPECT_EQ(ArgMax(high), ArgMax(low) + 4);
  // The pattern correlates with itself moved by 4 bins, far better than
  // with any other shift.
  const auto correlation = [&](int shift) {
    double sxy = 0, sxx = 0, syy = 0, sx = 0, sy = 0;
    int n = 0;
    const int bins = static_cast<int>(low.size());
    for (int k = std::max(0, -shift); k < std::min(bins, bins - shift); ++k) {
      const double x = low[k], y = high[k + shift];
      sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y, ++n;
    }
    return (sxy - sx * sy / n) / std::sqrt((sxx - sx * sx / n) * (syy - sy * sy / n));
  };
  EXPECT_GT(correlation(4), 0.97);
  for (int shift = -3; shift <= 11; ++shift) {
    if (shift == 4) continue;
    EXPECT_LT(correlation(shift), correlation(4) - 0.05) << shift;
  }
}

TEST(AudioFrontEndTest, AFlatSpectrumGivesAFlatColumn) {
  // An impulse at the middle of frame 3 (where the periodic Hann window is
  // exactly 1) has |FFT| = 1 at every frequency: every triangle, normalised
  // to unit sum, gives log1p(1).
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_clip_policy(v1::AudioFrontEnd::CLIP_POLICY_START);
  spec.set_normalisation(v1::AudioFrontEnd::NORMALISATION_NONE);
  const auto front = Make(spec);
  std::vector<float> x(8000, 0.0f);
  x[3 * 256 + 512] = 1.0f;
  const std::vector<float> row = Row(*front, x, 16000);
  for (int64_t k = 0; k < front->frequency_bins(); ++k) {
    EXPECT_NEAR(row[k * front->frames() + 3], std::log1p(1.0f), 1e-5) << k;
  }
}

TEST(AudioFrontEndTest, MagnitudesAreUnnormalisedAndCompressedByLog1p) {
  // A full-scale sine at an FFT bin frequency that is also a bin centre
  // (1000 Hz = 64 · 15.625 Hz): |FFT| = frame_length / 4 there, and
  // compression_gain scales it inside log1p.
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_min_frequency(1000);
  spec.set_frequency_bins(1);
  spec.set_normalisation(v1::AudioFrontEnd::NORMALISATION_NONE);
  spec.set_compression_gain(0.5);
  const auto front = Make(spec);
  const std::vector<float> row = Row(*front, Tone(1000, 16000, 0.5, 1.0), 16000);
  // The Hann lobe puts half the peak on each neighbouring FFT bin and
  // nothing further out; the triangle (1000/2^(1/12) .. 1000·2^(1/12)) is
  // normalised over all the FFT bins it covers.
  const double below = 1000 - 1000 / std::exp2(1.0 / 12), above = 1000 * std::exp2(1.0 / 12) - 1000;
  double sum = 0, w_below = 0, w_above = 0;
  for (int j = 0; j <= 512; ++j) {
    const double f = j * 15.625;
    const double w = f <= 1000 ? 1 - (1000 - f) / below : 1 - (f - 1000) / above;
    if (w <= 0) continue;
    sum += w;
    if (j == 63) w_below = w;
    if (j == 65) w_above = w;
  }
  const double filtered = 256 * (1 + 0.5 * w_below + 0.5 * w_above) / sum;
  EXPECT_NEAR(row[front->frames() / 2], std::log1p(0.5 * filtered), 1e-3);
}

TEST(AudioFrontEndTest, SubtractingTheFrequencyMeanCentresEveryBin) {
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_subtract_frequency_mean(true);
  const auto front = Make(spec);
  std::vector<float> x = Tone(700, 16000, 0.2);
  x.resize(8000, 0.0f);
  const std::vector<float> row = Row(*front, x, 16000);
  double largest = 0;
  for (int64_t k = 0; k < front->frequency_bins(); ++k) {
    double sum = 0;
    for (int64_t t = 0; t < front->frames(); ++t) {
      sum += row[k * front->frames() + t];
      largest = std::max(largest, std::fabs(double{row[k * front->frames() + t]}));
    }
    EXPECT_NEAR(sum / front->frames(), 0.0, 1e-5);
  }
  EXPECT_GT(largest, 1.0);
}

// A synthetic word: a gliding two-harmonic tone under a raised-cosine
// envelope, 0.25 s.
std::vector<float> Word(int rate) {
  const int n = rate / 4;
  std::vector<float> x(n);
  double phase = 0;
  for (int i = 0; i < n; ++i) {
    const double f = 300 + 400.0 * i / n;
    phase += 2 * kPi * f / rate;
    const double envelope = 0.5 - 0.5 * std::cos(2 * kPi * i / n);
    x[i] = static_cast<float>(envelope * (0.6 * std::sin(phase) + 0.3 * std::sin(2 * phase)));
  }
  return x;
}

std::vector<float> WithSilence(const std::vector<float>& word, int rate, double before,
                               double after, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(-1e-4f, 1e-4f);  // 60+ dB below the word
  std::vector<float> x;
  for (int i = 0; i < std::lround(before * rate); ++i) x.push_back(noise(rng));
  x.insert(x.end(), word.begin(), word.end());
  for (int i = 0; i < std::lround(after * rate); ++i) x.push_back(noise(rng));
  return x;
}

TEST(AudioFrontEndTest, TrimmingAndCentringIgnoreLeadingSilence) {
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_trim_silence(true);
  const auto front = Make(spec);
  const std::vector<float> word = Word(16000);
  const std::vector<float> a = Row(*front, WithSilence(word, 16000, 0.2, 0.05, 1), 16000);
  const std::vector<float> b = Row(*front, WithSilence(word, 16000, 0.5, 0.3, 2), 16000);
  double largest = 0, difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, double{a[i]});
    difference = std::max(difference, std::fabs(double{a[i]} - b[i]));
  }
  EXPECT_GT(largest, 1.0);
  EXPECT_LT(difference, 1e-3 * largest);
  // Without trimming the two clips are placed differently.
  spec.set_trim_silence(false);
  const auto untrimmed = Make(spec);
  const std::vector<float> c = Row(*untrimmed, WithSilence(word, 16000, 0.2, 0.05, 1), 16000);
  const std::vector<float> d = Row(*untrimmed, WithSilence(word, 16000, 0.5, 0.3, 2), 16000);
  double moved = 0;
  for (size_t i = 0; i < c.size(); ++i) moved = std::max(moved, std::fabs(double{c[i]} - d[i]));
  EXPECT_GT(moved, 0.3 * largest);
}

TEST(AudioFrontEndTest, ResamplesClipsAtOtherRates) {
  const v1::AudioFrontEnd spec = TestSpec();
  const auto front = Make(spec);
  const double f = Centre(spec, 20);
  const std::vector<double> native = Profile(*front, Row(*front, Tone(f, 16000, 0.5), 16000));
  const std::vector<double> resampled = Profile(*front, Row(*front, Tone(f, 44100, 0.5), 44100));
  EXPECT_EQ(ArgMax(resampled), 20);
  for (size_t k = 0; k < native.size(); ++k) {
    EXPECT_NEAR(resampled[k], native[k], 0.02 * native[ArgMax(native)] + 1e-6) << k;
  }
}

// A long clip at another rate: only the window the clip policy keeps (plus
// the resampler's margin) is resampled, so 30 s cost what 0.5 s do, and the
// row is that of the window alone, bit for bit.
TEST(AudioFrontEndTest, ALongClipAtAnotherRateIsCroppedBeforeResampling) {
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_max_clip_seconds(60);
  const auto front = Make(spec);
  const int rate = 44100;
  Rng rng(5);
  std::vector<float> clip(static_cast<size_t>(30 * rate));
  for (float& v : clip) v = static_cast<float>(0.2 * rng.Normal());  // no silence to trim
  // The centred window the front end keeps: 0.5 s and 10 ms on each side.
  const size_t window =
      static_cast<size_t>(std::ceil(0.5 * rate)) + 2 * static_cast<size_t>(std::ceil(0.01 * rate));
  const std::vector<float> centre(clip.begin() + (clip.size() - window) / 2,
                                  clip.begin() + (clip.size() - window) / 2 + window);
  EXPECT_EQ(Row(*front, clip, rate), Row(*front, centre, rate));
  // From the start under CLIP_POLICY_START.
  spec.set_clip_policy(v1::AudioFrontEnd::CLIP_POLICY_START);
  const auto start = Make(spec);
  const std::vector<float> head(clip.begin(), clip.begin() + window);
  EXPECT_EQ(Row(*start, clip, rate), Row(*start, head, rate));
}

TEST(AudioFrontEndTest, PeakAndRmsNormalisationRemoveTheLevel) {
  for (const auto normalisation :
       {v1::AudioFrontEnd::NORMALISATION_PEAK, v1::AudioFrontEnd::NORMALISATION_RMS}) {
    v1::AudioFrontEnd spec = TestSpec();
    spec.set_normalisation(normalisation);
    const auto front = Make(spec);
    const std::vector<float> loud = Row(*front, Tone(500, 16000, 0.5, 0.8), 16000);
    const std::vector<float> quiet = Row(*front, Tone(500, 16000, 0.5, 0.01), 16000);
    for (size_t i = 0; i < loud.size(); ++i) EXPECT_NEAR(loud[i], quiet[i], 1e-3) << i;
  }
}

TEST(AudioFrontEndTest, ApplyIsDeterministicAndThreadIndependent) {
  v1::AudioFrontEnd spec = TestSpec();
  spec.set_trim_silence(true);
  spec.set_subtract_frequency_mean(true);
  const auto front = Make(spec);
  std::vector<std::vector<float>> clips;
  std::vector<int> rates;
  for (int i = 0; i < 8; ++i) {
    const int rate = i % 2 == 0 ? 16000 : 22050;
    clips.push_back(WithSilence(Word(rate), rate, 0.01 * i, 0.1, i));
    rates.push_back(rate);
  }
  std::vector<std::vector<float>> serial;
  for (size_t i = 0; i < clips.size(); ++i) serial.push_back(Row(*front, clips[i], rates[i]));
  std::vector<std::vector<float>> results[2];
  const auto work = [&](int which) {
    for (int round = 0; round < 5; ++round) {
      for (size_t j = 0; j < clips.size(); ++j) {
        const size_t i = which == 0 ? j : clips.size() - 1 - j;
        std::vector<float> row(front->output_dim());
        if (!front->Apply(clips[i], rates[i], row.data(), "x").ok()) row.clear();
        results[which].push_back(row);
      }
    }
  };
  std::thread first(work, 0), second(work, 1);
  first.join();
  second.join();
  for (int which = 0; which < 2; ++which) {
    ASSERT_EQ(results[which].size(), 5 * clips.size());
    for (size_t r = 0; r < results[which].size(); ++r) {
      const size_t j = r % clips.size();
      const size_t i = which == 0 ? j : clips.size() - 1 - j;
      ASSERT_EQ(results[which][r].size(), serial[i].size());
      EXPECT_EQ(std::memcmp(results[which][r].data(), serial[i].data(), serial[i].size() * 4), 0);
    }
  }
}

TEST(AudioFrontEndTest, Int16ToFloatDividesBy32768) {
  const std::vector<int16_t> pcm = {0, 16384, -32768, 32767};
  EXPECT_EQ(Int16ToFloat(pcm), (std::vector<float>{0.0f, 0.5f, -1.0f, 32767 / 32768.0f}));
}

}  // namespace
}  // namespace invariant::audio
