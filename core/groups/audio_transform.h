// audio_transform.h: pitch shifts, tempo changes and time shifts of spoken
// sounds, acting on the log-frequency spectrograms of the audio front end
// (core/audio/front_end.h; invariant.v1.AudioTransformGroup).
//
// Layout: a spectrogram is frequency_bins × frames floats, bin-major: value
// (f, t) is at f·frames + t (row f = a log-spaced frequency bin, lowest
// first, bins_per_octave per octave; column t = a frame, earliest first).
// Grid points sit on integers; the centre frame is t_c = (frames − 1)/2.
//
// Element: params = {c, a, s} (pitch in cents, tempo factor a > 0, time
// shift in frames). Its point map on u = (f, t) is
//   g(f, t) = (f + p, t_c + (t − t_c)/a + s),   p = c · bins_per_octave / 1200
// so c > 0 moves energy to higher bins (pitch up), a = 2 compresses the
// pattern in time about the centre frame by half (it plays twice as fast,
// the word takes half the frames) and s > 0 moves it to later frames. With
// |J_g| = 1/a the action is
//   (g·X)(u) = |J_g|^{-1/2} · X(g⁻¹(u)) = √a · X(f − p, t_c + a·(t − s − t_c)),
// evaluated by bilinear interpolation in (f, t) with zero (silence) outside
// the grid. A sample position within 1e-9 of a grid point is snapped to it,
// so pitch shifts by whole bins (c = k · 1200 / bins_per_octave) and whole
// frame time shifts with a = 1 move values exactly, with zero fill.
//
// Compose and Inverse are exact parameter algebra (pitch shifts commute with
// the time map, and maps t ↦ t_c + (t − t_c)/a + s are closed under
// composition):
//   a∘b = (c_a + c_b, a_a·a_b, s_a + s_b/a_a)
//   g⁻¹ = (−c, 1/a, −a·s)
// The grid action is only approximately a group action and approximately
// unitary (interpolation blurs, the border clips): exactly_unitary() = false.
#ifndef INVARIANT_CORE_GROUPS_AUDIO_TRANSFORM_H_
#define INVARIANT_CORE_GROUPS_AUDIO_TRANSFORM_H_

#include <cstdint>
#include <string>

#include "core/groups/group.h"

namespace invariant {

class AudioTransform final : public GroupAction {
 public:
  // frequency_bins, frames ≥ 1; bins_per_octave > 0 and finite.
  AudioTransform(int64_t frequency_bins, int64_t frames, double bins_per_octave)
      : frequency_bins_(frequency_bins), frames_(frames), bins_per_octave_(bins_per_octave) {}

  // The element {pitch_cents, tempo, time_shift}; tempo must be > 0.
  static GroupElement Element(double pitch_cents, double tempo, double time_shift);

  int64_t frequency_bins() const { return frequency_bins_; }
  int64_t frames() const { return frames_; }
  double bins_per_octave() const { return bins_per_octave_; }
  // The shift along frequency, in bins, of a pitch change of `cents`.
  double PitchBins(double cents) const { return cents * bins_per_octave_ / 1200.0; }

  int64_t dim() const override { return frequency_bins_ * frames_; }
  // E.g. "audio_transform(64x100, bpo=12)".
  std::string name() const override;
  void Apply(const GroupElement& g, int64_t n, const float* x, float* out) const override;
  GroupElement Identity() const override { return Element(0.0, 1.0, 0.0); }
  GroupElement Inverse(const GroupElement& g) const override;
  GroupElement Compose(const GroupElement& a, const GroupElement& b) const override;
  bool exactly_unitary() const override { return false; }

 private:
  int64_t frequency_bins_;
  int64_t frames_;
  double bins_per_octave_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_AUDIO_TRANSFORM_H_
