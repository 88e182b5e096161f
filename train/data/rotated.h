// rotated.h: the "rotated" protocol for image data sets (Rotated MNIST as in
// Raj et al. 2017 §5 / Larochelle et al. 2007).
//
// Every image is rotated about its centre by its own angle θ uniform in
// [0, 2π); labels are kept. The pixel operation is core/groups'
// ImageTransform (bilinear interpolation, zero outside the image, intensity
// unchanged since rotations have |J| = 1). Images are height × width with
// input_shape {height, width}, or height × width × channels, channels last,
// with input_shape {height, width, channels} (colour IDX files, or CSV rows
// given a data.image layout): every channel of an image is rotated by the
// same angle, so pixel (r, c) of every channel moves to the same place.
// Corners that rotate out of
// the frame are lost, so image mass is preserved only approximately (exactly
// for content inside the inscribed disc, up to interpolation).
//
// Angles are seeded per image: the image with row index i (in the stream)
// gets θ_i = 2π·U from Rng::ForStream(seed, i), independent of block sizes.
//
// The protocol split (MakeRotatedProtocol): num_train (default 12,000) rows
// drawn at random from the source's train part; num_test (default 50,000)
// rows drawn at random from the pool of the source's remaining train rows
// followed by all its test rows (for MNIST / Fashion-MNIST: 48,000 + 10,000 =
// 58,000 ≥ 50,000), so train and test never share a source image.
#ifndef INVARIANT_TRAIN_DATA_ROTATED_H_
#define INVARIANT_TRAIN_DATA_ROTATED_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"
#include "train/data/splits.h"

namespace invariant::train {

// θ_i for the image with row index i under `seed`, in [0, 2π).
double RotationAngle(uint64_t seed, int64_t index);

// Rotates n row-major height × width images by `angle` radians (the
// ImageTransform convention: θ > 0 turns the picture clockwise on screen).
void RotateImages(int64_t height, int64_t width, double angle, int64_t n, const float* in,
                  float* out);
// The same for height × width × channels images, channels last: every
// channel turned by the same `angle`.
void RotateImages(int64_t height, int64_t width, int64_t channels, double angle, int64_t n,
                  const float* in, float* out);

// Streams `images` with row i rotated by RotationAngle(seed, i). The source
// must have input_shape {height, width} or {height, width, channels} whose
// product is its dim (INVALID_ARGUMENT naming the source otherwise). The
// name gains the suffix "/rotated".
absl::StatusOr<std::unique_ptr<RowSource>> MakeRotatedSource(std::unique_ptr<RowSource> images,
                                                             uint64_t seed);

// Every row of `images` rotated by RotationAngle(seed, i); the angles are
// written to *angles when it is not null.
absl::StatusOr<Dataset> RotateEachImage(const Dataset& images, uint64_t seed,
                                        std::vector<double>* angles = nullptr);

struct RotatedOptions {
  uint64_t seed = 1;
  int64_t num_train = 12000;
  int64_t num_test = 50000;  // kRest: the whole remaining pool
};

struct RotatedSplit {
  Dataset train;
  Dataset test;
  std::vector<double> train_angles;
  std::vector<double> test_angles;
  std::vector<int64_t> train_rows;       // rows of source_train used for train, in order
  std::vector<int64_t> pool_train_rows;  // the other source_train rows, in pool order
  // Test row k is pool row test_pool_rows[k], where pool row p is
  // source_train row pool_train_rows[p] when p < pool_train_rows.size() and
  // source_test row p − pool_train_rows.size() otherwise.
  std::vector<int64_t> test_pool_rows;
};

// The protocol split described above. INVALID_ARGUMENT when num_train
// exceeds the source's train rows or num_test exceeds the pool (message gives
// the counts), or when the two parts differ in shape or classes.
absl::StatusOr<RotatedSplit> MakeRotatedProtocol(const Dataset& source_train,
                                                 const Dataset& source_test,
                                                 const RotatedOptions& options);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_ROTATED_H_
