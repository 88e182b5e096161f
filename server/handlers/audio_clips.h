// audio_clips.h: the clips of a request to a model of sound → its rows.
//
// A model of sound (Model::audio_front_end() set) takes InputBatch.clips,
// never rows; DecodeClipBatch checks every clip, decodes it (a whole WAV file
// through audio::DecodeWav, or little-endian float32 / int16 samples) and
// applies the model's front end on the calling thread (the handler calls it
// from its clip-decoding workers, never a transport thread; a constant-Q
// front end hands each clip's bands to the compute pool), so the batcher
// sees ordinary rows. The front end depends on nothing but the clip, so a clip
// gives the same row alone or among others, in any request.
//
// Limits: at most `max_rows` clips; each clip at most
// floor(max_clip_seconds · its rate) samples, where max_clip_seconds is
// EffectiveMaxClipSeconds (the smaller of the model's limit and the
// server's). The sample count of raw samples is checked from the byte count
// before anything is allocated; a WAV's header is read first and its length
// held to its own rate's limit before any sample is decoded (decoding never
// allocates more than 4 bytes per byte of the file).
//
// Errors: INVALID_ARGUMENT naming the field: "inputs.clips: ..." for the
// count, "inputs.clips[3]: no samples" (no data set), "inputs.clips[3].wav:
// not a WAV file ...", "inputs.clips[3].float32_le: expected a multiple of 4
// bytes ...", "inputs.clips[3].sample_rate: ...", and the front end's own
// ("inputs.clips[3]: sample 12 is NaN ..."). Thread-safe (pure functions).
#ifndef INVARIANT_SERVER_HANDLERS_AUDIO_CLIPS_H_
#define INVARIANT_SERVER_HANDLERS_AUDIO_CLIPS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/audio/front_end.h"
#include "server/handlers/infer_request.h"
#include "server/handlers/validation.h"

namespace invariant::server {

// The server's default limit on a clip's length (--max_audio_clip_seconds).
inline constexpr double kDefaultMaxAudioClipSeconds = 30;

// min(the model's max_clip_seconds (0: AudioFrontEnd::kDefaultMaxClipSeconds),
// server_limit); server_limit <= 0 means no server limit.
double EffectiveMaxClipSeconds(const audio::AudioFrontEnd& front_end, double server_limit);

// The most samples a clip at `sample_rate` Hz may have under `max_clip_seconds`.
int64_t MaxClipSamples(double max_clip_seconds, int sample_rate);

// The checks of `request`'s clips that need no decoding (count, fields, rates,
// lengths: a WAV's header is read, not its samples, and its length held to
// its own rate), and what decoding them costs: the seconds of audio of every
// clip plus, per clip, the front end's clip_seconds (every clip is cut or
// padded to it, so a one-sample clip costs a whole clip).
absl::StatusOr<double> PlanClipBatch(const InferRequest& request,
                                     const audio::AudioFrontEnd& front_end, int64_t max_rows,
                                     double max_clip_seconds);

// `request`'s clips (declared_rows 0 or the clip count) → one row of
// front_end.output_dim() floats per clip, and in *speech (may be null) what
// the front end kept of each (audio::ClipSpeech: found is false for a clip
// in which voice activity found no speech). `keep_going` (may be
// empty) is asked before each clip; its first error (the call was cancelled
// or its deadline passed) ends the decoding with that status, so abandoned
// work stops at the next clip.
absl::StatusOr<DecodedRows> DecodeClipBatch(const InferRequest& request,
                                            const audio::AudioFrontEnd& front_end, int64_t max_rows,
                                            double max_clip_seconds,
                                            const std::function<absl::Status()>& keep_going = {},
                                            std::vector<audio::ClipSpeech>* speech = nullptr);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_AUDIO_CLIPS_H_
