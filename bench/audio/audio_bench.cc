// invariant-bench-audio: the cost of a model of sound, as ratios against
// the bare work of the same shapes measured in the same run.
//
// Clips: 1 s, seeded and speech-like (a gliding voiced tone with formant-
// weighted harmonics between faint noise, so trimming has work to do), at
// 8 kHz (the model's rate) and 16 kHz (resampled by the front end).
// The model has the shipped spoken-digit shape
// (train/configs/spoken_digits.textproto): front end 8 kHz, 1 s, trim,
// peak, 128 / 128 frames, 64 constant-Q bins (1/12 octave) from 100 Hz at
// 12 per octave, tempo and pitch alignment, per-bin mean removal,
// compression gain 10 → rows of 64 × 62 = 3968 values, read as a
// 64 × 62 × 1 image; no preprocess; the patch encoder: 32 × 8 patches,
// 4 rows of zeros above and below, stride 2 (21 frequency × 28 time
// positions = 588 patches of 256 values), normalize_patches, 384 templates
// whitened and folded into the bank (one bias each), soft-threshold
// responses, pool_rows 2 × pool_cols 4 (6144 features); a 10-class head.
// The bank is drawn through the patch kind's descriptor as invariant-train
// draws it, from the bench's own front-end rows, with fewer statistics
// patches (4096) and one k-means iteration (the shipped config: 100,000 and
// 10; speed does not depend on the values); the head is seeded random;
// assembled by Model::Assemble as a bundle is.
//
// Benchmarks (each reports clips_per_second; audio_table.py prints ratios):
//   BM_KissFft              62 KissFFT 128-point real FFTs of windowed frames
//   BM_FftFilterBank        window + FFT + |·| + the triangular filter bank
//                           (the front_end.h weights, rebuilt here) for the
//                           62 frames: the reference of the front end
//   BM_FrontEnd/RATE        AudioFrontEnd::Apply on one clip (the shipped
//                           front end: the constant-Q bank and the alignments)
//   BM_FrontEndStft/RATE    the same with the STFT and its triangles in place
//                           of the constant-Q bank, without the alignments (the
//                           front end of the models before it)
//   BM_Sgemm/N              cblas_sgemm (588·N) × 256 times 256 × 384 (the
//                           N clips' normalised patches times the bank),
//                           OpenBLAS with the pool's threads: the GEMM the
//                           encoder does
//   BM_SgemmOneThread/N     the same on one OpenBLAS thread
//   BM_FftCorrelation/N     the same responses through KissFFT
//                           (fft_correlation.h): per clip the 2-D real FFT of
//                           the 64 × 62 plane, then per template a pointwise
//                           product with
//                           its precomputed spectrum and an inverse 2-D FFT
//                           (the full correlation map of the padded plane,
//                           3.8× the positions the encoder pools at
//                           stride 2);
//                           (clip, 64-template block) tasks on the pool
//   BM_FftCorrelationOneThread/N  the same on the calling thread
//   BM_Encoder/N            Model::Featurize of N rows (patches extracted and
//                           normalised, the products, thresholds, pooling)
//   BM_FeatureMap/RATE/N    N clips → features: the front end per clip
//                           called from the calling thread, its bands on the
//                           pool (as the server's handler does), then
//                           Featurize of the N rows
//   BM_Predict/RATE/N       the same, then the head (what a Predict serves)
#include <cblas.h>
#include <kiss_fftr.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/audio/fft_correlation.h"
#include "bench/audio/speech_like_clip.h"
#include "benchmark/benchmark.h"
#include "core/audio/front_end.h"
#include "core/audio/voice_activity.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "core/encoders/patch_encoder.h"
#include "core/encoders/templates.h"
#include "core/model/bank_tensors.h"
#include "core/model/encoder_kinds.h"
#include "core/model/model.h"
#include "core/model/patch_kind.h"

namespace invariant {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kModelRate = 8000;
constexpr int kMaxBatch = 64;
constexpr int kClasses = 10;
// The shipped encoder (train/configs/spoken_digits.textproto).
constexpr int kPatchHeight = 32, kPatchWidth = 8, kPadRows = 4, kStride = 2;
constexpr int kTemplates = 384;
constexpr int kPoolRows = 2, kPoolCols = 4;
constexpr int kFftTemplateBlock = 64;  // templates per BM_FftCorrelation task

v1::AudioFrontEnd ShippedFrontEnd() {
  v1::AudioFrontEnd a;
  a.set_sample_rate(kModelRate);
  a.set_clip_seconds(1.0);
  a.set_clip_policy(v1::AudioFrontEnd::CLIP_POLICY_CENTRE);
  a.set_trim_silence(true);
  a.set_normalisation(v1::AudioFrontEnd::NORMALISATION_PEAK);
  a.set_frame_length(128);
  a.set_hop_length(128);
  a.set_min_frequency(100);
  a.set_bins_per_octave(12);
  a.set_frequency_bins(64);
  a.set_subtract_frequency_mean(true);
  a.set_compression_gain(10);
  a.set_max_clip_seconds(10);
  a.set_filterbank(v1::AudioFrontEnd::FILTERBANK_CONSTANT_Q);
  a.set_bandwidth_octaves(0.0833);
  a.set_align_frequency(true);
  a.set_align_time(true);
  a.mutable_voice_activity()->set_enabled(true);
  return *audio::AudioFrontEnd::Complete(a);
}

// The triangular filter bank of front_end.h (sparse: per output bin, its
// FFT bins and weights, normalised to unit sum).
struct FilterBank {
  std::vector<int> starts{0}, fft_bins;
  std::vector<float> weights;
};

FilterBank MakeFilterBank(const v1::AudioFrontEnd& s) {
  FilterBank bank;
  const double df = static_cast<double>(s.sample_rate()) / s.fft_length();
  const double step = std::exp2(1.0 / s.bins_per_octave());
  for (int k = 0; k < s.frequency_bins(); ++k) {
    const double c = s.min_frequency() * std::exp2(k / s.bins_per_octave());
    const double below = std::max(c - c / step, df), above = std::max(c * step - c, df);
    const int first = std::max(0, static_cast<int>(std::ceil((c - below) / df)));
    const int last = std::min(s.fft_length() / 2, static_cast<int>(std::floor((c + above) / df)));
    std::vector<double> w;
    double sum = 0;
    for (int j = first; j <= last; ++j) {
      const double f = j * df;
      const double weight = f <= c ? 1.0 - (c - f) / below : 1.0 - (f - c) / above;
      if (weight <= 0.0) continue;
      bank.fft_bins.push_back(j);
      w.push_back(weight);
      sum += weight;
    }
    for (double weight : w) bank.weights.push_back(static_cast<float>(weight / sum));
    bank.starts.push_back(static_cast<int>(bank.weights.size()));
  }
  return bank;
}

struct Setup {
  v1::AudioFrontEnd spec;
  std::shared_ptr<const Model> model;
  PatchGeometry geometry;
  std::map<int, std::vector<std::vector<float>>> clips;  // rate → kMaxBatch clips
  FloatMatrix rows;                                      // kMaxBatch front-end rows (8 kHz)
  FloatMatrix patches;  // (kMaxBatch·positions) × patch_dim, normalised, for BM_Sgemm
  std::unique_ptr<bench_audio::FftCorrelation> fft;  // over the model's bank
  FilterBank filter_bank;
};

// The model of the shipped shape, drawn through the patch kind's descriptor
// from `rows` and assembled as a bundle is loaded.
std::shared_ptr<const Model> MakeModel(const v1::AudioFrontEnd& front_end,
                                       const FloatMatrix& rows) {
  const int64_t bins = front_end.frequency_bins(), frames = front_end.frames();
  const int64_t d = bins * frames;
  v1::Manifest manifest;
  manifest.set_format_version(1);
  manifest.set_model_name("spoken_digits_patch");
  manifest.set_version(1);
  manifest.set_input_dim(d);
  *manifest.mutable_audio() = front_end;
  v1::EncoderSpec& e = *manifest.mutable_encoder();
  e.set_seed(11);
  for (int64_t v : {bins, frames, int64_t{1}}) e.add_input_shape(v);
  v1::PatchParams& p = *e.mutable_patch();
  p.set_patch_height(kPatchHeight);
  p.set_patch_width(kPatchWidth);
  p.set_pad_rows(kPadRows);
  p.set_stride(kStride);
  p.set_num_templates(kTemplates);
  p.set_num_group_elements(1);
  p.set_response(v1::PatchParams::RESPONSE_THRESHOLD);
  p.set_pool_rows(kPoolRows);
  p.set_pool_cols(kPoolCols);
  p.set_whiten(true);
  p.set_normalize_patches(true);
  p.set_kmeans_iterations(1);      // shipped: 10
  p.set_statistics_patches(4096);  // shipped: the default 100,000
  e.mutable_group()->mutable_identity()->set_dim(kPatchHeight * kPatchWidth);

  const EncoderKind* kind = *FindEncoderKind(e, "encoder");
  ModelTensors tensors;
  EncoderTrainingData data;
  data.input_dim = d;
  data.train_rows = rows.rows();
  data.draw_rows = [&rows, d](int64_t m, uint64_t) -> absl::StatusOr<FloatMatrix> {
    FloatMatrix x = FloatMatrix::Zeros(m, d);
    for (int64_t i = 0; i < m; ++i) std::copy_n(rows.row(i % rows.rows()), d, x.mutable_row(i));
    return x;
  };
  if (absl::Status s = kind->validate_config(e); !s.ok()) std::abort();
  if (absl::Status s = kind->draw(e, data, tensors); !s.ok()) std::abort();
  const int64_t features = int64_t{kPoolRows} * kPoolCols * 2 * kTemplates;
  manifest.set_feature_dim(features);
  v1::LinearHead& head = *manifest.mutable_head();
  head.set_task(v1::TASK_CLASSIFICATION);
  for (int c = 0; c < kClasses; ++c) head.add_class_names(std::to_string(c));
  Rng rng(3);
  tensors.f32[kHeadWeightsTensor] = *SampleGaussianTemplates(features, kClasses, 1.0, rng);
  tensors.f32[kHeadBiasTensor] = FloatMatrix::Zeros(1, kClasses);
  absl::StatusOr<std::shared_ptr<const Model>> model =
      Model::Assemble(std::move(manifest), std::move(tensors));
  if (!model.ok()) std::abort();
  return *model;
}

const Setup& GetSetup() {
  static const Setup* setup = [] {
    auto* s = new Setup();
    s->spec = ShippedFrontEnd();
    for (int rate : {8000, 16000}) {
      for (int i = 0; i < kMaxBatch; ++i)
        s->clips[rate].push_back(bench_audio::SpeechLikeClip(rate, 100 + i));
    }
    std::unique_ptr<const audio::AudioFrontEnd> front = *audio::AudioFrontEnd::Create(s->spec);
    const int64_t d = front->output_dim();
    s->rows = FloatMatrix::Zeros(kMaxBatch, d);
    for (int i = 0; i < kMaxBatch; ++i) {
      if (!front->Apply(s->clips[kModelRate][i], kModelRate, s->rows.mutable_row(i), "clip").ok()) {
        std::abort();
      }
    }
    s->model = MakeModel(s->spec, s->rows);
    const PatchOptions options = *PatchOptionsOf(s->model->manifest().encoder(), d);
    s->geometry = options.geometry;
    const PatchGeometry& g = s->geometry;
    const int64_t positions = g.num_positions(), pd = g.patch_dim();
    s->patches = FloatMatrix::Zeros(kMaxBatch * positions, pd);
    for (int64_t i = 0; i < kMaxBatch; ++i) {
      float* dst = s->patches.mutable_row(i * positions);
      ExtractPatches(g, s->rows.row(i), dst);
      for (int64_t q = 0; q < positions; ++q) {
        NormalizePatch(pd, options.contrast_epsilon, dst + q * pd);
      }
    }
    const FloatMatrix& bank = s->model->tensors().f32.at(kBankTensor);  // m × k_h·k_w
    s->fft = std::make_unique<bench_audio::FftCorrelation>(g.height, g.width, g.pad_rows,
                                                           g.pad_cols, g.patch_height,
                                                           g.patch_width, bank.rows(), bank.data());
    s->filter_bank = MakeFilterBank(s->spec);
    return s;
  }();
  return *setup;
}

void ReportClips(benchmark::State& state, int64_t clips) {
  state.counters["clips_per_second"] =
      benchmark::Counter(static_cast<double>(clips), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(DefaultThreadCount());
}

struct FftFree {
  void operator()(kiss_fftr_cfg cfg) const { kiss_fftr_free(cfg); }
};

void BM_KissFft(benchmark::State& state) {
  const Setup& s = GetSetup();
  const int length = s.spec.frame_length(), hop = s.spec.hop_length();
  const int64_t frames = s.spec.frames();
  std::unique_ptr<kiss_fftr_state, FftFree> fft(
      kiss_fftr_alloc(s.spec.fft_length(), 0, nullptr, nullptr));
  std::vector<float> windowed(static_cast<size_t>(frames * s.spec.fft_length()), 0.0f);
  const std::vector<float>& clip = s.clips.at(kModelRate)[0];
  for (int64_t t = 0; t < frames; ++t) {
    for (int i = 0; i < length; ++i) {
      windowed[t * s.spec.fft_length() + i] =
          clip[t * hop + i] * static_cast<float>(0.5 - 0.5 * std::cos(2 * kPi * i / length));
    }
  }
  std::vector<kiss_fft_cpx> spectrum(static_cast<size_t>(frames * (s.spec.fft_length() / 2 + 1)));
  for (auto _ : state) {
    for (int64_t t = 0; t < frames; ++t) {
      kiss_fftr(fft.get(), windowed.data() + t * s.spec.fft_length(),
                spectrum.data() + t * (s.spec.fft_length() / 2 + 1));
    }
    benchmark::DoNotOptimize(spectrum.data());
    benchmark::ClobberMemory();
  }
  ReportClips(state, 1);
}

void BM_FftFilterBank(benchmark::State& state) {
  const Setup& s = GetSetup();
  const int length = s.spec.frame_length(), hop = s.spec.hop_length();
  const int fft_length = s.spec.fft_length(), spectrum_bins = fft_length / 2 + 1;
  const int64_t frames = s.spec.frames(), bins = s.spec.frequency_bins();
  std::unique_ptr<kiss_fftr_state, FftFree> fft(kiss_fftr_alloc(fft_length, 0, nullptr, nullptr));
  std::vector<float> window(static_cast<size_t>(length));
  for (int i = 0; i < length; ++i) window[i] = 0.5f - 0.5f * std::cos(2 * kPi * i / length);
  std::vector<float> frame(static_cast<size_t>(fft_length), 0.0f), magnitude(spectrum_bins);
  std::vector<kiss_fft_cpx> spectrum(static_cast<size_t>(spectrum_bins));
  std::vector<float> row(static_cast<size_t>(bins * frames));
  const std::vector<float>& clip = s.clips.at(kModelRate)[0];
  const FilterBank& fb = s.filter_bank;
  for (auto _ : state) {
    for (int64_t t = 0; t < frames; ++t) {
      for (int i = 0; i < length; ++i) frame[i] = clip[t * hop + i] * window[i];
      kiss_fftr(fft.get(), frame.data(), spectrum.data());
      for (int j = 0; j < spectrum_bins; ++j) {
        magnitude[j] = std::sqrt(spectrum[j].r * spectrum[j].r + spectrum[j].i * spectrum[j].i);
      }
      for (int64_t k = 0; k < bins; ++k) {
        float v = 0.0f;
        for (int i = fb.starts[k]; i < fb.starts[k + 1]; ++i) {
          v += fb.weights[i] * magnitude[fb.fft_bins[i]];
        }
        row[k * frames + t] = v;
      }
    }
    benchmark::DoNotOptimize(row.data());
    benchmark::ClobberMemory();
  }
  ReportClips(state, 1);
}

void RunFrontEnd(benchmark::State& state, const audio::AudioFrontEnd& front) {
  const Setup& s = GetSetup();
  const int rate = static_cast<int>(state.range(0));
  std::vector<float> row(static_cast<size_t>(front.output_dim()));
  const std::vector<std::vector<float>>& clips = s.clips.at(rate);
  size_t i = 0;
  for (auto _ : state) {
    if (!front.Apply(clips[i++ % clips.size()], rate, row.data(), "clip").ok()) std::abort();
    benchmark::DoNotOptimize(row.data());
    benchmark::ClobberMemory();
  }
  ReportClips(state, 1);
}

void BM_FrontEnd(benchmark::State& state) {
  RunFrontEnd(state, *GetSetup().model->audio_front_end());
}

// A 3 s recording as people make them: the speech-like clip at 0.7 s in
// white noise 20 dB under it, at the model's rate.
const std::vector<float>& Recording3s() {
  static const std::vector<float>* x = [] {
    const std::vector<float> word = bench_audio::SpeechLikeClip(kModelRate, 3);
    double power = 0;
    for (const float v : word) power += double{v} * v;
    power /= static_cast<double>(word.size());
    Rng rng(4);
    auto* out = new std::vector<float>(3 * kModelRate);
    for (float& v : *out) v = static_cast<float>(std::sqrt(power / 100) * rng.Normal());
    for (size_t i = 0; i < word.size(); ++i) (*out)[i + kModelRate * 7 / 10] += word[i];
    return out;
  }();
  return *x;
}

// The shipped front end (voice activity on) over 3 s recordings; the
// clips_per_second × 3 is the real-time factor on the threads.
void BM_FrontEndRecording3s(benchmark::State& state) {
  const audio::AudioFrontEnd& front = *GetSetup().model->audio_front_end();
  std::vector<float> row(static_cast<size_t>(front.output_dim()));
  for (auto _ : state) {
    if (!front.Apply(Recording3s(), kModelRate, row.data(), "clip").ok()) std::abort();
    benchmark::DoNotOptimize(row.data());
  }
  ReportClips(state, 1);
}

// The voice-activity stage alone on the same recordings: its share of the above.
void BM_VoiceActivity3s(benchmark::State& state) {
  const v1::VoiceActivity& spec = GetSetup().model->audio_front_end()->spec().voice_activity();
  for (auto _ : state) {
    benchmark::DoNotOptimize(audio::FindSpeech(Recording3s(), kModelRate, spec));
  }
  ReportClips(state, 1);
}

void BM_FrontEndStft(benchmark::State& state) {
  static const audio::AudioFrontEnd* front = [] {
    v1::AudioFrontEnd spec = ShippedFrontEnd();
    spec.set_filterbank(v1::AudioFrontEnd::FILTERBANK_STFT);
    spec.clear_bandwidth_octaves();
    spec.set_align_frequency(false);
    spec.clear_align_bin();
    spec.set_align_time(false);
    return audio::AudioFrontEnd::Create(spec)->release();
  }();
  RunFrontEnd(state, *front);
}

void RunSgemm(benchmark::State& state, int threads) {
  const Setup& s = GetSetup();
  const int64_t batch = state.range(0);
  const int64_t m = batch * s.geometry.num_positions(), d = s.geometry.patch_dim();
  const FloatMatrix& bank = s.model->tensors().f32.at(kBankTensor);  // templates × d
  const int64_t n = bank.rows();
  openblas_set_num_threads(threads);
  std::vector<float> p(static_cast<size_t>(m * n));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(d), 1.0f, s.patches.data(),
                static_cast<blasint>(d), bank.data(), static_cast<blasint>(d), 0.0f, p.data(),
                static_cast<blasint>(n));
    benchmark::DoNotOptimize(p.data());
    benchmark::ClobberMemory();
  }
  ReportClips(state, batch);
  state.counters["threads"] = static_cast<double>(openblas_get_num_threads());
  state.SetLabel(openblas_get_corename());
  openblas_set_num_threads(DefaultThreadCount());
}

void BM_Sgemm(benchmark::State& state) { RunSgemm(state, DefaultThreadCount()); }
void BM_SgemmOneThread(benchmark::State& state) { RunSgemm(state, 1); }

// A thread's KissFFT workspace and correlation maps (kFftTemplateBlock
// templates × positions) for the bench's one FftCorrelation.
struct FftScratch {
  std::unique_ptr<bench_audio::FftCorrelation::Workspace> ws;
  std::vector<float> maps;
};

FftScratch& LocalFftScratch(const bench_audio::FftCorrelation& fft) {
  thread_local FftScratch scratch;
  if (!scratch.ws) {
    scratch.ws = fft.NewWorkspace();
    scratch.maps.resize(static_cast<size_t>(kFftTemplateBlock * fft.num_positions()));
  }
  return scratch;
}

// N rows: the spectrum of each padded plane, then every template's
// correlation map, in (clip, template block) tasks on the pool or serially.
void RunFftCorrelation(benchmark::State& state, bool pool) {
  const Setup& s = GetSetup();
  const bench_audio::FftCorrelation& fft = *s.fft;
  const int64_t batch = state.range(0), d = s.rows.cols();
  const int64_t blocks = (fft.num_templates() + kFftTemplateBlock - 1) / kFftTemplateBlock;
  std::vector<kiss_fft_cpx> spectra(static_cast<size_t>(batch * fft.spectrum_size()));
  auto forward = [&](int64_t i) {
    fft.Forward(*LocalFftScratch(fft).ws, s.rows.row(i), spectra.data() + i * fft.spectrum_size());
  };
  auto correlate = [&](int64_t task) {
    const int64_t i = task / blocks, j0 = (task % blocks) * kFftTemplateBlock;
    const int64_t j1 = std::min<int64_t>(fft.num_templates(), j0 + kFftTemplateBlock);
    FftScratch& scratch = LocalFftScratch(fft);
    fft.Correlate(*scratch.ws, spectra.data() + i * fft.spectrum_size(), j0, j1,
                  scratch.maps.data());
    benchmark::DoNotOptimize(scratch.maps.data());
  };
  for (auto _ : state) {
    if (pool) {
      ParallelFor(batch, forward);
      ParallelFor(batch * blocks, correlate);
    } else {
      for (int64_t i = 0; i < batch; ++i) forward(i);
      for (int64_t t = 0; t < batch * blocks; ++t) correlate(t);
    }
    benchmark::ClobberMemory();
  }
  ReportClips(state, batch);
  state.counters["threads"] = pool ? static_cast<double>(DefaultThreadCount()) : 1.0;
  state.SetLabel("fft " + std::to_string(fft.fft_rows()) + "x" + std::to_string(fft.fft_cols()) +
                 ", d " + std::to_string(d));
}

void BM_FftCorrelation(benchmark::State& state) { RunFftCorrelation(state, true); }
void BM_FftCorrelationOneThread(benchmark::State& state) { RunFftCorrelation(state, false); }

void BM_Encoder(benchmark::State& state) {
  const Setup& s = GetSetup();
  const int64_t batch = state.range(0);
  std::vector<float> features(static_cast<size_t>(batch * s.model->feature_dim()));
  for (auto _ : state) {
    s.model->Featurize(batch, s.rows.data(), features.data());
    benchmark::DoNotOptimize(features.data());
    benchmark::ClobberMemory();
  }
  ReportClips(state, batch);
}

// N clips at `rate` → rows (front end, serially) → features, and with
// `predict` → scores.
void RunClips(benchmark::State& state, bool predict) {
  const Setup& s = GetSetup();
  const int rate = static_cast<int>(state.range(0));
  const int64_t batch = state.range(1);
  const audio::AudioFrontEnd& front = *s.model->audio_front_end();
  const int64_t d = front.output_dim();
  std::vector<float> rows(static_cast<size_t>(batch * d));
  std::vector<float> out(
      static_cast<size_t>(batch * (predict ? s.model->output_dim() : s.model->feature_dim())));
  const std::vector<std::vector<float>>& clips = s.clips.at(rate);
  for (auto _ : state) {
    for (int64_t i = 0; i < batch; ++i) {
      if (!front.Apply(clips[static_cast<size_t>(i)], rate, rows.data() + i * d, "clip").ok()) {
        std::abort();
      }
    }
    if (predict) {
      s.model->Predict(batch, rows.data(), out.data());
    } else {
      s.model->Featurize(batch, rows.data(), out.data());
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  ReportClips(state, batch);
}

void BM_FeatureMap(benchmark::State& state) { RunClips(state, false); }
void BM_Predict(benchmark::State& state) { RunClips(state, true); }

void Batches(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Arg(8)->Arg(kMaxBatch)->Unit(benchmark::kMillisecond)->UseRealTime();
}
void ClipBatches(benchmark::internal::Benchmark* b) {
  b->Args({8000, 1})->Args({8000, 8})->Args({8000, kMaxBatch})->Args({16000, 1});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_KissFft)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_FftFilterBank)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_FrontEndStft)->Arg(8000)->Arg(16000)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_FrontEnd)->Arg(8000)->Arg(16000)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_FrontEndRecording3s)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_VoiceActivity3s)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Sgemm)->Apply(Batches);
BENCHMARK(BM_SgemmOneThread)->Apply(Batches);
BENCHMARK(BM_FftCorrelation)->Apply(Batches);
BENCHMARK(BM_FftCorrelationOneThread)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Encoder)->Apply(Batches);
BENCHMARK(BM_FeatureMap)->Apply(ClipBatches);
BENCHMARK(BM_Predict)
    ->Args({8000, 1})
    ->Args({8000, 8})
    ->Args({8000, kMaxBatch})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace invariant

BENCHMARK_MAIN();
