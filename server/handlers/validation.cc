#include "server/handlers/validation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

// Returns the first non-finite value's index, or -1.
int64_t FirstNonFinite(const float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(x[i])) return i;
  }
  return -1;
}

}  // namespace

absl::Status ValidateModelSpec(const v1::ModelSpec& spec) {
  if (spec.name().empty()) {
    return absl::InvalidArgumentError(
        "model.name: expected a model name, received an empty string");
  }
  if (spec.name().size() > kMaxModelNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.name: expected at most ", kMaxModelNameBytes, " bytes, received ",
                     spec.name().size(), " bytes ('", EchoInput(spec.name()), "')"));
  }
  if (spec.version() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.version: expected 0 (latest) or a positive version, received ", spec.version()));
  }
  return absl::OkStatus();
}

absl::StatusOr<DecodedRows> DecodeInputBatch(const v1::InputBatch& batch, int64_t input_dim,
                                             int64_t max_rows) {
  const bool has_values = batch.values_size() > 0;
  const bool has_raw = !batch.raw_values().empty();
  if (has_values && has_raw) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inputs: expected exactly one of values or raw_values, received both (",
        batch.values_size(), " values and ", batch.raw_values().size(), " raw bytes)"));
  }
  if (has_raw && batch.raw_values().size() % sizeof(float) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inputs.raw_values: expected a multiple of 4 bytes (little-endian float32), received ",
        batch.raw_values().size(), " bytes"));
  }
  const char* field = has_raw ? "inputs.raw_values" : "inputs.values";
  const int64_t count = has_raw ? static_cast<int64_t>(batch.raw_values().size() / sizeof(float))
                                : batch.values_size();
  if (count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs: empty batch: expected at least one row of input_dim=", input_dim,
                     " floats, received 0 values"));
  }
  if (count % input_dim != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": expected a multiple of input_dim=", input_dim, " floats, received ", count));
  }
  const int64_t rows = count / input_dim;
  if (batch.num_rows() != 0 && batch.num_rows() != rows) {
    return absl::InvalidArgumentError(absl::StrCat("inputs.num_rows: expected ", rows, " (", count,
                                                   " values / input_dim=", input_dim,
                                                   "), received ", batch.num_rows()));
  }
  if (rows > max_rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs: expected at most ", max_rows, " rows per request, received ", rows));
  }
  DecodedRows decoded;
  if (has_raw) {
    std::vector<float> owned(static_cast<size_t>(count));
    std::memcpy(owned.data(), batch.raw_values().data(), batch.raw_values().size());
    decoded = DecodedRows(rows, std::move(owned));
  } else {
    decoded = DecodedRows(rows, batch.values().data());
  }
  const int64_t bad = FirstNonFinite(decoded.data(), count);
  if (bad >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, "[row ", bad / input_dim, ", column ", bad % input_dim,
                     "]: expected a finite float, received ", decoded.data()[bad]));
  }
  return decoded;
}

}  // namespace invariant::server
