// clip_codec.h: the sound clips invariant-loadgen sends to a model of sound
// (docs/open-inference.md#audio-models), and how they are packed.
//
// A LoadClip is mono samples at a rate, plus the WAV bytes sent in the wav
// encoding (a file's own bytes, or a 16-bit PCM WAV of the samples). Clips
// come from WAV files (ReadLoadClips: the --clip value, listed as
// invariant-client lists them) or are synthetic (SyntheticClips: seeded,
// speech-like, so a model that trims silence has work to do).
//
// Packing one request of n clips:
//   gRPC (invariant.v1) InputBatch.clips, one v1::AudioClip each: wav bytes,
//        float32_le or int16_le samples (x · 32768 rounded, clamped) with the
//        clip's sample_rate;
//   REST (the Open Inference Protocol) the input "input" FP32 or INT16
//        [n, L], L the longest clip (shorter rows padded with zeros, and then
//        "input_lengths" INT64 [n]), the request parameter sample_rate (the
//        first clip's rate: a REST request has one rate, so all clips of a
//        request must share it); JSON numbers or Triton's binary tensors.
//        Or BYTES [n]: each element a 4-byte little-endian length and a WAV
//        file, binary only (the protocol has no JSON form for WAV bytes).
//
// Errors: ReadLoadClips returns the file's error (NOT_FOUND, INVALID_ARGUMENT
// starting with the path); EncodeClipInferRequest's callers validate first
// (ValidateClipRequest).
//
// Thread-safety: pure functions (ReadLoadClips reads files).
#ifndef INVARIANT_CLIENT_LOADGEN_CLIP_CODEC_H_
#define INVARIANT_CLIENT_LOADGEN_CLIP_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/loadgen/oip_codec.h"
#include "invariant/v1/feature_service.pb.h"

namespace invariant::loadgen {

enum class ClipEncoding { kWav, kFloat32, kInt16 };

struct LoadClip {
  int sample_rate = 0;         // Hz
  std::vector<float> samples;  // mono, [−1, 1]
  std::string wav;             // the bytes sent with ClipEncoding::kWav
};

inline constexpr int64_t kMaxClipFileBytes = int64_t{1} << 30;

// "wav" | "float32" | "int16".
const char* ClipEncodingName(ClipEncoding encoding);

// The clips of a --clip value (one WAV file, a folder, a comma-separated
// list: client/cli/clips.h), decoded (each at most kMaxClipFileBytes).
absl::StatusOr<std::vector<LoadClip>> ReadLoadClips(const std::string& paths);

// `count` clips of `seconds` at `rate` Hz from `seed`: the middle 60 % a
// voiced tone (fundamental gliding within 100..220 Hz, harmonics weighted by
// two formants), the rest faint noise; peak about 0.5. The same on every
// platform for the same arguments.
std::vector<LoadClip> SyntheticClips(int64_t count, double seconds, int rate, uint64_t seed);

// One clip as a v1::AudioClip in `encoding`.
v1::AudioClip ToAudioClip(const LoadClip& clip, ClipEncoding encoding);

// OK, or INVALID_ARGUMENT naming the flag, when clips in `encoding` cannot
// go over REST in `rest_encoding` (wav needs binary), or the clips of a
// REST request would not share one rate.
absl::Status ValidateRestClips(const std::vector<LoadClip>& clips, ClipEncoding encoding,
                               RestEncoding rest_encoding);

// The REST infer body for `clips` (non-empty, one rate) asking for `outputs`.
EncodedInferRequest EncodeClipInferRequest(const std::vector<const LoadClip*>& clips,
                                           const std::vector<std::string>& outputs,
                                           ClipEncoding encoding, RestEncoding rest_encoding);

// The model's rate from its REST metadata (GET /v2/models/{name}): the
// property "sample_rate"; 0 when the model is not a model of sound (no such
// property). INVALID_ARGUMENT when the body does not decode or the property
// is not a positive integer.
absl::StatusOr<int> SampleRateFromModelMetadata(absl::string_view body);

}  // namespace invariant::loadgen

#endif  // INVARIANT_CLIENT_LOADGEN_CLIP_CODEC_H_
