// model.h: a served model = preprocess → encoder (→ second layer) (→ linear head).
//
// Model is what the training job writes and the server loads: one bundle file
// (core/bundle/bundle.h) at MODELS/<name>/<version>/model.bundle. Loading maps
// the file read-only, checks the format version and every checksum, and
// rebuilds the encoder over the mapped tensors without copying them. A Model
// is immutable after Load and is shared as std::shared_ptr<const Model>.
#ifndef INVARIANT_CORE_MODEL_MODEL_H_
#define INVARIANT_CORE_MODEL_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/encoders/encoder.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

// The file name of the bundle inside a version directory.
inline constexpr char kBundleFileName[] = "model.bundle";

class Model {
 public:
  // Loads the bundle at `path`. Errors (NOT_FOUND, DATA_LOSS for corrupt or
  // truncated files, FAILED_PRECONDITION for an unsupported format version,
  // INVALID_ARGUMENT for inconsistent shapes) name the path and the problem.
  static absl::StatusOr<std::shared_ptr<const Model>> Load(const std::string& path);

  // Assembles a model from parts (used by the training job and tests).
  // `head_weights` is feature_dim × T and `head_bias` 1 × T, or both empty.
  // The manifest's tensor table is filled in by Save.
  static absl::StatusOr<std::shared_ptr<const Model>> Assemble(
      v1::Manifest manifest, std::vector<std::pair<std::string, FloatMatrix>> tensors);

  // Writes the bundle to `path` (atomically: a temporary file, then rename).
  absl::Status Save(const std::string& path) const;

  const v1::Manifest& manifest() const { return manifest_; }
  int64_t input_dim() const { return manifest_.input_dim(); }
  int64_t feature_dim() const { return manifest_.feature_dim(); }
  bool has_head() const { return manifest_.has_head(); }
  // T: classes for classification, targets for regression; 0 without a head.
  int64_t output_dim() const;
  v1::Task task() const { return manifest_.head().task(); }
  // Bytes of tensors held (mapped or owned).
  size_t bytes() const;

  // x: n × input_dim → features: n × feature_dim. Thread-safe.
  void Featurize(int64_t n, const float* x, float* features) const;
  // x: n × input_dim → scores: n × output_dim (one-vs-all scores or values).
  // Requires has_head(). Thread-safe.
  void Predict(int64_t n, const float* x, float* scores) const;

 private:
  Model() = default;
  v1::Manifest manifest_;
  // implementation details are declared in model.cc's friend builder
  struct Parts;
  std::shared_ptr<const Parts> parts_;
  friend struct ModelBuilder;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_MODEL_H_
