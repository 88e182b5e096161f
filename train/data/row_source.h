// row_source.h: streaming access to a data set in blocks of rows.
//
// A RowSource yields the rows of one data set in a fixed order, a block at a
// time, so that a training set larger than memory can be featurised block by
// block. The file readers (IDX, CSV), the generators (Xperm, torus, Coulomb)
// and an in-memory Dataset all implement it, and every one yields the same
// rows whatever block sizes the caller asks for.
//
//   ASSIGN_OR_RETURN(auto source, OpenIdxSource(images, labels, {}));
//   std::vector<float> x(block * source->schema().dim);
//   std::vector<int32_t> labels(block);
//   while (true) {
//     ASSIGN_OR_RETURN(int64_t got, source->Next(block, x.data(), labels.data(), nullptr));
//     if (got == 0) break;  // end of data
//     ...
//   }
//
// Sources are not thread-safe; use one per thread.
#ifndef INVARIANT_TRAIN_DATA_ROW_SOURCE_H_
#define INVARIANT_TRAIN_DATA_ROW_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "invariant/v1/bundle.pb.h"
#include "train/data/dataset.h"

namespace invariant::train {

// What every row of a source looks like.
struct RowSchema {
  std::string name;                      // data set name, used in errors
  int64_t dim = 0;                       // floats per row
  bool has_labels = false;               // one int32 class index per row
  std::vector<std::string> class_names;  // when has_labels
  int64_t num_targets = 0;               // regression targets per row (0: none)
  std::vector<int64_t> input_shape;      // shape of one row; product == dim
  int64_t num_rows = -1;                 // total rows, or -1 when not known in advance
  // The names of the dim input columns in order (CSV header), or empty.
  std::vector<std::string> column_names;
  // The names of the num_targets regression targets (CSV header), or empty.
  std::vector<std::string> target_names;
  // The values are unsigned bytes divided by 255 (IDX images); otherwise as read.
  bool unit_byte_scaled = false;
  // The group of every row in source order (num_rows entries; e.g. the
  // speaker of a clip, train/data/audio.h), or empty when the source has
  // none. Splits by group (data_plan.h) read it.
  std::vector<std::string> groups;
  // Rows that are augmented copies of others (an AudioSource's
  // augmentation, train/data/audio_augment.h): per row in source order, -1
  // for an original, else the index of the row it is a copy of. The copies
  // follow every original. Empty when no row is a copy. PlanData
  // (data_plan.h) splits the originals and lets a copy train exactly when
  // its original does.
  std::vector<int64_t> copy_of;
  // Set when every row is a clip seen through this audio front end
  // (completed: AudioFrontEnd::Complete); the model stores it.
  std::optional<v1::AudioFrontEnd> audio;
  // Set when every row is an image file seen through this image front end;
  // the model stores it.
  std::optional<v1::ImageFrontEnd> image;
};

class RowSource {
 public:
  virtual ~RowSource() = default;

  virtual const RowSchema& schema() const = 0;

  // Writes up to `max_rows` (> 0) next rows: inputs to x (rows × dim), class
  // indices to labels (rows entries), targets to targets (rows × num_targets).
  // labels / targets may be nullptr when the caller does not want them (or the
  // source has none). Returns the number of rows written; 0 means the end.
  // Errors (a malformed or truncated file) name the file and the position.
  virtual absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                                       float* targets) = 0;

  // Starts again from the first row; the same rows follow.
  virtual absl::Status Reset() = 0;
};

// A source over an in-memory Dataset (shares its storage; `data` is copied by
// reference count, not by value).
std::unique_ptr<RowSource> MakeDatasetSource(Dataset data);

// Fills row `index` (dim floats to x; *label when the schema has labels;
// num_targets floats to targets). Must depend only on `index` (and state
// fixed at construction), so blocks of any size give the same rows.
using RowGenerator = std::function<void(int64_t index, float* x, int32_t* label, float* targets)>;

// A source of schema.num_rows (>= 0) rows made by `generate`, in index order.
std::unique_ptr<RowSource> MakeGeneratedSource(RowSchema schema, RowGenerator generate);

// Reads every remaining row of `source` in blocks of `block_rows` into a
// Dataset (name, class names and input shape from the schema; the schema's
// groups when as many rows were read as it has groups).
absl::StatusOr<Dataset> ReadAllRows(RowSource& source, int64_t block_rows = 4096);

// The schema describing `data` (its groups included).
RowSchema SchemaOf(const Dataset& data);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_ROW_SOURCE_H_
