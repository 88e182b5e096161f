// cifar.h: CIFAR-10 (Krizhevsky 2009) in the official binary format, plain
// or gzip.
//
// A file (data_batch_1.bin .. data_batch_5.bin, test_batch.bin of the
// "binary version", or a gzip of one) is a run of 3073-byte records: one
// label byte (0..9), then the 32×32 red plane, the green plane and the blue
// plane, each row-major (channels first on disk). A row is the image turned
// channels last, the layout the image group acts on
// (core/groups/image_transform.h, proto ImageLayout): value (r, c, ch) at
// (r·32 + c)·3 + ch is on-disk byte 1 + ch·1024 + r·32 + c, scaled as IDX
// bytes are (core/base/unit_byte.h: b · (1/255), schema unit_byte_scaled, so
// models record INPUT_SCALING_UNIT_BYTE). Rows have input_shape {32, 32, 3}
// and the ten class names below. Several files are read one after the other.
//
// A source checks its files when opened (a full read, so errors come before
// any training) and reads them again block by block, so only a block is in
// memory. Errors name the file and the record (records count from 0 in each
// file): an empty file ("empty file, expected records of 3073 bytes"), a
// file whose length is not a multiple of 3073 ("truncated record 2: expected
// 3073 bytes, the file ends after 100 of them"), a label outside 0..9
// ("record 4: label 12, expected 0-9"); NOT_FOUND names a missing file. The
// path "-" (stdin) is refused: the files are read once per training pass.
// Sources are not thread-safe.
#ifndef INVARIANT_TRAIN_DATA_CIFAR_H_
#define INVARIANT_TRAIN_DATA_CIFAR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

inline constexpr int64_t kCifarSide = 32;
inline constexpr int64_t kCifarChannels = 3;
inline constexpr int64_t kCifarImageBytes = kCifarSide * kCifarSide * kCifarChannels;  // 3072
inline constexpr int64_t kCifarRecordBytes = 1 + kCifarImageBytes;                     // 3073

// "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
// "ship", "truck" (labels 0..9).
const std::vector<std::string>& Cifar10ClassNames();

// Turns one record's 3072 image bytes (channels first) into a row of 3072
// floats (channels last, b · (1/255)).
void CifarImageToRow(const uint8_t* image, float* row);

// Streams the records of `paths` in order (at least one path), named `name`
// (default: the first path) in the schema.
absl::StatusOr<std::unique_ptr<RowSource>> OpenCifarSource(const std::vector<std::string>& paths,
                                                           const std::string& name = "");

// Reads the records of `paths` into memory (through OpenCifarSource).
absl::StatusOr<Dataset> LoadCifar(const std::vector<std::string>& paths,
                                  const std::string& name = "");

// The files of a folder as the official archive unpacks them
// (cifar-10-batches-bin/): train holds those of data_batch_1.bin ..
// data_batch_5.bin present, test test_batch.bin when present; each name may
// also be found gzip-compressed as NAME.gz (the plain file is taken when both
// exist). NOT_FOUND when `dir` is not a folder or holds no data_batch_N file
// (saying so when the files are in its cifar-10-batches-bin subfolder).
struct CifarFiles {
  std::vector<std::string> train;
  std::vector<std::string> test;  // empty or one file
};
absl::StatusOr<CifarFiles> FindCifarFiles(const std::string& dir);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_CIFAR_H_
