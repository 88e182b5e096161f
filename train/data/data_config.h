// data_config.h: opening the data an invariant.v1.DataConfig names.
//
// Maps each DataConfig source onto the readers and generators of this module
// and returns streaming sources for its parts: every source has a train part;
// IDX files with test_images, Fashion-MNIST, CIFAR-10 with test files (or a
// folder holding test_batch.bin), and an audio manifest with clips marked
// test also have a test part. Audio (audio.h) is decoded and
// featurized when opened and held in memory; its schemas carry the completed
// front end (RowSchema::audio), the clips' groups (RowSchema::groups) and,
// with data.audio.augmentation, which train rows are augmented copies
// (RowSchema::copy_of, audio_augment.h), and
// data.image and data.rotated are refused with it. With
// data.image set, every part is checked against that image layout
// (image_layout.h: row size, IDX height / width / channels, a CSV header's
// channel order; errors name data.image.<field> and the file) and its rows
// get input_shape {height, width} (channels 1) or {height, width, channels}.
// With rotated.enabled each part is wrapped by MakeRotatedSource (rotated.h), with
// angle seeds derived from rotated.seed (Rng::ForStream(seed, 2) for train,
// (seed, 3) for test), the same derivation as MakeRotatedProtocol.
//
// Fields left at their proto defaults take the defaults of the option structs
// (CoulombOptions, TorusOptions, ...) where zero is not a valid value
// (max_atoms 0 → 23, min_atoms 0 → 4, torus dim 0 → 10). Errors name the
// config field, e.g. "data.csv.delimiter must be one character, got ';;'".
#ifndef INVARIANT_TRAIN_DATA_DATA_CONFIG_H_
#define INVARIANT_TRAIN_DATA_DATA_CONFIG_H_

#include <memory>

#include "absl/status/statusor.h"
#include "invariant/v1/train_config.pb.h"
#include "train/data/row_source.h"

namespace invariant::train {

struct DataParts {
  std::unique_ptr<RowSource> train;
  std::unique_ptr<RowSource> test;  // null when the source has no separate test part
};

absl::StatusOr<DataParts> OpenDataConfig(const v1::DataConfig& config);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_DATA_CONFIG_H_
