// spectrogram_ops.h: kernels on a spectrogram row, frequency_bins × frames
// floats, bin-major (row[k · frames + t]), the layout of the audio front end.
//
// Both are free functions without errors or state: the caller owns the
// buffers and checks the shapes. Thread-safe on distinct buffers.
#ifndef INVARIANT_CORE_AUDIO_SPECTROGRAM_OPS_H_
#define INVARIANT_CORE_AUDIO_SPECTROGRAM_OPS_H_

#include <cstdint>

namespace invariant::audio {

// What weighs a bin in the centroid: its mean over the frames (every value
// ≥ 0, as after log1p), or its standard deviation over the frames (the same
// after a constant is added to the bin).
enum class BinStatistic { kMean, kStddev };

// The centroid Σ_k k·m_k / Σ_k m_k, m_k bin k's `statistic`; −1 when every
// m_k is 0.
double FrequencyCentroid(const float* row, int64_t bins, int64_t frames,
                         BinStatistic statistic = BinStatistic::kMean);

// Translates the row along frequency so that its centroid lands on
// `target_bin`: out[k, t] = row[k − δ, t], δ = target_bin − centroid, by
// linear interpolation between bins, 0 outside [0, bins). A row whose
// centroid is undefined is left as it is. `scratch` holds bins · frames
// floats.
void AlignFrequencyCentroid(float* row, int64_t bins, int64_t frames, double target_bin,
                            float* scratch, BinStatistic statistic = BinStatistic::kMean);

// Stretches the frames [first, last] (frame coordinates, first < last) of
// the row over all its frames: out[k, j] = row[k, u_j] with
// u_j = first + j · (last − first) / (frames − 1), by linear interpolation
// between frames, u_j clamped to [0, frames − 1]. A time-scaled copy of the
// content between first and last (a tempo change) gives the same output, up
// to the interpolation: a canonical representative of the tempo orbit.
// `scratch` holds bins · frames floats; frames ≥ 2.
void StretchFrames(float* row, int64_t bins, int64_t frames, double first, double last,
                   float* scratch);

// The frames StretchFrames(·, frames, first, last, ·) reads lie in
// [*begin, *end) (one frame of margin at the end, for the rounding of the
// last u_j): only those need to be computed. frames ≥ 2.
void StretchedFrames(int64_t frames, double first, double last, int64_t* begin, int64_t* end);

// Removes each bin's mean over the frames.
void SubtractFrequencyMean(float* row, int64_t bins, int64_t frames);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_SPECTROGRAM_OPS_H_
