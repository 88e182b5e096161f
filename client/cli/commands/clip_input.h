// clip_input.h: the input clips of featurize and predict for an audio model
// (its metadata has `audio`), checked before any clip is sent; and the input
// image files for a model of image files (its metadata has `image`): the
// same files, folders, lists and stdin, JPEG and PNG files sent as
// InputBatch.images (no noise images: --random_rows is refused).
//
// PrepareClips takes the clips of RowSourceFlags::input (client/cli/clips.h:
// a WAV file, a folder of *.wav, a comma-separated list, or "-" for one WAV
// on stdin) and checks that each file starts like a WAV file; or, with
// RowSourceFlags::random_rows = N > 0, N seeded noise clips of one second at
// the model's rate (shorter when the model's max_clip_seconds is), uniform
// in [−0.5, 0.5), the same on every platform. The row flags that only mean
// something for rows (--id_column, --ignore_columns, --delimiter, --header,
// --input_format) are refused: a clip's id is its file name.
//
// ClipBatchEndAt and FillClipBatch cut the clips into requests of at most
// `max_clips` clips (--batch_size) and kMaxClipBatchBytes bytes, and read the
// files of one request at a time.
//
// Errors are printed on stderr ("invariant-client: ..."); the result is the
// exit code: kExitOk, or kExitUsage for a bad flag, a missing or unreadable
// file, or a file that is not a WAV file (the message names the file and
// says the model takes clips).
//
// Thread-safety: may read stdin; one call at a time.
#ifndef INVARIANT_CLIENT_CLI_COMMANDS_CLIP_INPUT_H_
#define INVARIANT_CLIENT_CLI_COMMANDS_CLIP_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "client/cli/clips.h"
#include "client/cli/commands/commands.h"
#include "client/client.h"

namespace invariant::cli {

// The most clip bytes in one request: a quarter of the server's default
// --max_message_bytes (64 MiB), so a request fits with room to spare.
inline constexpr int64_t kMaxClipBatchBytes = 16 << 20;

struct ClipInput {
  std::vector<ClipFile> files;     // --input; empty with noise clips
  std::vector<int64_t> sizes;      // bytes of each clip
  std::string stdin_bytes;         // the clip read from stdin (files = {"<stdin>"})
  int64_t noise_clips = 0;         // --random_rows
  int64_t noise_samples = 0;       // per noise clip
  int sample_rate = 0;             // of the noise clips
  uint64_t seed = 1;               // of the noise clips
  FileKind kind = FileKind::kWav;  // kImage: image files for a model of image files

  int64_t size() const {
    return noise_clips > 0 ? noise_clips : static_cast<int64_t>(files.size());
  }
  // "" for noise clips (no id column).
  std::string id(int64_t i) const {
    return noise_clips > 0 ? "" : files[static_cast<size_t>(i)].id;
  }
};

// The clips of `flags` for the audio model of `metadata` (named in messages).
int PrepareClips(const RowSourceFlags& flags, const v1::GetModelMetadataResponse& metadata,
                 ClipInput* clips);

// The end of the request starting at clip `first`.
int64_t ClipBatchEndAt(const ClipInput& clips, int64_t first, int64_t max_clips);

// Clips [first, end) as batch->clips; an exit code.
int FillClipBatch(const ClipInput& clips, int64_t first, int64_t end, v1::InputBatch* batch);

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_COMMANDS_CLIP_INPUT_H_
