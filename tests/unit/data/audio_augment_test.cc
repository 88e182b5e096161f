// Training-time audio augmentation: the SNR of the added noise, the noise
// colours' spectra, excerpts of background recordings, padding, resampling
// and gain, seeded copies independent of the threads, copies in LoadAudio,
// and configs refused naming the field.
#include "train/data/audio_augment.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/audio/front_end.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/unit/data/synthetic_clips.h"
#include "tests/unit/data/test_files.h"
#include "train/data/audio.h"
#include "train/data/data_config.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Ge;
using ::testing::HasSubstr;
using testing::kTestFrontEnd;
using ::testing::Le;
using testing::SyntheticWord;
using testing::WriteClip;
using testing::WriteSpokenDigits;

constexpr double kPi = 3.14159265358979323846;

std::string FreshDir(const std::string& leaf) {
  const std::string dir = ScratchPath(leaf);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

v1::AudioFrontEnd FrontEnd() {
  v1::AudioFrontEnd fe;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kTestFrontEnd, &fe));
  return fe;
}

v1::AudioAugmentation Config(const std::string& text) {
  v1::AudioAugmentation a;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &a)) << text;
  return a;
}

std::unique_ptr<const AudioAugmenter> Augmenter(const std::string& text) {
  auto a = AudioAugmenter::Create(Config(text), FrontEnd(), "data.audio.augmentation");
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *std::move(a) : nullptr;
}

// The word of class 1 as an 8 kHz clip (0.3 s).
audio::Clip Word() {
  audio::Clip clip;
  clip.sample_rate = 8000;
  clip.samples = SyntheticWord(1, 0, 0, 8000);
  return clip;
}

double MeanSquare(const std::vector<float>& x, size_t begin = 0, size_t end = SIZE_MAX) {
  end = std::min(end, x.size());
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += static_cast<double>(x[i]) * x[i];
  return sum / static_cast<double>(end - begin);
}

// out − the clip placed at `offset`: the noise added.
std::vector<float> AddedNoise(const audio::Clip& clip, const AugmentedClip& out) {
  std::vector<float> noise = out.clip.samples;
  for (size_t i = 0; i < clip.samples.size(); ++i) {
    noise[static_cast<size_t>(out.draw.offset) + i] -= clip.samples[i];
  }
  return noise;
}

TEST(AudioAugmentTest, WhiteNoiseIsAddedAtTheDrawnSnr) {
  const audio::Clip clip = Word();
  auto list = Augmenter("copies: 8 seed: 3 noise_colours: NOISE_COLOUR_WHITE snr_db: [5, 20]");
  ASSERT_NE(list, nullptr);
  std::set<double> drawn;
  for (int c = 0; c < 8; ++c) {
    auto out = list->Augment(clip, 0, c, "clip");
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->draw.noise, NoiseSource::kWhite);
    drawn.insert(out->draw.snr_db);
    const double snr =
        10 * std::log10(MeanSquare(clip.samples) / MeanSquare(AddedNoise(clip, *out)));
    EXPECT_NEAR(snr, out->draw.snr_db, 0.5) << c;
  }
  EXPECT_EQ(drawn, (std::set<double>{5, 20}));

  // A range, with padding: the signal's power is the clip's, the noise's is
  // over the whole recording.
  auto range = Augmenter(
      "copies: 4 noise_colours: NOISE_COLOUR_WHITE snr_db_range { min: 0 max: 10 } "
      "total_seconds { min: 0.6 max: 1 }");
  ASSERT_NE(range, nullptr);
  for (int c = 0; c < 4; ++c) {
    auto out = range->Augment(clip, 7, c, "clip");
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(out->draw.snr_db, AllOf(Ge(0.0), Le(10.0)));
    ASSERT_GT(out->clip.samples.size(), clip.samples.size());
    const std::vector<float> noise = AddedNoise(clip, *out);
    EXPECT_NEAR(10 * std::log10(MeanSquare(clip.samples) / MeanSquare(noise)), out->draw.snr_db,
                0.5);
    // Before the word there is noise alone (room noise), not silence.
    EXPECT_GT(MeanSquare(out->clip.samples, 0, 100), 0);
  }
}

// The power of x around `f` Hz: Hann-windowed segments of 2048 samples,
// |DFT at f|² averaged over the segments, in dB.
double PowerDbAt(const std::vector<float>& x, double f, int rate) {
  constexpr size_t kSegment = 2048;
  double total = 0;
  int segments = 0;
  for (size_t start = 0; start + kSegment <= x.size(); start += kSegment, ++segments) {
    double re = 0, im = 0;
    for (size_t i = 0; i < kSegment; ++i) {
      const double w = 0.5 - 0.5 * std::cos(2 * kPi * i / kSegment);
      const double phase = 2 * kPi * f * i / rate;
      re += w * x[start + i] * std::cos(phase);
      im -= w * x[start + i] * std::sin(phase);
    }
    total += re * re + im * im;
  }
  return 10 * std::log10(total / segments);
}

// The least-squares slope of the power (dB) against log2 frequency, from
// 125 Hz to 2 kHz in half octaves.
double SlopeDbPerOctave(const std::vector<float>& x, int rate) {
  std::vector<double> octaves, db;
  for (double o = 0; o <= 4.01; o += 0.5) {
    octaves.push_back(o);
    db.push_back(PowerDbAt(x, 125 * std::pow(2.0, o), rate));
  }
  const double n = static_cast<double>(octaves.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < octaves.size(); ++i) {
    mx += octaves[i] / n;
    my += db[i] / n;
  }
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < octaves.size(); ++i) {
    sxy += (octaves[i] - mx) * (db[i] - my);
    sxx += (octaves[i] - mx) * (octaves[i] - mx);
  }
  return sxy / sxx;
}

TEST(AudioAugmentTest, TheNoiseColoursHaveTheirSpectralSlopes) {
  constexpr int kRate = 16000;
  constexpr int64_t kSamples = 1 << 17;
  const double white =
      SlopeDbPerOctave(ColouredNoise(NoiseSource::kWhite, kSamples, kRate, 1), kRate);
  const double pink =
      SlopeDbPerOctave(ColouredNoise(NoiseSource::kPink, kSamples, kRate, 2), kRate);
  const double brown =
      SlopeDbPerOctave(ColouredNoise(NoiseSource::kBrown, kSamples, kRate, 3), kRate);
  EXPECT_NEAR(white, 0.0, 1.0);
  EXPECT_NEAR(pink, -10 * std::log10(2.0), 1.0);   // −3.01 dB per octave
  EXPECT_NEAR(brown, -20 * std::log10(2.0), 1.0);  // −6.02 dB per octave
  // Seeded, mean removed.
  EXPECT_EQ(ColouredNoise(NoiseSource::kPink, 1000, kRate, 9),
            ColouredNoise(NoiseSource::kPink, 1000, kRate, 9));
  EXPECT_NE(ColouredNoise(NoiseSource::kPink, 1000, kRate, 9),
            ColouredNoise(NoiseSource::kPink, 1000, kRate, 10));
  double mean = 0;
  for (float v : ColouredNoise(NoiseSource::kBrown, 4000, kRate, 4)) mean += v;
  EXPECT_NEAR(mean / 4000, 0.0, 1e-6);
}

TEST(AudioAugmentTest, PaddingPlacesTheWordAtTheDrawnOffset) {
  const audio::Clip clip = Word();
  auto a = Augmenter("copies: 6 seed: 11 total_seconds { min: 0.5 max: 1.5 }");
  ASSERT_NE(a, nullptr);
  std::set<int64_t> offsets;
  for (int c = 0; c < 6; ++c) {
    auto out = a->Augment(clip, 2, c, "clip");
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float>& x = out->clip.samples;
    const int64_t n = static_cast<int64_t>(clip.samples.size());
    EXPECT_THAT(static_cast<int64_t>(x.size()), AllOf(Ge(4000), Le(12000)));
    const int64_t offset = out->draw.offset;
    ASSERT_LE(offset + n, static_cast<int64_t>(x.size()));
    offsets.insert(offset);
    EXPECT_EQ(std::vector<float>(x.begin() + offset, x.begin() + offset + n), clip.samples);
    EXPECT_EQ(MeanSquare(x, 0, static_cast<size_t>(offset)), 0);  // silence around it
    EXPECT_EQ(MeanSquare(x, static_cast<size_t>(offset + n)), 0);
  }
  EXPECT_GT(offsets.size(), 3u);  // the offset is drawn per copy
  // A recording shorter than the clip leaves it as it is.
  auto shorter = Augmenter("copies: 1 total_seconds { min: 0.1 max: 0.1 }");
  auto out = shorter->Augment(clip, 0, 0, "clip");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->clip.samples, clip.samples);
  EXPECT_EQ(out->draw.offset, 0);
}

TEST(AudioAugmentTest, ResampledCopiesAndGain) {
  const audio::Clip clip = Word();
  auto a = Augmenter("copies: 8 sample_rates: [16000, 22050, 8000]");
  ASSERT_NE(a, nullptr);
  std::set<int> rates;
  auto front_end = audio::AudioFrontEnd::Create(*audio::AudioFrontEnd::Complete(FrontEnd()));
  ASSERT_TRUE(front_end.ok()) << front_end.status();
  std::vector<float> row(static_cast<size_t>((*front_end)->output_dim()));
  for (int c = 0; c < 8; ++c) {
    auto out = a->Augment(clip, 0, c, "clip");
    ASSERT_TRUE(out.ok()) << out.status();
    const int rate = out->clip.sample_rate;
    rates.insert(rate);
    EXPECT_EQ(out->draw.sample_rate, rate);
    EXPECT_EQ(static_cast<int64_t>(out->clip.samples.size()), std::llround(2400.0 * rate / 8000));
    // The front end takes it back to its rate.
    EXPECT_TRUE((*front_end)->Apply(out->clip.samples, rate, row.data(), "copy").ok());
  }
  EXPECT_EQ(rates, (std::set<int>{8000, 16000, 22050}));

  auto gain = Augmenter("copies: 1 gain_db { min: -6 max: -6 }");
  auto quieter = gain->Augment(clip, 0, 0, "clip");
  ASSERT_TRUE(quieter.ok()) << quieter.status();
  const double factor = std::pow(10.0, -6.0 / 20);
  for (size_t i = 0; i < clip.samples.size(); ++i) {
    ASSERT_FLOAT_EQ(quieter->clip.samples[i], static_cast<float>(clip.samples[i] * factor));
  }
  auto loud = Augmenter("copies: 1 gain_db { min: 40 max: 40 }")->Augment(clip, 0, 0, "clip");
  ASSERT_TRUE(loud.ok()) << loud.status();
  for (float v : loud->clip.samples) ASSERT_LE(std::fabs(v), 1.0f);  // the recorder saturates
}

TEST(AudioAugmentTest, AnotherVoiceIsTheClipShiftedInPitchAndPlayedAtAnotherTempo) {
  audio::Clip tone;  // a steady 400 Hz tone of 0.5 s
  tone.sample_rate = 8000;
  for (int i = 0; i < 4000; ++i) {
    tone.samples.push_back(static_cast<float>(0.5 * std::sin(2 * kPi * 400 * i / 8000.0)));
  }
  auto voices = Augmenter(
      "copies: 6 seed: 9 pitch_cents { min: -500 max: 500 } "
      "tempo { min: 0.8 max: 1.25 }");
  ASSERT_NE(voices, nullptr);
  std::set<double> pitches;
  for (int c = 0; c < 6; ++c) {
    auto out = voices->Augment(tone, 0, c, "clip");
    ASSERT_TRUE(out.ok()) << out.status();
    const AugmentDraw& d = out->draw;
    EXPECT_THAT(d.pitch_cents, AllOf(Ge(-500), Le(500)));
    EXPECT_THAT(d.tempo, AllOf(Ge(0.8), Le(1.25)));
    pitches.insert(d.pitch_cents);
    const std::vector<float>& y = out->clip.samples;
    // The length follows the tempo (the pitch shift keeps it within 2 samples).
    EXPECT_NEAR(static_cast<double>(y.size()), 4000 / d.tempo, 3) << c;
    const double want = 400 * std::exp2(d.pitch_cents / 1200);
    EXPECT_NEAR(testing::UpwardCrossingRate(y, y.size() / 4, 3 * y.size() / 4, 8000), want,
                0.005 * want)
        << c;
    // Seeded: the same copy again is the same bits.
    EXPECT_EQ(voices->Augment(tone, 0, c, "clip")->clip.samples, y) << c;
  }
  EXPECT_EQ(pitches.size(), 6u);
  // Only a pitch range: the tempo stays 1 and the length with it.
  auto pitch_only = Augmenter("copies: 1 pitch_cents { min: 300 max: 300 }");
  ASSERT_NE(pitch_only, nullptr);
  auto up = pitch_only->Augment(tone, 0, 0, "clip");
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(up->draw.tempo, 1);
  EXPECT_NEAR(static_cast<double>(up->clip.samples.size()), 4000, 2);
}

TEST(AudioAugmentTest, ExcerptsOfTheNoiseRecordings) {
  const std::string dir = FreshDir("noise");
  // A 0.1 s recording at the clip's rate (shorter than the clip: it loops)
  // and a 1 s one at 16 kHz.
  Rng rng(5);
  std::vector<float> hum(800), hiss(16000);
  for (float& v : hum) v = static_cast<float>(rng.Uniform(-0.5, 0.5));
  for (float& v : hiss) v = static_cast<float>(rng.Uniform(-0.5, 0.5));
  WriteClip(dir + "/a/hum.wav", hum, 8000);
  WriteClip(dir + "/hiss.WAV", hiss, 16000);
  auto a = Augmenter(absl::StrCat("copies: 16 seed: 2 noise_dir: '", dir, "' snr_db: 10"));
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->noise_recordings().size(), 2u);
  const std::vector<float>& hum_read = a->noise_recordings()[0].clip.samples;  // 16-bit
  EXPECT_THAT(a->noise_recordings()[0].path, HasSubstr("a/hum.wav"));
  const audio::Clip clip = Word();
  std::set<int64_t> recordings, starts;
  for (int c = 0; c < 16; ++c) {
    auto out = a->Augment(clip, 4, c, "clip");
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->draw.noise, NoiseSource::kRecording);
    recordings.insert(out->draw.recording);
    starts.insert(out->draw.excerpt_start);
    const std::vector<float> noise = AddedNoise(clip, *out);
    EXPECT_NEAR(10 * std::log10(MeanSquare(clip.samples) / MeanSquare(noise)), 10.0, 0.5);
    if (out->draw.recording != 0) continue;
    // The same-rate recording: the noise is a scaled excerpt of it from the
    // drawn start, wrapping round.
    const size_t len = hum_read.size();
    double dot = 0, norm = 0;
    for (size_t i = 0; i < noise.size(); ++i) {
      const float e = hum_read[(static_cast<size_t>(out->draw.excerpt_start) + i) % len];
      dot += noise[i] * e;
      norm += e * e;
    }
    const double scale = dot / norm;
    for (size_t i = 0; i < noise.size(); ++i) {
      const float e = hum_read[(static_cast<size_t>(out->draw.excerpt_start) + i) % len];
      ASSERT_NEAR(noise[i], scale * e, 1e-5) << i;
    }
  }
  EXPECT_EQ(recordings.size(), 2u);
  EXPECT_GT(starts.size(), 8u);  // a random excerpt each time

  // The 16 kHz recording resampled: an excerpt of its 8 kHz version.
  audio::Clip hiss_clip{16000, hiss};
  auto excerpt = RecordingExcerpt(hiss_clip, 15900, 2000, 8000, "hiss");
  ASSERT_TRUE(excerpt.ok()) << excerpt.status();
  EXPECT_EQ(excerpt->size(), 2000u);
  EXPECT_NEAR(MeanSquare(*excerpt), MeanSquare(hiss) / 2, MeanSquare(hiss) / 6);  // half the band
}

TEST(AudioAugmentTest, BadNoiseFoldersAreNamed) {
  const auto error_of = [](const std::string& dir) {
    return AudioAugmenter::Create(
               Config(absl::StrCat("copies: 1 noise_dir: '", dir, "' snr_db: 3")), FrontEnd(),
               "data.audio.augmentation")
        .status();
  };
  const absl::Status missing = error_of("/nonexistent/noise");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr("data.audio.augmentation.noise_dir: /nonexistent/noise"));
  const std::string empty = FreshDir("empty");
  EXPECT_THAT(std::string(error_of(empty).message()), HasSubstr("no *.wav below"));
  const std::string silent = FreshDir("silent");
  WriteClip(silent + "/quiet.wav", std::vector<float>(100, 0.0f), 8000);
  EXPECT_THAT(std::string(error_of(silent).message()),
              AllOf(HasSubstr("noise_dir"), HasSubstr("quiet.wav is silent")));
  const std::string bad = FreshDir("bad");
  std::ofstream(bad + "/x.wav") << "not a wave";
  EXPECT_THAT(std::string(error_of(bad).message()),
              AllOf(HasSubstr("data.audio.augmentation.noise_dir: "), HasSubstr("x.wav")));
}

TEST(AudioAugmentTest, ACopyDependsOnItsSeedAloneNotOnTheThreads) {
  const std::string noise = FreshDir("noise");
  WriteClip(noise + "/n.wav", SyntheticWord(2, 1, 1, 11025), 11025);
  auto a = Augmenter(absl::StrCat(
      "copies: 3 seed: 8 sample_rates: [8000, 16000] total_seconds { min: 0.4 max: 0.8 } "
      "noise_colours: [NOISE_COLOUR_PINK, NOISE_COLOUR_BROWN] noise_dir: '",
      noise, "' snr_db_range { min: 5 max: 15 } gain_db { min: -3 max: 3 }"));
  ASSERT_NE(a, nullptr);
  const audio::Clip clip = Word();
  constexpr int kClips = 6;
  std::vector<std::vector<float>> serial;
  for (int i = 0; i < kClips; ++i) {
    for (int c = 0; c < 3; ++c) serial.push_back(a->Augment(clip, i, c, "clip")->clip.samples);
  }
  EXPECT_NE(serial[0], serial[1]);  // copies differ
  EXPECT_NE(serial[0], serial[3]);  // so do clips
  // In reverse order on four threads: the same bits.
  std::vector<std::vector<float>> parallel(serial.size());
  ThreadPool pool(4);
  pool.ParallelFor(static_cast<int64_t>(serial.size()), [&](int64_t k) {
    const int64_t j = static_cast<int64_t>(serial.size()) - 1 - k;
    parallel[static_cast<size_t>(j)] =
        a->Augment(clip, j / 3, static_cast<int>(j % 3), "clip")->clip.samples;
  });
  EXPECT_EQ(parallel, serial);
  // The number of copies does not change a copy; the seed does.
  auto more = Augmenter(absl::StrCat(
      "copies: 5 seed: 8 sample_rates: [8000, 16000] total_seconds { min: 0.4 max: 0.8 } "
      "noise_colours: [NOISE_COLOUR_PINK, NOISE_COLOUR_BROWN] noise_dir: '",
      noise, "' snr_db_range { min: 5 max: 15 } gain_db { min: -3 max: 3 }"));
  EXPECT_EQ(more->Augment(clip, 1, 2, "clip")->clip.samples, serial[5]);
}

v1::AudioSource AugmentedSource(const std::string& dir, const std::string& augmentation) {
  v1::AudioSource source;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      absl::StrCat("dir: '", dir, "' augmentation { ", augmentation, " }"), &source));
  *source.mutable_front_end() = FrontEnd();
  return source;
}

TEST(AudioAugmentTest, LoadAudioAppendsTheCopiesWhateverTheThreads) {
  const std::string dir = FreshDir("clips");
  WriteSpokenDigits(dir, 2, {"ann", "bob"}, 2);  // 8 clips
  const v1::AudioSource source =
      AugmentedSource(dir,
                      "copies: 2 seed: 4 noise_colours: NOISE_COLOUR_WHITE snr_db: [10, 30] "
                      "total_seconds { min: 0.3 max: 0.6 } sample_rates: [8000, 11025]");
  const int original_threads = DefaultThreadCount();
  ResetDefaultThreadPoolForTesting(1);
  auto one = LoadAudio(source, "data.audio");
  ResetDefaultThreadPoolForTesting(3);
  auto three = LoadAudio(source, "data.audio");
  ResetDefaultThreadPoolForTesting(original_threads);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(three.ok()) << three.status();
  const Dataset& d = one->train;
  ASSERT_EQ(d.rows(), 24);
  EXPECT_EQ(std::vector<float>(d.x.data(), d.x.data() + d.x.size()),
            std::vector<float>(three->train.x.data(), three->train.x.data() + d.x.size()));
  ASSERT_EQ(one->copy_of.size(), 24u);
  for (int64_t r = 0; r < 24; ++r) {
    const int64_t of = one->copy_of[static_cast<size_t>(r)];
    EXPECT_EQ(of, r < 8 ? -1 : (r - 8) / 2) << r;
    const size_t o = static_cast<size_t>(r < 8 ? r : of);
    EXPECT_EQ(d.labels[static_cast<size_t>(r)], d.labels[o]) << r;
    EXPECT_EQ(d.groups[static_cast<size_t>(r)], d.groups[o]) << r;
  }
  // The originals are the rows without augmentation.
  v1::AudioSource plain = source;
  plain.clear_augmentation();
  auto unaugmented = LoadAudio(plain, "data.audio");
  ASSERT_TRUE(unaugmented.ok()) << unaugmented.status();
  EXPECT_TRUE(unaugmented->copy_of.empty());
  const FloatMatrix& u = unaugmented->train.x;
  EXPECT_EQ(std::vector<float>(d.x.data(), d.x.data() + u.size()),
            std::vector<float>(u.data(), u.data() + u.size()));
  EXPECT_NE(std::vector<float>(d.x.row(8), d.x.row(9)), std::vector<float>(d.x.row(0), d.x.row(1)));

  // The schema carries the copies; a manifest's test clips get none.
  v1::DataConfig config;
  *config.mutable_audio() = source;
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->train->schema().copy_of, one->copy_of);
  std::ofstream(dir + "/m.csv") << "path,label,split\n"
                                << "ann/0_ann_0.wav,0,train\n"
                                << "ann/1_ann_0.wav,1,train\n"
                                << "bob/0_bob_0.wav,0,test\n";
  v1::AudioSource manifest = source;
  manifest.clear_dir();
  manifest.set_manifest(dir + "/m.csv");
  auto with_test = LoadAudio(manifest, "data.audio");
  ASSERT_TRUE(with_test.ok()) << with_test.status();
  EXPECT_EQ(with_test->train.rows(), 6);
  EXPECT_EQ(with_test->test.rows(), 1);
}

TEST(AudioAugmentTest, BadConfigsAreRefusedNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"gain_db { min: 1 max: 2 }", "data.audio.augmentation.copies: 0 must be in [1, 64]"},
      {"copies: 65 gain_db {}", "data.audio.augmentation.copies: 65"},
      {"copies: 1", "data.audio.augmentation: the copies would equal the clips"},
      {"copies: 1 noise_colours: NOISE_COLOUR_WHITE",
       "data.audio.augmentation.snr_db: noise needs"},
      {"copies: 1 gain_db {} snr_db: 3", "data.audio.augmentation.snr_db: an SNR without noise"},
      {"copies: 1 noise_colours: NOISE_COLOUR_PINK snr_db: 200",
       "data.audio.augmentation.snr_db[0]: 200 dB"},
      {"copies: 1 noise_colours: NOISE_COLOUR_PINK snr_db: 3 snr_db_range {}",
       "data.audio.augmentation.snr_db and data.audio.augmentation.snr_db_range are alternatives"},
      {"copies: 1 noise_colours: NOISE_COLOUR_PINK snr_db_range { min: 10 max: 5 }",
       "data.audio.augmentation.snr_db_range: min 10, max 5"},
      {"copies: 1 noise_colours: [NOISE_COLOUR_PINK, NOISE_COLOUR_UNSPECIFIED] snr_db: 1",
       "data.audio.augmentation.noise_colours[1]"},
      {"copies: 1 sample_rates: [16000, 500]", "data.audio.augmentation.sample_rates[1]: 500 Hz"},
      {"copies: 1 total_seconds { min: 0 max: 1 }",
       "data.audio.augmentation.total_seconds: min must be > 0"},
      {"copies: 1 total_seconds { min: 1 max: 3 }",
       "data.audio.augmentation.total_seconds: min 1, max 3"},  // max_clip_seconds is 2
      {"copies: 1 gain_db { min: -100 max: 0 }", "data.audio.augmentation.gain_db"},
      {"copies: 1 pitch_cents { min: -1300 max: 0 }",
       "data.audio.augmentation.pitch_cents: min -1300, max 0"},
      {"copies: 1 tempo { min: 0.4 max: 1 }", "data.audio.augmentation.tempo: min 0.4"},
      {"copies: 1 tempo { min: 1.2 max: 1.1 }", "data.audio.augmentation.tempo: min 1.2"},
  };
  for (const auto& [text, message] : bad) {
    const absl::Status s =
        ValidateAudioAugmentation(Config(text), FrontEnd(), "data.audio.augmentation");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(s.message()), HasSubstr(message)) << text;
  }
  // LoadAudio refuses it before reading a clip.
  const absl::Status s =
      LoadAudio(AugmentedSource(FreshDir("clips"), "copies: 1 noise_dir: '/x'"), "data.audio")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("data.audio.augmentation.snr_db: noise needs"));
}

}  // namespace
}  // namespace invariant::train
