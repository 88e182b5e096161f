#include "train/pipeline/clip_certificate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/audio/time_stretch.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "train/data/audio.h"
#include "train/data/audio_augment.h"
#include "train/pipeline/discrepancy.h"

namespace invariant::train {
namespace {

// Clip `index` of the certificate, changed; `what` names it in errors.
using ClipChange = std::function<absl::StatusOr<audio::Clip>(const audio::Clip&, int64_t index,
                                                             const std::string& what)>;

// A curve generator on clips: one change per size.
struct ClipPath {
  std::string generator;
  std::string unit;
  std::vector<double> sizes;
  std::vector<ClipChange> changes;
};

constexpr int kNoiseSnrStepDb = 5;
constexpr int kNoiseTopSnrDb = 30;

// x ↦ later_s(tempo_a(pitch_c(x))) (header).
ClipChange GroupChange(double cents, double tempo, double frames, const v1::AudioFrontEnd& fe) {
  const double hop_seconds = static_cast<double>(fe.hop_length()) / fe.sample_rate();
  return
      [=](const audio::Clip& x, int64_t, const std::string& what) -> absl::StatusOr<audio::Clip> {
        audio::Clip y{x.sample_rate, x.samples};
        if (cents != 0) {
          ASSIGN_OR_RETURN(y.samples, audio::PitchShift(y.samples, y.sample_rate, cents, what));
        }
        if (tempo != 1) {
          ASSIGN_OR_RETURN(y.samples, audio::TimeStretch(y.samples, y.sample_rate, tempo, what));
        }
        const int64_t pad = std::llround(std::fabs(frames) * hop_seconds * y.sample_rate);
        y.samples.insert(frames > 0 ? y.samples.begin() : y.samples.end(), static_cast<size_t>(pad),
                         0.0f);
        return y;
      };
}

double MeanSquare(const std::vector<float>& x) {
  double sum = 0;
  for (float v : x) sum += static_cast<double>(v) * v;
  return x.empty() ? 0 : sum / static_cast<double>(x.size());
}

// White noise at rms ratio `ratio` to the clip over it and
// kTrailingNoiseSeconds after it (header).
ClipChange NoiseChange(double ratio, uint64_t seed) {
  return
      [=](const audio::Clip& x, int64_t index, const std::string&) -> absl::StatusOr<audio::Clip> {
        const double speech = MeanSquare(x.samples);
        if (ratio == 0 || speech == 0) return x;
        const int64_t n = static_cast<int64_t>(x.samples.size()) +
                          std::llround(kTrailingNoiseSeconds * x.sample_rate);
        std::vector<float> noise =
            ColouredNoise(NoiseSource::kWhite, n, x.sample_rate,
                          Rng::ForStream(seed, static_cast<uint64_t>(index)).NextU64());
        const double scale = ratio * std::sqrt(speech / std::max(MeanSquare(noise), 1e-30));
        audio::Clip y{x.sample_rate, std::vector<float>(static_cast<size_t>(n), 0.0f)};
        std::copy(x.samples.begin(), x.samples.end(), y.samples.begin());
        for (int64_t i = 0; i < n; ++i) {
          y.samples[static_cast<size_t>(i)] +=
              static_cast<float>(scale * noise[static_cast<size_t>(i)]);
        }
        return y;
      };
}

std::vector<double> EvenSizes(double reach) {
  std::vector<double> s;
  for (int i = 0; i < kContinuousSizes; ++i) s.push_back(reach * i / (kContinuousSizes - 1));
  return s;
}

// A generator of the law: `make(value)` is the change at that value.
void AddLawPath(std::vector<ClipPath>& paths, const char* name, const char* unit, double reach,
                bool log_factor, const std::function<ClipChange(double)>& make) {
  if (!(reach > 0) || !std::isfinite(reach)) return;
  ClipPath p{name, unit, {}, {}};
  for (double s : EvenSizes(reach)) {
    const double value = log_factor ? std::exp(s) : s;
    p.sizes.push_back(value);
    p.changes.push_back(make(value));
  }
  paths.push_back(std::move(p));
}

std::vector<ClipPath> ClipPaths(const v1::AudioTransformGroup& law, const v1::AudioFrontEnd& fe,
                                uint64_t seed) {
  std::vector<ClipPath> paths;
  AddLawPath(paths, "pitch", "cents", LawReach(law.pitch_cents(), false), false,
             [&](double v) { return GroupChange(v, 1, 0, fe); });
  AddLawPath(paths, "tempo", "factor", LawReach(law.tempo(), true), true,
             [&](double v) { return GroupChange(0, v, 0, fe); });
  AddLawPath(paths, "time_shift", "frames", LawReach(law.time_shift(), false), false,
             [&](double v) { return GroupChange(0, 1, v, fe); });
  ClipPath offset{"offset", "seconds", {}, {}};
  for (double s : EvenSizes(kMaxOffsetSeconds)) {
    offset.sizes.push_back(s);
    offset.changes.push_back(GroupChange(0, 1, s * fe.sample_rate() / fe.hop_length(), fe));
  }
  paths.push_back(std::move(offset));
  ClipPath noise{"noise", "noise/speech rms", {0}, {NoiseChange(0, seed)}};
  for (int snr = kNoiseTopSnrDb; snr >= 0; snr -= kNoiseSnrStepDb) {
    noise.sizes.push_back(std::pow(10.0, -snr / 20.0));
    noise.changes.push_back(NoiseChange(noise.sizes.back(), seed));
  }
  paths.push_back(std::move(noise));
  return paths;
}

// The outputs f(FrontEnd(change(clip))) of every clip (n × k), and how many
// changed clips had no speech found.
struct ClipOutputs {
  std::vector<float> values;
  int64_t no_speech = 0;
};

absl::StatusOr<ClipOutputs> OutputsOf(const VectorMap& f, int64_t k, const audio::AudioFrontEnd& fe,
                                      const std::vector<audio::Clip>& clips,
                                      const ClipChange* change, const std::string& change_name) {
  const int64_t n = static_cast<int64_t>(clips.size());
  const int64_t d = fe.output_dim();
  std::vector<float> rows(static_cast<size_t>(n * d));
  std::vector<absl::Status> status(static_cast<size_t>(n));
  std::atomic<int64_t> no_speech{0};
  ParallelFor(n, [&](int64_t i) {
    const std::string what = absl::StrCat("certificate: held-out clip ", i + 1, change_name);
    const audio::Clip& x = clips[static_cast<size_t>(i)];
    absl::StatusOr<audio::Clip> y = change != nullptr ? (*change)(x, i, what) : x;
    absl::Status& s = status[static_cast<size_t>(i)];
    if (!y.ok()) {
      s = y.status();
      return;
    }
    audio::ClipSpeech speech;
    s = fe.Apply(y->samples, y->sample_rate, rows.data() + i * d, what, &speech);
    if (!speech.found) no_speech.fetch_add(1, std::memory_order_relaxed);
  });
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  ClipOutputs out;
  out.values.resize(static_cast<size_t>(n * k));
  f(n, rows.data(), out.values.data());
  out.no_speech = no_speech.load();
  return out;
}

}  // namespace

absl::StatusOr<std::vector<audio::Clip>> HeldOutClips(const v1::AudioSource& source,
                                                      const DataPlan& plan,
                                                      const audio::AudioFrontEnd& front_end,
                                                      int64_t max_clips) {
  ASSIGN_OR_RETURN(FileParts parts, AudioParts(source, "data.audio"));
  const std::vector<AudioClip>* from = &parts.train;
  std::vector<int64_t> rows;
  const int64_t originals = static_cast<int64_t>(std::min(plan.role.size(), parts.train.size()));
  if (plan.test.rows() > 0 && plan.separate_test) {
    from = &parts.test;
    rows = plan.test_part_rows;
  } else if (!plan.fold.empty()) {
    // k-fold: every original trains, so training ordinal t is row t (the
    // caller may have put fold 1's rows in plan.test).
    for (int64_t t = 0; t < originals; ++t) {
      if (plan.fold[static_cast<size_t>(t)] == 0) rows.push_back(t);
    }
  } else {
    const int8_t role = plan.test.rows() > 0 ? DataPlan::kTest : DataPlan::kValidation;
    for (int64_t r = 0; r < originals; ++r) {
      if (plan.role[static_cast<size_t>(r)] == role) rows.push_back(r);
    }
  }
  if (static_cast<int64_t>(rows.size()) > max_clips) rows.resize(static_cast<size_t>(max_clips));
  if (rows.empty()) {
    return absl::InvalidArgumentError("certificate: the split leaves no held-out clips to check");
  }
  std::vector<audio::Clip> clips(rows.size());
  std::vector<absl::Status> status(rows.size());
  const int64_t max_samples = front_end.MaxSamples(audio::kMaxSampleRate);
  ParallelFor(static_cast<int64_t>(rows.size()), [&](int64_t i) {
    const std::string& path = (*from)[static_cast<size_t>(rows[static_cast<size_t>(i)])].path;
    absl::StatusOr<audio::Clip> clip = audio::ReadWavFile(path, max_samples);
    if (clip.ok()) {
      clips[static_cast<size_t>(i)] = *std::move(clip);
    } else {
      status[static_cast<size_t>(i)] = clip.status();
    }
  });
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  return clips;
}

absl::StatusOr<v1::InvarianceCertificate> CertifyClips(const VectorMap& f, int64_t num_outputs,
                                                       const audio::AudioFrontEnd& front_end,
                                                       const v1::AudioTransformGroup& law,
                                                       const DrawnElements& elements,
                                                       const std::vector<audio::Clip>& clips,
                                                       uint64_t seed) {
  const int64_t n = static_cast<int64_t>(clips.size());
  if (n == 0) return absl::InvalidArgumentError("certificate: no held-out clips to check");
  const int64_t k = num_outputs;
  const v1::AudioFrontEnd& fe = front_end.spec();
  ASSIGN_OR_RETURN(const ClipOutputs base, OutputsOf(f, k, front_end, clips, nullptr, ""));
  int64_t changed = 0, no_speech = 0;
  auto moved = [&](const ClipChange& change, const std::string& name, Discrepancy& d) {
    ASSIGN_OR_RETURN(const ClipOutputs out, OutputsOf(f, k, front_end, clips, &change, name));
    d.Add(out.values.data(), base.values.data(), n * k);
    changed += n;
    no_speech += out.no_speech;
    return absl::OkStatus();
  };
  Discrepancy all;
  for (const GroupElement& g : elements.list) {
    const std::vector<double>& p = g.params;
    RETURN_IF_ERROR(moved(
        GroupChange(p[0], p[1], p[2], fe),
        absl::StrCat(" changed by {", p[0], " cents, tempo ", p[1], ", ", p[2], " frames}"), all));
  }
  v1::InvarianceCertificate c;
  double scale = 0;
  for (float v : base.values) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  const double spread = MeanPairwiseDifference(base.values.data(), n, k);
  SetDiscrepancyFigures(all, scale, spread, c);
  for (const ClipPath& path : ClipPaths(law, fe, seed)) {
    for (size_t i = 0; i < path.sizes.size(); ++i) {
      Discrepancy d;
      RETURN_IF_ERROR(
          moved(path.changes[i],
                absl::StrCat(" at ", path.generator, " ", path.sizes[i], " ", path.unit), d));
      v1::InvarianceCurvePoint& point = *c.add_curve();
      point.set_generator(path.generator);
      point.set_unit(path.unit);
      point.set_magnitude(path.sizes[i]);
      point.set_mean_discrepancy(d.mean());
      point.set_relative_mean_discrepancy(spread > 0 ? d.mean() / spread : 0);
    }
  }
  c.set_num_points(n);
  c.set_num_group_elements(static_cast<int64_t>(elements.list.size()));
  c.set_exhaustive(elements.exhaustive);
  std::string method = absl::StrCat(n, kClipCertificateMethod, elements.method);
  if (base.no_speech + no_speech > 0) {
    absl::StrAppend(&method, "; no speech found in ", base.no_speech, " of the ", n, " clips and ",
                    no_speech, " of the ", changed, " changed ones (scored on their whole rows)");
  }
  c.set_method(std::move(method));
  return c;
}

}  // namespace invariant::train
