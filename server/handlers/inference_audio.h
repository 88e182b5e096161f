// inference_audio.h: Open Inference Protocol tensors → clips, for a model of sound.
//
// A model of sound takes its clips in one of two forms (docs/open-inference.md
// #audio-models):
//   * "input" FP32 or INT16 [n, L]: n clips of samples, each padded to L;
//     with an optional second input "input_lengths" INT32 or INT64 [n] (the
//     valid samples of each row, 1..L; default L for every row), and an
//     optional request parameter "sample_rate" (int64, Hz; default the
//     model's). FP32 samples lie in [−1, 1]; INT16 samples are 16-bit PCM.
//   * "input" BYTES [n]: each element a whole WAV file (its own rate).
// Either as typed contents (fp32_contents, int_contents, int64_contents,
// bytes_contents) or as raw_input_contents (one entry per input,
// little-endian; BYTES as a 4-byte little-endian length + the bytes each).
// The result is a v1::InputBatch of n clips (float32_le / int16_le / wav),
// checked further by the shared v1 validation (audio_clips.h).
//
// Errors: INVALID_ARGUMENT naming the protocol field ("inputs[1].shape:
// expected [2] (one length per row of input) ...", "raw_input_contents[0]:
// expected 64000 bytes ...", "parameters.sample_rate: ..."). Pure functions.
#ifndef INVARIANT_SERVER_HANDLERS_INFERENCE_AUDIO_H_
#define INVARIANT_SERVER_HANDLERS_INFERENCE_AUDIO_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "inference/grpc_service.pb.h"
#include "invariant/v1/feature_service.pb.h"

namespace invariant::server {

inline constexpr char kInputLengthsName[] = "input_lengths";
inline constexpr char kSampleRateParameter[] = "sample_rate";

// The request's tensors as clips (num_rows set); `*raw_input` tells whether
// raw_input_contents carried them. At most `max_rows` rows, checked from the
// shape before the contents are looked at.
absl::StatusOr<v1::InputBatch> DecodeAudioInferInput(const inference::ModelInferRequest& request,
                                                     int64_t max_rows, bool* raw_input);

// The index of the input tensor named "input" in `request` (0 when none).
int AudioInputIndex(const inference::ModelInferRequest& request);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_INFERENCE_AUDIO_H_
