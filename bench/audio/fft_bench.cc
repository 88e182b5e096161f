// invariant-bench-fft: the FFT libraries of core/audio against each other in
// one run (core/audio/fft_backends.h), KissFFT (the default) and FFTW
// (opt-in, -DINVARIANT_FFT=FFTW), as the ratio KissFFT time / FFTW time
// printed after Google Benchmark's table (above 1: KissFFT is slower).
// Times are the process's CPU time per iteration (every thread's, the
// front end's pool included): the work a clip costs, which a busy shared
// machine disturbs far less than the wall-clock time (also in the table).
//
// Benchmarks, each named NAME/LIBRARY/ARG (LIBRARY kissfft or fftw):
//   real_fft/N              one RealForwardFft::Execute of N points: 128 and
//                           256 (STFT frames), 9216 (the shipped constant-Q
//                           bank's transform of a 1 s clip at 8 kHz)
//   complex_inverse_fft/N   one ComplexInverseFft::Execute: 576 (the bank's
//                           per-band inverse, M = 9216 / 16) and 9216
//   clip_ffts/8000          the FFTs of one shipped clip: one real 9216 and
//                           64 inverse 576-point transforms, on the calling
//                           thread
//   front_end/RATE          AudioFrontEnd::Apply of the shipped front end
//                           (train/configs/spoken_digits.textproto: 8 kHz,
//                           1 s, constant-Q, 64 bins, both alignments; its
//                           bands on the default pool, as the server runs
//                           it) on 1 s speech-like clips at RATE Hz (16 kHz
//                           clips are resampled first)
//   front_end_stft/8000     the same front end with the STFT and its
//                           triangles in place of the constant-Q bank
//
// Run (both libraries are built when libfftw3-dev is installed) with
// repetitions interleaved at random, so that a noisy neighbour slows both
// libraries alike; the ratios then use the medians (and, in a last column,
// the minima). --threads=N sizes the default pool (1: every band on the
// calling thread):
//   build/bin/invariant-bench-fft --threads=1 --benchmark_repetitions=9
//     --benchmark_enable_random_interleaving=true
#include <unistd.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/audio/speech_like_clip.h"
#include "benchmark/benchmark.h"
#include "core/audio/fft_backends.h"
#include "core/base/thread_pool.h"
#include "google/protobuf/text_format.h"
#include "invariant/v1/train_config.pb.h"

namespace invariant {
namespace {

using audio::FftBuffer;
using audio::backends::Backend;

constexpr int kClips = 16;
constexpr int kShippedBands = 64, kShippedN = 9216, kShippedM = 576;

template <typename T>
T OrDie(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "invariant-bench-fft: %s\n", value.status().ToString().c_str());
    std::abort();
  }
  return *std::move(value);
}

v1::AudioFrontEnd ShippedFrontEnd() {
  const std::string path =
      std::string(INVARIANT_SOURCE_DIR) + "/train/configs/spoken_digits.textproto";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  v1::TrainConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(text.str(), &config)) {
    std::fprintf(stderr, "invariant-bench-fft: cannot read %s\n", path.c_str());
    std::abort();
  }
  return config.data().audio().front_end();
}

v1::AudioFrontEnd StftFrontEnd() {
  v1::AudioFrontEnd spec = ShippedFrontEnd();
  spec.set_filterbank(v1::AudioFrontEnd::FILTERBANK_STFT);
  spec.clear_bandwidth_octaves();
  spec.set_align_frequency(false);
  spec.clear_align_bin();
  spec.set_align_time(false);
  return spec;
}

void RealFft(benchmark::State& state, const Backend& b, int n) {
  const Backend::RealForward fft = OrDie(b.real_forward(n));
  FftBuffer<float> x(static_cast<size_t>(n));
  FftBuffer<std::complex<float>> y(static_cast<size_t>(n / 2 + 1));
  const std::vector<float> clip = bench_audio::SpeechLikeClip(n, 1);
  std::copy(clip.begin(), clip.end(), x.data());
  for (auto _ : state) {
    fft(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

void ComplexInverseFft(benchmark::State& state, const Backend& b, int n) {
  const Backend::ComplexInverse fft = OrDie(b.complex_inverse(n));
  FftBuffer<std::complex<float>> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  const std::vector<float> clip = bench_audio::SpeechLikeClip(2 * n, 2);
  for (int i = 0; i < n; ++i) x[i] = {clip[2 * i], clip[2 * i + 1]};
  for (auto _ : state) {
    fft(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

// One shipped clip's FFTs: the forward transform, then one inverse per band.
void ClipFfts(benchmark::State& state, const Backend& b) {
  const Backend::RealForward forward = OrDie(b.real_forward(kShippedN));
  const Backend::ComplexInverse inverse = OrDie(b.complex_inverse(kShippedM));
  FftBuffer<float> x(kShippedN);
  FftBuffer<std::complex<float>> spectrum(kShippedN / 2 + 1), folded(kShippedM), y(kShippedM);
  const std::vector<float> clip = bench_audio::SpeechLikeClip(8000, 3);
  std::copy(clip.begin(), clip.end(), x.data());
  forward(x.data(), spectrum.data());
  std::copy_n(spectrum.data(), kShippedM, folded.data());  // stands for a band's folded support
  for (auto _ : state) {
    forward(x.data(), spectrum.data());
    for (int k = 0; k < kShippedBands; ++k) {
      inverse(folded.data(), y.data());
      benchmark::DoNotOptimize(y.data());
    }
    benchmark::ClobberMemory();
  }
}

void FrontEnd(benchmark::State& state, const Backend& b, const v1::AudioFrontEnd& spec, int rate) {
  const audio::backends::FrontEnd front = OrDie(b.front_end(spec));
  std::vector<std::vector<float>> clips;
  for (int i = 0; i < kClips; ++i) clips.push_back(bench_audio::SpeechLikeClip(rate, 100 + i));
  std::vector<float> row(static_cast<size_t>(front.output_dim));
  size_t i = 0;
  for (auto _ : state) {
    if (!front.apply(clips[i++ % clips.size()], rate, row.data()).ok()) std::abort();
    benchmark::DoNotOptimize(row.data());
    benchmark::ClobberMemory();
  }
}

// Every benchmark for both libraries, named NAME/LIBRARY/ARG.
void RegisterAll(const std::vector<std::pair<std::string, Backend>>& libraries) {
  const v1::AudioFrontEnd shipped = ShippedFrontEnd(), stft = StftFrontEnd();
  for (const auto& [name, b] : libraries) {
    auto add = [&, name = name](const std::string& what, int arg, auto run) {
      benchmark::RegisterBenchmark((what + "/" + name + "/" + std::to_string(arg)).c_str(), run)
          ->Unit(benchmark::kMicrosecond)
          ->MeasureProcessCPUTime()
          ->ComputeStatistics("min", [](const std::vector<double>& v) {
            return *std::min_element(v.begin(), v.end());
          });
    };
    for (int n : {128, 256, kShippedN}) {
      add("real_fft", n, [b = b, n](benchmark::State& s) { RealFft(s, b, n); });
    }
    for (int n : {kShippedM, kShippedN}) {
      add("complex_inverse_fft", n,
          [b = b, n](benchmark::State& s) { ComplexInverseFft(s, b, n); });
    }
    add("clip_ffts", 8000, [b = b](benchmark::State& s) { ClipFfts(s, b); });
    for (int rate : {8000, 16000}) {
      add("front_end", rate,
          [b = b, shipped, rate](benchmark::State& s) { FrontEnd(s, b, shipped, rate); });
    }
    add("front_end_stft", 8000, [b = b, stft](benchmark::State& s) { FrontEnd(s, b, stft, 8000); });
  }
}

// Google Benchmark's console table (coloured on a terminal), keeping each
// benchmark's CPU time per iteration: its one run's, or with repetitions
// their median and their minimum (the run a busy machine disturbed least).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  struct Times {
    double median = 0, min = 0;
  };
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_None) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      Times& t = times_[run.run_name.function_name];
      const double cpu = run.GetAdjustedCPUTime();
      if (run.run_type == Run::RT_Iteration && run.repetitions <= 1) t = {cpu, cpu};
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") t.median = cpu;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "min") t.min = cpu;
    }
  }
  const std::map<std::string, Times>& times() const { return times_; }

 private:
  std::map<std::string, Times> times_;  // NAME/LIBRARY/ARG → CPU µs per iteration
};

// NAME/ARG: KissFFT's and FFTW's median times, their ratio, the ratio of the minima.
void PrintRatios(const std::map<std::string, RatioReporter::Times>& times) {
  std::printf("\nCPU time per iteration (median of the repetitions)\n");
  std::printf("%-26s %13s %13s %15s %15s\n", "benchmark", "KissFFT (us)", "FFTW (us)",
              "KissFFT / FFTW", "(of the minima)");
  for (const auto& [name, kiss] : times) {
    const size_t slash = name.find("/kissfft/");
    if (slash == std::string::npos) continue;
    const std::string what = name.substr(0, slash), arg = name.substr(slash + 9);
    const auto fftw = times.find(what + "/fftw/" + arg);
    if (fftw == times.end()) continue;
    std::printf("%-26s %13.2f %13.2f %14.2fx %14.2fx\n", (what + "/" + arg).c_str(), kiss.median,
                fftw->second.median, kiss.median / fftw->second.median,
                kiss.min / fftw->second.min);
  }
}

// Takes --threads=N (the default pool's size) out of argv.
void TakeThreadsFlag(int* argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--threads=", 0) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    const absl::Status status = SetDefaultThreadCount(std::atoi(arg.c_str() + 10));
    if (!status.ok()) {
      std::fprintf(stderr, "invariant-bench-fft: %s\n", status.ToString().c_str());
      std::exit(2);
    }
  }
  *argc = kept;
}

}  // namespace
}  // namespace invariant

int main(int argc, char** argv) {
  namespace backends = invariant::audio::backends;
  const backends::Backend kiss = backends::kissfft::Get(), fftw = backends::fftw::Get();
  std::printf("FFT libraries: %s, %s\n", kiss.library.c_str(), fftw.library.c_str());
  invariant::RegisterAll({{"kissfft", kiss}, {"fftw", fftw}});
  invariant::TakeThreadsFlag(&argc, argv);
  std::printf("Default pool: %d threads\n", invariant::DefaultThreadCount());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  invariant::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  invariant::PrintRatios(reporter.times());
  benchmark::Shutdown();
  return 0;
}
