// compression.h: the audio front end's step 7 (bundle.proto AudioFrontEnd,
// docs/math.md §9, "Compression"): the filterbank's values v of a row become
// log1p(compression_gain · v) (COMPRESSION_LOG1P), or the per-channel energy
// normalisation of compression_gain · v over the frames (COMPRESSION_PCEN,
// bundle.proto Pcen: each bin divided by its own smoothed level, so a
// steady colouring of the bin, a microphone's or a noise's, is divided out).
//
// Determinism: float log1p as before for LOG1P; PCEN's recurrence in double
// in frame order, each bin alone, so a row's values do not depend on how the
// bins are split among calls, and trainer and server agree.
//
// Errors: CompleteCompression refuses an unknown compression or a Pcen
// parameter out of range with INVALID_ARGUMENT naming the field
// ("audio.pcen.alpha: ..."); Compress takes a completed spec and cannot fail.
// Thread-safety: pure functions.
#ifndef INVARIANT_CORE_AUDIO_COMPRESSION_H_
#define INVARIANT_CORE_AUDIO_COMPRESSION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant::audio {

// `spec->compression` checked; with PCEN, `spec->pcen`'s 0s replaced by the
// defaults and each parameter checked (time_constant_seconds in (0, 60],
// alpha and power in (0, 1], delta in (0, 1e3], epsilon in (0, 1]). A pcen
// message set without PCEN is refused ("audio.pcen: ... COMPRESSION_PCEN").
absl::Status CompleteCompression(v1::AudioFrontEnd* spec);

// row[k · frames + t] for bins k ∈ [k0, k1) and frames t ∈ [begin, end)
// holds the filterbank's values v ≥ 0; they become the compressed values
// (PCEN's recurrence starts at frame `begin`). `spec` completed.
void Compress(const v1::AudioFrontEnd& spec, int64_t frames, int64_t k0, int64_t k1, int64_t begin,
              int64_t end, float* row);

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_COMPRESSION_H_
