#include "core/groups/audio_transform.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/groups/snap.h"

namespace invariant {
namespace {

// The two linear-interpolation taps of one output row or column: source
// indices (−1 when outside [0, size) or of weight 0) and their weights.
struct Taps {
  int64_t index[2];
  float weight[2];
};

// Taps reading position `pos` (already snapped) of an axis of `size` points,
// each weight multiplied by `gain`.
Taps TapsAt(double pos, int64_t size, double gain) {
  Taps t;
  const double i0 = std::floor(pos);
  const double frac = pos - i0;
  const double w[2] = {1.0 - frac, frac};
  for (int k = 0; k < 2; ++k) {
    const double i = i0 + k;
    const bool inside = w[k] != 0.0 && i >= 0.0 && i < static_cast<double>(size);
    t.index[k] = inside ? static_cast<int64_t>(i) : -1;
    t.weight[k] = inside ? static_cast<float>(w[k] * gain) : 0.0f;
  }
  return t;
}

}  // namespace

GroupElement AudioTransform::Element(double pitch_cents, double tempo, double time_shift) {
  return GroupElement{{pitch_cents, tempo, time_shift}};
}

std::string AudioTransform::name() const {
  return absl::StrCat("audio_transform(", frequency_bins_, "x", frames_, ", bpo=", bins_per_octave_,
                      ")");
}

GroupElement AudioTransform::Inverse(const GroupElement& g) const {
  const double c = g.params[0], a = g.params[1], s = g.params[2];
  return Element(-c, 1.0 / a, -a * s);
}

GroupElement AudioTransform::Compose(const GroupElement& a, const GroupElement& b) const {
  return Element(a.params[0] + b.params[0], a.params[1] * b.params[1],
                 a.params[2] + b.params[2] / a.params[1]);
}

void AudioTransform::Apply(const GroupElement& g, int64_t n, const float* x, float* out) const {
  const double p = PitchBins(g.params[0]), a = g.params[1], s = g.params[2];
  const double tc = 0.5 * static_cast<double>(frames_ - 1);

  // g⁻¹(f, t) = (f − p, t_c + a·(t − s − t_c)); the √a factor rides on the
  // time taps.
  std::vector<Taps> rows(static_cast<size_t>(frequency_bins_));
  for (int64_t f = 0; f < frequency_bins_; ++f) {
    rows[static_cast<size_t>(f)] = TapsAt(Snap(static_cast<double>(f) - p), frequency_bins_, 1.0);
  }
  const double gain = std::sqrt(a);
  std::vector<Taps> cols(static_cast<size_t>(frames_));
  for (int64_t t = 0; t < frames_; ++t) {
    cols[static_cast<size_t>(t)] =
        TapsAt(Snap(tc + a * (static_cast<double>(t) - s - tc)), frames_, gain);
  }

  const int64_t d = dim();
  for (int64_t v = 0; v < n; ++v) {
    const float* src = x + v * d;
    float* dst = out + v * d;
    for (int64_t f = 0; f < frequency_bins_; ++f) {
      float* o = dst + f * frames_;
      for (int64_t t = 0; t < frames_; ++t) o[t] = 0.0f;
      const Taps& r = rows[static_cast<size_t>(f)];
      for (int kr = 0; kr < 2; ++kr) {
        if (r.index[kr] < 0) continue;
        const float* in = src + r.index[kr] * frames_;
        const float wr = r.weight[kr];
        for (int64_t t = 0; t < frames_; ++t) {
          const Taps& c = cols[static_cast<size_t>(t)];
          float acc = 0.0f;
          if (c.index[0] >= 0) acc += c.weight[0] * in[c.index[0]];
          if (c.index[1] >= 0) acc += c.weight[1] * in[c.index[1]];
          o[t] += wr * acc;
        }
      }
    }
  }
}

}  // namespace invariant
