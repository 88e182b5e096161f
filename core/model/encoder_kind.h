// encoder_kind.h: one encoder kind: the descriptor each kind's file fills
// (core/model/<kind>_kind.h) and the checks those files share.
//
// A descriptor says everything the code needs about one kind of encoder:
// its name, how a training config's fields are validated and defaulted, how
// a new model's tensors are drawn, how the encoder is rebuilt over a
// bundle's tensors, and whether it needs encoder.group. The table of every
// kind is encoder_kinds.h's; this file is below it and below every kind.
//
// Errors are absl::Status (INVALID_ARGUMENT naming the field or tensor).
// Thread-safety: the functions are reentrant.
#ifndef INVARIANT_CORE_MODEL_ENCODER_KIND_H_
#define INVARIANT_CORE_MODEL_ENCODER_KIND_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/encoders/encoder.h"
#include "core/model/model.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

// What drawing a new encoder may read of the training data.
struct EncoderTrainingData {
  int64_t input_dim = 0;
  int64_t train_rows = 0;
  // m distinct training rows picked with `seed`, preprocessed like every
  // input (Nyström landmarks, data templates, the images patch statistics
  // are sampled from).
  std::function<absl::StatusOr<FloatMatrix>(int64_t m, uint64_t seed)> draw_rows;
};

struct EncoderKind {
  const char* name;  // "cdf", "random_fourier", "nystrom", "spectral", "patch"
  v1::EncoderSpec::ParamsCase params_case;
  bool needs_group;  // encoder.group must be set
  // Checks a training config's encoder fields and fills their defaults;
  // errors (INVALID_ARGUMENT) name the field.
  absl::Status (*validate_config)(v1::EncoderSpec& spec);
  // Draws a new model's encoder tensors into `tensors` (seeded by
  // spec.seed) and records what was decided (e.g. r when enumerated, the
  // Nyström rank, the spectral basis) in `spec`.
  absl::Status (*draw)(v1::EncoderSpec& spec, const EncoderTrainingData& data,
                       ModelTensors& tensors);
  // Rebuilds the encoder over a bundle's tensors; errors name the tensor or
  // field that is missing or inconsistent.
  absl::StatusOr<std::shared_ptr<const Encoder>> (*load)(const v1::EncoderSpec& spec,
                                                         int64_t input_dim,
                                                         const ModelTensors& tensors);
};

// Config field checks: OK when lo <= v <= hi (resp. v > 0), else
// INVALID_ARGUMENT "<field> must be in [lo, hi], got v" (resp. "> 0").
absl::Status CheckFieldRange(const std::string& field, double v, double lo, double hi);
absl::Status CheckFieldPositive(const std::string& field, double v);

// The tensor `name` when it is rows × cols (−1: any); INVALID_ARGUMENT
// naming the tensor, the expected shape (`what`) and the actual one.
template <typename T>
absl::StatusOr<Array2D<T>> RequireTensor(const std::map<std::string, Array2D<T>>& map,
                                         const std::string& name, int64_t rows, int64_t cols,
                                         const char* what) {
  auto it = map.find(name);
  if (it == map.end()) {
    return absl::InvalidArgumentError(absl::StrCat("missing tensor '", name, "' (", what, ")"));
  }
  const Array2D<T>& a = it->second;
  if ((rows >= 0 && a.rows() != rows) || (cols >= 0 && a.cols() != cols)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name, "' must be ", rows < 0 ? std::string("any") : absl::StrCat(rows), " × ",
        cols < 0 ? std::string("any") : absl::StrCat(cols), " (", what, "), got ", a.rows(), " × ",
        a.cols()));
  }
  return a;
}

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_ENCODER_KIND_H_
