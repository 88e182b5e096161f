// audio.h: sound clips (WAV files) as a data set, the AudioSource of
// proto/invariant/v1/train_config.proto.
//
// The clips come from a folder or a manifest:
//   * dir: every file below it (recursively; symbolic links to folders are
//     not followed) whose name ends in ".wav" (any case), sorted by path. Its file name (not the
//     path) is matched against file_pattern (default "{label}_{group}_{*}.wav", FSDD's
//     digit_speaker_take.wav): literal text and the placeholders {label},
//     {group} and {*}, each matching one or more characters up to the next
//     literal text (the last literal text must end the name). {label} is
//     required, {group} optional, and two placeholders must be separated by
//     literal text. A file that does not match is an error naming it.
//   * manifest: a CSV/TSV file (core/io/delimited.h's field rule) with a
//     header naming the columns `path` and `label` and optionally `group` and
//     `split` ("train" or "test"); no other column. Relative paths are
//     relative to the manifest's folder. Rows marked test are the test part.
// Every clip is read by audio::ReadWavFile and turned into one row by
// audio::AudioFrontEnd::Apply (core/audio/front_end.h), on the process
// thread pool; the rows are in clip order whatever the threads, and
// bit-identical to what the server computes for the same file. Rows have
// input_shape {frequency_bins, frames, 1} (the layout AudioTransformGroup
// acts on). Class names are the labels sorted (numerically when all are
// integers, as the CSV source sorts them) unless class_names is given, and
// then a label outside it is an error naming the file. With
// source.augmentation, the train part also holds seeded, altered copies of
// its clips after the originals (audio_augment.h, which says why there).
//
// Errors are INVALID_ARGUMENT naming the field ("data.audio.file_pattern:
// ...") or the file: a bad WAV gives the WAV reader's message, which starts
// with the path; a manifest error gives "MANIFEST:LINE: reason". A folder or
// manifest that does not exist is NOT_FOUND. Thread-safety: the functions are
// reentrant.
#ifndef INVARIANT_TRAIN_DATA_AUDIO_H_
#define INVARIANT_TRAIN_DATA_AUDIO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "invariant/v1/train_config.pb.h"
#include "train/data/dataset.h"
#include "train/data/file_manifest.h"
#include "train/data/row_source.h"

namespace invariant::train {

inline constexpr char kDefaultAudioFilePattern[] = "{label}_{group}_{*}.wav";

// One clip of an AudioSource, before decoding.
using AudioClip = LabelledFile;

// A file name pattern (see above), parsed.
class FilePattern {
 public:
  // INVALID_ARGUMENT starting with `field`: an unknown placeholder, an
  // unclosed brace, {label} missing or twice, {group} twice, two
  // placeholders without literal text between them.
  static absl::StatusOr<FilePattern> Parse(const std::string& pattern, const std::string& field);

  bool has_group() const { return has_group_; }
  // Fills *label and *group (when the pattern has {group}); false when
  // `name` does not match.
  bool Match(const std::string& name, std::string* label, std::string* group) const;

 private:
  struct Token {
    bool placeholder = false;
    std::string text;  // the literal text, or "label" / "group" / "*"
  };
  std::vector<Token> tokens_;
  bool has_group_ = false;
};

// Every file below `dir` (recursively, links to folders not followed) whose
// name ends in ".wav" in any case, sorted by path. NOT_FOUND when `dir` is
// not a folder; errors start with `field` (e.g. "data.audio.dir").
absl::StatusOr<std::vector<std::string>> ListWavFiles(const std::string& dir,
                                                      const std::string& field);

// The clips `source` names, in order (nothing decoded). `field` names the
// source in errors ("data.audio").
absl::StatusOr<std::vector<AudioClip>> ListAudioClips(const v1::AudioSource& source,
                                                      const std::string& field);

// The clips of `source` as LoadAudio's two parts hold them: the rows of the
// train part (originals, before any augmented copy) and of the test part, in
// row order, with the class index. Nothing decoded. Errors: ListAudioClips's,
// ClassNamesOf's and SplitFileParts's.
absl::StatusOr<FileParts> AudioParts(const v1::AudioSource& source, const std::string& field);

struct AudioData {
  Dataset train;
  Dataset test;                 // no rows when no clip is marked test
  v1::AudioFrontEnd front_end;  // completed (AudioFrontEnd::Complete)
  // With source.augmentation: per row of `train`, -1 for an original clip,
  // else the row of the clip it is a copy of (the copies follow every
  // original: audio_augment.h). Empty without augmentation.
  std::vector<int64_t> copy_of;
};

// Lists, decodes and featurizes every clip of `source`. Both parts carry the
// groups when the source has them (every clip must then have one). With
// source.augmentation the train part also holds the copies of its clips
// (audio_augment.h: errors name data.audio.augmentation's fields, a copy's
// front-end error names its clip and copy); the test part never does.
absl::StatusOr<AudioData> LoadAudio(const v1::AudioSource& source, const std::string& field);

// Checks that an AudioTransformGroup (`field`, e.g. "encoder.group.audio")
// acts on `schema`'s rows: with an audio front end, frequency_bins, frames
// and bins_per_octave must equal the front end's; otherwise frequency_bins ·
// frames must equal the row length. INVALID_ARGUMENT names the field.
absl::Status CheckAudioGroup(const RowSchema& schema, const v1::AudioTransformGroup& group,
                             const std::string& field);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_AUDIO_H_
