// image_files.h: JPEG and PNG files as a data set, the ImageFileSource of
// proto/invariant/v1/train_config.proto.
//
// The files come from a folder or a manifest:
//   * dir, laid out as torchvision's ImageFolder and Keras'
//     image_dataset_from_directory expect: DIR/CLASS/… holds the images of
//     class CLASS (every file below the class folder, recursively, whose
//     name ends in .jpg, .jpeg or .png in any case; other files, and files
//     directly in DIR, are skipped, as those readers skip them). Classes are
//     the class folders' names sorted by byte (torchvision's order). When
//     DIR holds a folder named "train", DIR/train is that layout and
//     DIR/test, when present, the test part (its classes must be among
//     train's). Symbolic links to folders are not followed;
//   * manifest: file_manifest.h's CSV (path, label, optional group and
//     split); classes as ClassNamesOf sorts them.
// class_names, when given, fixes the order (and every label must be in it).
// Every file is decoded and turned into one row by
// image::ImageFrontEnd::Apply (core/image/front_end.h), on the process
// thread pool, under the front end's own max_pixels; rows are in file order
// whatever the threads, bit-identical to what the server computes for the
// same file, with input_shape {height, width, channels} and values
// b · (1/255) (so models record INPUT_SCALING_UNIT_BYTE).
//
// Errors are INVALID_ARGUMENT naming the field ("data.image_files.front_end:
// image.channels: ...") or the file (a file that does not decode gives the
// decoder's message, which starts with its path); a folder with no class
// folder or no image, or a manifest, that does not exist is NOT_FOUND or
// INVALID_ARGUMENT naming it. Thread-safety: reentrant.
#ifndef INVARIANT_TRAIN_DATA_IMAGE_FILES_H_
#define INVARIANT_TRAIN_DATA_IMAGE_FILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "invariant/v1/train_config.pb.h"
#include "train/data/dataset.h"
#include "train/data/file_manifest.h"

namespace invariant::train {

// True for names ending in .jpg, .jpeg or .png (any case).
bool IsImageFileName(const std::string& name);

// The files `source` names, in order (nothing decoded); `field` names the
// source in errors ("data.image_files").
absl::StatusOr<std::vector<LabelledFile>> ListImageFiles(const v1::ImageFileSource& source,
                                                         const std::string& field);

struct ImageFileData {
  Dataset train;
  Dataset test;                 // no rows when no file is in the test part
  v1::ImageFrontEnd front_end;  // checked (ImageFrontEnd::Complete)
};

// Lists and decodes every file of `source`.
absl::StatusOr<ImageFileData> LoadImageFiles(const v1::ImageFileSource& source,
                                             const std::string& field);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_IMAGE_FILES_H_
