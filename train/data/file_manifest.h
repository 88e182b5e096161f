// file_manifest.h: labelled files as a data set lists them, from a manifest
// CSV, and the class names they make. Shared by the sources of sound clips
// (audio.h) and image files (image_files.h).
//
// A manifest is a CSV/TSV file (core/io/delimited.h's field rule) with a
// header naming the columns `path` and `label` and optionally `group` and
// `split` ("train" or "test"); no other column. Relative paths are relative
// to the manifest's folder. Errors: "MANIFEST:LINE: reason" (an unknown or
// repeated column, a missing path or label column, an empty path, label or
// group, a split other than train or test); NOT_FOUND for a missing file.
//
// ClassNamesOf: the given names (each once, and every file's label among
// them: an error names the file otherwise), or the distinct labels sorted,
// numerically when all are integers. Thread-safety: reentrant.
#ifndef INVARIANT_TRAIN_DATA_FILE_MANIFEST_H_
#define INVARIANT_TRAIN_DATA_FILE_MANIFEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace invariant::train {

// One file of a data set, before decoding.
struct LabelledFile {
  std::string path;
  std::string label;
  std::string group;  // empty when the source has no groups
  bool test = false;  // the manifest's split is "test" (or the file is in a test folder)
  int64_t index = 0;  // its position in the source's order (augmentation seeds)
};

absl::StatusOr<std::vector<LabelledFile>> ReadFileManifest(const std::string& manifest);

// `files` split into their train and test parts (source order kept), with
// each class name's index and whether the files carry groups.
struct FileParts {
  std::vector<LabelledFile> train, test;
  std::vector<std::string> class_names;  // as given
  std::map<std::string, int32_t> class_index;
  bool grouped = false;
};
// INVALID_ARGUMENT "FIELD: every file is in the test part ..." when no file
// is left to train on.
absl::StatusOr<FileParts> SplitFileParts(std::vector<LabelledFile> files,
                                         const std::vector<std::string>& class_names,
                                         const std::string& field);

// `field` names the class_names field's parent in errors ("data.audio").
absl::StatusOr<std::vector<std::string>> ClassNamesOf(const std::vector<std::string>& given,
                                                      const std::vector<LabelledFile>& files,
                                                      const std::string& field);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_FILE_MANIFEST_H_
