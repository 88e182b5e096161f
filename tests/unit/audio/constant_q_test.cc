// The constant-Q filter bank and the canonical representatives of the audio
// front end: the bank against a direct computation, its magnitude scale,
// pitch shifts as translations at low frequencies (where the STFT's are not),
// the aligned row's invariance to translations, and the stretched row's to
// tempo.
#include "core/audio/constant_q.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <mutex>
#include <utility>
#include <vector>

#include "core/audio/front_end.h"
#include "core/audio/spectrogram_ops.h"
#include "core/base/thread_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::audio {
namespace {

using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;

// 8 kHz, 0.5 s, 128-sample frames every 128, 48 bins at 12 per octave from
// 100 Hz (the STFT's resolution, 62.5 Hz, is coarser than the bins' spacing
// below about 1 kHz).
v1::AudioFrontEnd Spec(bool constant_q, bool align = false) {
  v1::AudioFrontEnd spec;
  spec.set_sample_rate(8000);
  spec.set_clip_seconds(0.5);
  spec.set_frame_length(128);
  spec.set_hop_length(128);
  spec.set_min_frequency(100);
  spec.set_bins_per_octave(12);
  spec.set_frequency_bins(48);
  spec.set_clip_policy(v1::AudioFrontEnd::CLIP_POLICY_START);
  spec.set_normalisation(v1::AudioFrontEnd::NORMALISATION_NONE);
  if (constant_q) {
    spec.set_filterbank(v1::AudioFrontEnd::FILTERBANK_CONSTANT_Q);
    spec.set_bandwidth_octaves(1.0 / 6);
  }
  spec.set_align_frequency(align);
  return spec;
}

std::vector<float> Row(const v1::AudioFrontEnd& spec, const std::vector<float>& x) {
  auto front = AudioFrontEnd::Create(spec);
  EXPECT_TRUE(front.ok()) << front.status();
  std::vector<float> row((*front)->output_dim());
  const absl::Status status = (*front)->Apply(x, spec.sample_rate(), row.data(), "clip");
  EXPECT_TRUE(status.ok()) << status;
  return row;
}

// A voice: harmonics k·f0 (k = 1..6, amplitude 1/k) under a smooth envelope
// that rises and falls over the clip, 4,000 samples at 8 kHz.
std::vector<float> Voice(double f0) {
  std::vector<float> x(4000);
  for (size_t i = 0; i < x.size(); ++i) {
    const double envelope = std::sin(kPi * i / x.size());
    double v = 0.0;
    for (int k = 1; k <= 6; ++k) v += std::sin(2 * kPi * k * f0 * i / 8000.0) / k;
    x[i] = static_cast<float>(0.2 * envelope * envelope * v);
  }
  return x;
}

TEST(ConstantQBankTest, DecimatedBandsEqualADirectComputation) {
  // A short clip so that the direct DFTs are cheap: 0.1 s, 800 samples.
  v1::AudioFrontEnd spec = Spec(true);
  spec.set_clip_seconds(0.1);
  auto completed = AudioFrontEnd::Complete(spec);
  ASSERT_TRUE(completed.ok()) << completed.status();
  auto bank = ConstantQBank::Create(*completed);
  ASSERT_TRUE(bank.ok()) << bank.status();
  const int64_t n = (*bank)->transform_length();
  const int64_t length = 800, frames = completed->frames(), bins = completed->frequency_bins();
  std::vector<float> clip = Voice(180.0);
  clip.resize(length);
  ConstantQBank::WorkspacePtr w = (*bank)->NewWorkspace();
  std::vector<float> magnitudes(bins * frames);
  (*bank)->Apply(clip.data(), *w, 0, frames, magnitudes.data(), [](int64_t, int64_t) {});

  // y_k(m) = (2/N) Σ_j X(j) H_k(j R/N) e^{2πijm/N} over the support, at every sample.
  std::vector<std::complex<double>> spectrum(n / 2 + 1);
  for (int64_t j = 0; j <= n / 2; ++j) {
    std::complex<double> sum = 0.0;
    for (int64_t i = 0; i < length; ++i)
      sum += double{clip[i]} * std::polar(1.0, -2 * kPi * j * i / n);
    spectrum[j] = sum;
  }
  const double sigma = completed->bandwidth_octaves();
  for (int64_t k = 0; k < bins; k += 5) {
    const double c = 100.0 * std::exp2(k / 12.0);
    std::vector<double> magnitude(length);
    for (int64_t m = 0; m < length; ++m) {
      std::complex<double> y = 0.0;
      for (int64_t j = 1; j <= n / 2; ++j) {
        const double z = std::log2(j * 8000.0 / n / c) / sigma;
        if (std::fabs(z) > ConstantQBank::kSupportSigmas) continue;
        y += spectrum[j] * std::exp(-0.5 * z * z) * std::polar(1.0, 2 * kPi * j * m / n);
      }
      magnitude[m] = std::abs(y) * 2.0 / n;
    }
    for (int64_t t = 0; t < frames; ++t) {
      double direct = 0.0;
      int count = 0;
      // Every 16th sample: 128-sample frames hold kSamplesPerFrame (8) of them.
      for (int64_t m = t * 128; m < t * 128 + 128; m += 16) direct += magnitude[m], ++count;
      ASSERT_EQ(count, ConstantQBank::kSamplesPerFrame);
      direct = direct / count * 128 / 4;
      EXPECT_NEAR(magnitudes[k * frames + t], direct, 1e-4 * direct + 1e-6) << k << " " << t;
    }
  }
}

// A range of frames gives those frames' values bit for bit, zeros
// elsewhere; done() hears of every band once; the pool's size changes no bit
// (the bands run as ParallelFor tasks).
TEST(ConstantQBankTest, AFrameRangeAndAnyPoolGiveTheSameBits) {
  v1::AudioFrontEnd spec = Spec(true);
  spec.set_frequency_bins(40);  // 3 tasks of kBandsPerTask, the last short
  auto completed = AudioFrontEnd::Complete(spec);
  ASSERT_TRUE(completed.ok()) << completed.status();
  auto bank = ConstantQBank::Create(*completed);
  ASSERT_TRUE(bank.ok()) << bank.status();
  const int64_t frames = completed->frames(), bins = completed->frequency_bins();
  const std::vector<float> clip = Voice(150.0);
  const int original_threads = DefaultThreadCount();
  const auto run = [&](int threads, int64_t begin, int64_t end) {
    ResetDefaultThreadPoolForTesting(threads);
    ConstantQBank::WorkspacePtr w = (*bank)->NewWorkspace();
    std::vector<float> magnitudes(bins * frames, -1.0f);
    std::vector<int> heard(bins, 0);
    std::mutex mu;
    (*bank)->Apply(clip.data(), *w, begin, end, magnitudes.data(), [&](int64_t k0, int64_t k1) {
      std::lock_guard<std::mutex> lock(mu);
      for (int64_t k = k0; k < k1; ++k) ++heard[k];
    });
    EXPECT_THAT(heard, ::testing::Each(1));
    return magnitudes;
  };
  const std::vector<float> full = run(1, 0, frames);
  EXPECT_THAT(full, ::testing::Each(::testing::Ge(0.0f)));
  EXPECT_EQ(run(2, 0, frames), full);
  const int64_t begin = 5, end = frames - 7;
  const std::vector<float> part = run(3, begin, end);
  for (int64_t k = 0; k < bins; ++k) {
    for (int64_t t = 0; t < frames; ++t) {
      const float expected = t >= begin && t < end ? full[k * frames + t] : 0.0f;
      ASSERT_EQ(part[k * frames + t], expected) << k << " " << t;
    }
  }
  EXPECT_THAT(run(2, 3, 3), ::testing::Each(0.0f));
  ResetDefaultThreadPoolForTesting(original_threads);
}

TEST(ConstantQBankTest, TheTransformIsTheShortestSmoothLengthPastTheReach) {
  // The shipped spoken-digit bank: 1 s at 8 kHz, σ = 0.0833 octave at
  // 100 Hz, whose reach is 882 samples: 8,882 needed, d = 16, and
  // M = 576 = 2⁶·3² the first 5-smooth count ≥ 556 (a power of two would be
  // 16,384).
  v1::AudioFrontEnd spec = Spec(true);
  spec.set_clip_seconds(1.0);
  spec.set_bandwidth_octaves(0.0833);
  auto completed = AudioFrontEnd::Complete(spec);
  ASSERT_TRUE(completed.ok()) << completed.status();
  EXPECT_EQ(ConstantQBank::Decimation(*completed), 16);
  auto n = ConstantQBank::TransformLength(*completed);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 9216);
  // Frames of 3 samples every 3: d = 1, and N stays even for the real FFT.
  spec.set_frame_length(3);
  spec.set_hop_length(3);
  completed = AudioFrontEnd::Complete(spec);
  ASSERT_TRUE(completed.ok()) << completed.status();
  EXPECT_EQ(ConstantQBank::Decimation(*completed), 1);
  n = ConstantQBank::TransformLength(*completed);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n % 2, 0);
  EXPECT_GE(*n, 8882);
  EXPECT_LE(*n, 8882 * 5 / 4);
}

TEST(ConstantQBankTest, AFullScaleSineAtACentreGivesAQuarterOfTheFrame) {
  const v1::AudioFrontEnd spec = Spec(true);
  auto completed = AudioFrontEnd::Complete(spec);
  ASSERT_TRUE(completed.ok());
  auto bank = ConstantQBank::Create(*completed);
  ASSERT_TRUE(bank.ok());
  for (const int k : {3, 20, 40}) {
    std::vector<float> x(4000);
    const double c = 100.0 * std::exp2(k / 12.0);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(std::sin(2 * kPi * c * i / 8000.0));
    ConstantQBank::WorkspacePtr w = (*bank)->NewWorkspace();
    std::vector<float> magnitudes(completed->frequency_bins() * completed->frames());
    (*bank)->Apply(x.data(), *w, 0, completed->frames(), magnitudes.data(),
                   [](int64_t, int64_t) {});
    // A middle frame, away from the clip's ends: 128 / 4 = 32.
    EXPECT_NEAR(magnitudes[k * completed->frames() + completed->frames() / 2], 32.0, 0.3) << k;
  }
}

// max over interior bins and frames of |row(k + s, t) − row'(k, t)|, row'
// the clip `low`'s and row the clip `high`'s (pitched s bins up).
double TranslationError(const v1::AudioFrontEnd& spec, const std::vector<float>& low,
                        const std::vector<float>& high, int s) {
  const std::vector<float> a = Row(spec, low), b = Row(spec, high);
  const int64_t frames = a.size() / spec.frequency_bins();
  double error = 0.0;
  for (int64_t k = 0; k + s < spec.frequency_bins(); ++k) {
    for (int64_t t = 0; t < frames; ++t) {
      error = std::max(error, double{std::fabs(b[(k + s) * frames + t] - a[k * frames + t])});
    }
  }
  return error;
}

TEST(ConstantQBankTest, APitchShiftTranslatesTheBinsWhereTheStftCannot) {
  // f0 = 110 Hz and 4 bins (400 cents) higher: harmonics from 110 Hz to
  // 1.05 kHz, all in the band where the STFT's 62.5 Hz resolution is coarser
  // than the bins.
  const double f0 = 110.0;
  const std::vector<float> low = Voice(f0), high = Voice(f0 * std::exp2(4.0 / 12));
  const double constant_q = TranslationError(Spec(true), low, high, 4);
  const double stft = TranslationError(Spec(false), low, high, 4);
  EXPECT_LT(constant_q, 0.1);  // log1p units; a harmonic's peak is about 3
  EXPECT_GT(stft, 5 * constant_q);
}

TEST(ConstantQBankTest, AlignmentMakesAPitchShiftedVoiceGiveTheSameRow) {
  const std::vector<float> low = Voice(150.0), high = Voice(150.0 * std::exp2(3.0 / 12));
  const std::vector<float> a = Row(Spec(true, true), low), b = Row(Spec(true, true), high);
  const std::vector<float> c = Row(Spec(true), low), d = Row(Spec(true), high);
  double aligned = 0.0, raw = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    aligned = std::max(aligned, double{std::fabs(a[i] - b[i])});
    raw = std::max(raw, double{std::fabs(c[i] - d[i])});
  }
  EXPECT_LT(aligned, 0.15);
  EXPECT_GT(raw, 10 * aligned);
}

TEST(SpectrogramOpsTest, AlignmentIsInvariantToWholeTranslationsInside) {
  const int64_t bins = 40, frames = 7;
  std::vector<float> base(bins * frames, 0.0f);
  for (int64_t k = 12; k < 24; ++k) {
    for (int64_t t = 0; t < frames; ++t)
      base[k * frames + t] = static_cast<float>(1 + (k * 7 + t * 3) % 5);
  }
  std::vector<float> scratch(bins * frames), reference = base;
  AlignFrequencyCentroid(reference.data(), bins, frames, 19.5, scratch.data());
  EXPECT_NEAR(FrequencyCentroid(reference.data(), bins, frames), 19.5, 1e-4);
  for (const int s : {-10, -3, 1, 5, 14}) {
    std::vector<float> moved(bins * frames, 0.0f);
    for (int64_t k = 12; k < 24; ++k) {
      std::copy_n(&base[k * frames], frames, &moved[(k + s) * frames]);
    }
    AlignFrequencyCentroid(moved.data(), bins, frames, 19.5, scratch.data());
    for (size_t i = 0; i < moved.size(); ++i)
      EXPECT_NEAR(moved[i], reference[i], 1e-4) << s << " " << i;
  }
  std::vector<float> zeros(bins * frames, 0.0f);
  AlignFrequencyCentroid(zeros.data(), bins, frames, 19.5, scratch.data());
  EXPECT_EQ(zeros, std::vector<float>(bins * frames, 0.0f));
}

TEST(SpectrogramOpsTest, TheStddevCentroidIgnoresAFixedColouringOfTheBins) {
  const int64_t bins = 30, frames = 9;
  std::vector<float> row(bins * frames, 0.0f);
  for (int64_t k = 8; k < 20; ++k) {
    for (int64_t t = 0; t < frames; ++t) row[k * frames + t] = static_cast<float>((k + 2 * t) % 4);
  }
  std::vector<float> coloured = row;  // a channel adding 0.1·k to bin k of the log spectrogram
  for (int64_t k = 0; k < bins; ++k) {
    for (int64_t t = 0; t < frames; ++t) coloured[k * frames + t] += 0.1f * k;
  }
  const double mean = FrequencyCentroid(row.data(), bins, frames, BinStatistic::kMean);
  const double stddev = FrequencyCentroid(row.data(), bins, frames, BinStatistic::kStddev);
  EXPECT_NEAR(FrequencyCentroid(coloured.data(), bins, frames, BinStatistic::kStddev), stddev,
              1e-5);
  EXPECT_GT(std::fabs(FrequencyCentroid(coloured.data(), bins, frames, BinStatistic::kMean) - mean),
            2.0);
  // A row with no variation over time has no stddev centroid and stays put.
  std::vector<float> flat(bins * frames, 1.0f), scratch(bins * frames);
  AlignFrequencyCentroid(flat.data(), bins, frames, 3.0, scratch.data(), BinStatistic::kStddev);
  EXPECT_EQ(flat, std::vector<float>(bins * frames, 1.0f));
}

// A spoken word at any tempo: n samples whose harmonics of 150 Hz change
// their balance with the fraction of the word said, s = i/n, so the same
// word said slower is the same function of s over more samples.
std::vector<float> Word(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const double s = static_cast<double>(i) / n;
    const double envelope = std::sin(kPi * s);
    double v = 0.0;
    for (int k = 1; k <= 6; ++k) {
      v += (1.0 + std::cos(2 * kPi * s * k / 3.0)) * std::sin(2 * kPi * k * 150.0 * i / 8000.0) / k;
    }
    x[i] = static_cast<float>(0.1 * envelope * v);
  }
  return x;
}

TEST(SpectrogramOpsTest, StretchingMakesATimeScaledRowTheSame) {
  const int64_t bins = 3, frames = 40;
  // Content f(k, τ) over frames [first, last], τ ∈ [0, 1] the fraction.
  const auto row_of = [&](double first, double last) {
    std::vector<float> row(bins * frames, 0.0f);
    for (int64_t k = 0; k < bins; ++k) {
      for (int64_t t = 0; t < frames; ++t) {
        const double tau = (t - first) / (last - first);
        if (tau >= 0 && tau <= 1)
          row[k * frames + t] = static_cast<float>(std::sin(kPi * tau * (k + 1)));
      }
    }
    return row;
  };
  std::vector<float> scratch(bins * frames);
  std::vector<float> reference = row_of(0, frames - 1), untouched = reference;
  StretchFrames(reference.data(), bins, frames, 0, frames - 1, scratch.data());
  EXPECT_EQ(reference, untouched);  // the whole range is the identity, bit for bit
  for (const auto& [first, last] : {std::pair{10.0, 29.0}, {3.0, 33.0}, {12.5, 31.5}}) {
    std::vector<float> row = row_of(first, last);
    double before = 0.0, worst = 0.0;
    for (size_t i = 0; i < row.size(); ++i)
      before = std::max(before, double{std::fabs(row[i] - reference[i])});
    StretchFrames(row.data(), bins, frames, first, last, scratch.data());
    for (size_t i = 0; i < row.size(); ++i)
      worst = std::max(worst, double{std::fabs(row[i] - reference[i])});
    // The interpolation's error, largest where the content starts between
    // two frames; the values reach 1.
    EXPECT_LT(worst, 0.15) << first << " " << last;
    EXPECT_GT(before, 5 * worst) << first << " " << last;
  }
  // Frames outside the row read its edge frames.
  std::vector<float> ramp(frames);
  for (int64_t t = 0; t < frames; ++t) ramp[t] = static_cast<float>(t);
  StretchFrames(ramp.data(), 1, frames, -5.0, frames + 4.0, scratch.data());
  EXPECT_EQ(ramp.front(), 0.0f);
  EXPECT_EQ(ramp.back(), static_cast<float>(frames - 1));
}

// The frames StretchedFrames names are all StretchFrames reads: NaN in
// every other frame changes no output bit, for stretches inside the row,
// past its ends, and with ends on whole frames (where the rounding of u_j
// decides which frame is read, as in the last case).
TEST(SpectrogramOpsTest, StretchReadsOnlyTheFramesStretchedFramesNames) {
  const int64_t bins = 3, frames = 62;
  std::vector<float> row(bins * frames), scratch(bins * frames);
  for (size_t i = 0; i < row.size(); ++i) row[i] = std::sin(0.37 * static_cast<double>(i));
  const std::vector<std::pair<double, double>> stretches = {
      {0.0, 61.0},
      {10.0, 40.0},
      {10.3, 40.7},
      {-3.5, 20.25},
      {30.0, 70.0},
      {0.9999999, 61.0000001},
      {12.0, 13.0},
      {59.5, 61.0},
      {17.0 / 3, 100.0 / 7},
      // first + 61·step rounds up to 55: frames 55 and 56 are read.
      {14.517052028930305, std::nextafter(55.0, 0.0)}};
  for (const auto& [first, last] : stretches) {
    int64_t begin = -1, end = -1;
    StretchedFrames(frames, first, last, &begin, &end);
    ASSERT_GE(begin, 0);
    ASSERT_LE(end, frames);
    ASSERT_LT(begin, end);
    std::vector<float> reference = row, masked = row;
    for (int64_t k = 0; k < bins; ++k) {
      for (int64_t t = 0; t < frames; ++t) {
        if (t < begin || t >= end) masked[k * frames + t] = std::nanf("");
      }
    }
    StretchFrames(reference.data(), bins, frames, first, last, scratch.data());
    StretchFrames(masked.data(), bins, frames, first, last, scratch.data());
    for (size_t i = 0; i < row.size(); ++i) {
      ASSERT_EQ(masked[i], reference[i]) << first << " " << last << " value " << i;
    }
  }
}

TEST(ConstantQBankTest, AlignTimeMakesASlowerWordGiveTheSameRow) {
  // The same word in 0.25 s and in 0.4 s of a 0.5 s clip.
  v1::AudioFrontEnd spec = Spec(true), timed = Spec(true);
  timed.set_align_time(true);
  const std::vector<float> fast = Word(2000), slow = Word(3200);
  const std::vector<float> a = Row(timed, fast), b = Row(timed, slow);
  const std::vector<float> c = Row(spec, fast), d = Row(spec, slow);
  double aligned = 0.0, raw = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    aligned = std::max(aligned, double{std::fabs(a[i] - b[i])});
    raw = std::max(raw, double{std::fabs(c[i] - d[i])});
  }
  EXPECT_LT(aligned, 0.3);  // log1p units; the rows reach about 2
  EXPECT_GT(raw, 4 * aligned);
  // A clip the word fills is left as it is.
  const std::vector<float> full = Word(4000);
  EXPECT_EQ(Row(timed, full), Row(spec, full));
}

TEST(ConstantQBankTest, CompleteFillsTheDefaultsAndNamesTheFields) {
  v1::AudioFrontEnd spec = Spec(true, true);
  spec.clear_bandwidth_octaves();
  auto completed = AudioFrontEnd::Complete(spec);
  ASSERT_TRUE(completed.ok()) << completed.status();
  EXPECT_DOUBLE_EQ(completed->bandwidth_octaves(), 1.0 / 12);
  EXPECT_DOUBLE_EQ(completed->align_bin(), 23.5);

  const auto error = [](v1::AudioFrontEnd s) {
    auto c = AudioFrontEnd::Complete(s);
    return c.ok() ? std::string("ok") : std::string(c.status().message());
  };
  v1::AudioFrontEnd bad = Spec(true);
  bad.set_bandwidth_octaves(-0.1);
  EXPECT_THAT(error(bad), HasSubstr("audio.bandwidth_octaves"));
  bad.set_bandwidth_octaves(1e-5);  // filters far longer than any transform
  EXPECT_THAT(error(bad), HasSubstr("audio.bandwidth_octaves"));
  bad = Spec(false);
  bad.set_bandwidth_octaves(0.2);
  EXPECT_THAT(error(bad), HasSubstr("FILTERBANK_CONSTANT_Q only"));
  bad = Spec(true, true);
  bad.set_align_bin(48);
  EXPECT_THAT(error(bad), HasSubstr("audio.align_bin"));
  bad = Spec(true);
  bad.set_align_bin(3);
  EXPECT_THAT(error(bad), HasSubstr("align_frequency only"));
  bad = Spec(true);
  bad.set_filterbank(static_cast<v1::AudioFrontEnd::Filterbank>(7));
  EXPECT_THAT(error(bad), HasSubstr("audio.filterbank"));
  bad = Spec(true, true);
  bad.set_align_statistic(static_cast<v1::AudioFrontEnd::AlignStatistic>(9));
  EXPECT_THAT(error(bad), HasSubstr("audio.align_statistic"));
  bad = Spec(false);
  bad.set_clip_seconds(0.02);  // 160 samples: one frame
  bad.set_align_time(true);
  EXPECT_THAT(error(bad), HasSubstr("audio.align_time"));
}

}  // namespace
}  // namespace invariant::audio
