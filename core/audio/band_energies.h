// band_energies.h: the voice-activity detector's filter bank
// (voice_activity.h, step 2): a 2nd-order Butterworth high-pass and one-octave
// band-passes run over a recording, each output's squares summed over blocks.
//
// Filter k is a biquad in direct form I (RBJ's cookbook), designed in double
// and run in float, the samples' precision, with its coefficients rounded:
//   y[n] = b0·x[n] + b1·x[n−1] + b2·x[n−2] − a1·y[n−1] − a2·y[n−2],
// evaluated left to right, with x[−1] = x[−2] = y[−1] = y[−2] = 0; block b's
// energy is Σ_{n ∈ [b·hop, (b+1)·hop)} y[n]², summed in order in float and
// returned as a double. (Against the recurrence in double: 10^−3 relative, in
// band_energies_test, far inside what the detector's thresholds resolve.)
//
// The order of evaluation. The recurrence's chain of dependent operations, not
// the arithmetic, bounds its speed, so the blocks are split into 8 runs of
// m = ⌊⌊|x| / hop⌋ / 8⌋ whole blocks each (BlocksPerRun), run side by side,
// each run one lane. Run c > 0 starts its filters W samples before its first
// block (W = WarmUpSamples: the slowest pole p has |p|^W ≤ 10^−9) from zero
// state, as run 0 starts at x[0]; the blocks after the runs continue the last
// run left to right. A run's start thus differs from the one-pass state by a
// transient of 10^−9 of it, below a float's rounding: the energies are those
// of one pass to rounding (band_energies_test: 10^−3 relative), run 0's bit
// for bit. When W > m·hop (a short x, a slow pole) there are no runs: one
// pass left to right, the bits of one filter at a time.
//
// Determinism: the lanes (filters, or runs) each do the scalar arithmetic
// above in the same order, and no multiply-add is fused (-ffp-contract=off;
// the vector path is AVX2 without FMA). So the portable path and the AVX2
// path (kernel_path.h) give the same bits, and trainer and server agree on
// every machine.
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
// W of the order of evaluation: the samples after which a zero-state start
// has forgotten its past to 10^−9; −1 when a filter is not stable.
int64_t WarmUpSamples(const std::vector<Biquad>& filters);

// m of the order of evaluation for `samples` samples; 0: no runs, one pass.
int64_t BlocksPerRun(const std::vector<Biquad>& filters, int64_t samples, int64_t hop);

std::vector<std::vector<double>> BlockEnergies(absl::Span<const float> x,
                                               const std::vector<Biquad>& filters, int64_t hop);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_BAND_ENERGIES_H_
