// config.h: reading and validating an invariant-train configuration.
//
// The config is an invariant.v1.TrainConfig in protobuf text format. Parsing
// rejects unknown fields and syntax errors with file:line:column; validation
// then checks every field the run needs and fills documented defaults, so
// the rest of the pipeline can trust the message. Errors name the field, the
// allowed values and the value received, e.g.
//   "encoder.cdf.num_bins must be in [1, 1000], got 0".
#ifndef INVARIANT_TRAIN_PIPELINE_CONFIG_H_
#define INVARIANT_TRAIN_PIPELINE_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "invariant/v1/train_config.pb.h"

namespace invariant::train {

// Parses the text at `path` (INVALID_ARGUMENT with path:line:col on errors,
// NOT_FOUND for a missing file) and validates it.
absl::StatusOr<v1::TrainConfig> LoadTrainConfig(const std::string& path);

// Parses `text` (errors prefixed with `origin`) and validates it.
absl::StatusOr<v1::TrainConfig> ParseTrainConfig(const std::string& text,
                                                 const std::string& origin);

// Checks ranges and combinations and fills defaults in place.
absl::Status ValidateTrainConfig(v1::TrainConfig& config);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_CONFIG_H_
