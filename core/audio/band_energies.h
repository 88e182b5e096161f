// band_energies.h: the voice-activity detector's filter bank
// (voice_activity.h, step 2): a 2nd-order Butterworth high-pass and one-octave
// band-passes run over a recording, each output's squares summed over blocks.
//
// Filter k is a biquad in direct form I, in double (RBJ's cookbook):
//   y[n] = b0·x[n] + b1·x[n−1] + b2·x[n−2] − a1·y[n−1] − a2·y[n−2],
// evaluated left to right, with x[−1] = x[−2] = y[−1] = y[−2] = 0; block b's
// energy is Σ_{n ∈ [b·hop, (b+1)·hop)} y[n]², summed in order.
//
// Determinism: the filters run side by side in lanes, each lane doing the
// scalar arithmetic above in the same order, and no multiply-add is fused
// (-ffp-contract=off; the vector path is AVX2 without FMA). So the portable
// path and the AVX2 path (kernel_path.h) give the same bits, the same as one
// filter at a time, and trainer and server agree on every machine.
//
// Errors: none (hop ≥ 1 is the caller's; an empty x gives no blocks).
// Thread-safety: pure functions.
#ifndef INVARIANT_CORE_AUDIO_BAND_ENERGIES_H_
#define INVARIANT_CORE_AUDIO_BAND_ENERGIES_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace invariant::audio {

// A biquad's coefficients, normalised by a0.
struct Biquad {
  double b0 = 0, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
};

// The detector's bank at `rate` Hz: filter 0 the high-pass at high_pass_hz
// (Q = 1/√2); then one-octave band-passes (0 dB at the centre) centred on
// 2·high_pass_hz, 4·high_pass_hz, ... below 0.45 · rate.
std::vector<Biquad> DetectorFilters(double high_pass_hz, int rate);

// energies[k][b]: block b's energy through filters[k]; ⌈|x| / hop⌉ blocks
// (the last may be short).
std::vector<std::vector<double>> BlockEnergies(absl::Span<const float> x,
                                               const std::vector<Biquad>& filters, int64_t hop);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_BAND_ENERGIES_H_
