// clips.h: the sound clips invariant-client sends to an audio model
// (GetModelMetadataResponse.audio set), as WAV files' bytes; and likewise
// the image files it sends to a model of image files (.image set), as JPEG
// or PNG files' bytes (FileKind::kImage: *.jpg, *.jpeg, *.png in a folder,
// the JPEG or PNG magic checked).
//
// --input names the clips: one WAV file, a folder (every *.wav / *.WAV file
// directly in it, sorted by name; subfolders are not searched), several of
// these separated by commas, or "-" for one WAV file on stdin. The id of a
// clip, printed as the first output column, is the path as written on the
// command line for a file, the file name for a file found in a folder, and
// "<stdin>" for stdin. The client does not decode the files: it checks the
// RIFF/RIFX/RF64 … WAVE magic and sends the bytes as AudioClip.wav (the
// server decodes, resamples and applies the model's front end).
//
// Errors are INVALID_ARGUMENT (NOT_FOUND for a missing path) whose message
// starts with the path: "x.csv: not a WAV file (no RIFF/RIFX/RF64 header with
// WAVE)", "clips/: no .wav files in this folder".
//
// Thread-safety: free functions; ReadClipBytes reads stdin for "-".
#ifndef INVARIANT_CLIENT_CLI_CLIPS_H_
#define INVARIANT_CLIENT_CLI_CLIPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace invariant::cli {

// What the files are: WAV clips or encoded images.
enum class FileKind { kWav, kImage };

struct ClipFile {
  std::string id;    // printed in the output's id column
  std::string path;  // "-" = stdin
};

// The clip files of an --input value, in order (see above).
absl::StatusOr<std::vector<ClipFile>> ListClipFiles(const std::string& input,
                                                    FileKind kind = FileKind::kWav);

// Whether `bytes` start like a WAV file (RIFF, RIFX or RF64, then WAVE at 8).
bool LooksLikeWav(std::string_view bytes);
// Whether `bytes` start like a JPEG (FF D8 FF) or a PNG (its 8-byte signature).
bool LooksLikeImage(std::string_view bytes);

// Whether an --input value names WAV or image files or folders rather than
// rows: a name ending in .wav, .jpg, .jpeg or .png (any case), or an
// existing folder, in any of its comma-separated parts.
bool NamesClips(const std::string& input);

// The whole file (stdin for "-"), checked with LooksLikeWav (or
// LooksLikeImage); errors start with `file.id`.
absl::StatusOr<std::string> ReadClipBytes(const ClipFile& file, FileKind kind = FileKind::kWav);

// The end of the batch starting at `first` of clips with these byte sizes:
// at most `max_clips` clips whose sizes sum to at most `max_bytes`, and at
// least one clip (a clip larger than max_bytes goes alone).
int64_t ClipBatchEnd(const std::vector<int64_t>& sizes, int64_t first, int64_t max_clips,
                     int64_t max_bytes);

// The index i of the first "clips[i]" or "images[i]" in a server error message, if any.
std::optional<int64_t> ClipIndexInMessage(std::string_view message);

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_CLIPS_H_
