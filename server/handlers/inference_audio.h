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
// The result is n clips viewed in place in the transport-free InferRequest
// (typed INT16 samples are narrowed into its storage), checked further by
// the shared clip checks (audio_clips.h) under the protocol's field names.
//
// Errors: INVALID_ARGUMENT naming the protocol field ("inputs[1].shape:
// expected [2] (one length per row of input) ...", "raw_input_contents[0]:
// expected 64000 bytes ...", "parameters.sample_rate: ..."). Pure functions.
#ifndef INVARIANT_SERVER_HANDLERS_INFERENCE_AUDIO_H_
#define INVARIANT_SERVER_HANDLERS_INFERENCE_AUDIO_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "inference/grpc_service.pb.h"
#include "server/handlers/infer_request.h"

namespace invariant::server {

inline constexpr char kInputLengthsName[] = "input_lengths";
inline constexpr char kSampleRateParameter[] = "sample_rate";

// The request's tensors as clips in `*out` (declared_rows, fields, raw
// set): views into `request`, which must outlive `*out`. At most `max_rows`
// rows, checked from the shape before the contents are looked at.
// `json`: the typed data came as REST's "data" arrays (errors name
// inputs[k].data, TensorDataField).
absl::Status DecodeAudioInferInput(const inference::ModelInferRequest& request, int64_t max_rows,
                                   InferRequest* out, bool json = false);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_INFERENCE_AUDIO_H_
