#include "server/handlers/validation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

absl::Status ValidateModelRef(const std::string& name, int64_t version,
                              const LookupFieldNames& fields) {
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(fields.name, ": expected a model name, received an empty string"));
  }
  if (name.size() > kMaxModelNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(fields.name, ": expected at most ", kMaxModelNameBytes, " bytes, received ",
                     name.size(), " bytes ('", EchoInput(name), "')"));
  }
  if (version < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        fields.version, ": expected 0 (latest) or a positive version, received ", version));
  }
  return absl::OkStatus();
}

absl::StatusOr<DecodedRows> DecodeRows(const InferRequest& request, int64_t input_dim,
                                       int64_t max_rows) {
  const InferFieldNames& names = request.fields;
  const bool has_values = request.value_count > 0;
  const bool has_raw = !request.raw_values.empty();
  if (has_values && has_raw) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.inputs, ": expected exactly one of values or raw_values, received both (",
        request.value_count, " values and ", request.raw_values.size(), " raw bytes)"));
  }
  if (has_raw && request.raw_values.size() % sizeof(float) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.raw_values, ": expected a multiple of 4 bytes (little-endian float32), received ",
        request.raw_values.size(), " bytes"));
  }
  const std::string& field = has_raw ? names.raw_values : names.values;
  const int64_t count = has_raw ? static_cast<int64_t>(request.raw_values.size() / sizeof(float))
                                : request.value_count;
  if (count == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.inputs, ": empty batch: expected at least one row of input_dim=", input_dim,
        " floats, received 0 values"));
  }
  if (count % input_dim != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": expected a multiple of input_dim=", input_dim, " floats, received ", count));
  }
  const int64_t rows = count / input_dim;
  if (request.declared_rows != 0 && request.declared_rows != rows) {
    return absl::InvalidArgumentError(absl::StrCat(names.num_rows, ": expected ", rows, " (", count,
                                                   " values / input_dim=", input_dim,
                                                   "), received ", request.declared_rows));
  }
  if (rows > max_rows) {
    return absl::InvalidArgumentError(absl::StrCat(names.inputs, ": expected at most ", max_rows,
                                                   " rows per request, received ", rows));
  }
  DecodedRows decoded;
  const char* raw = request.raw_values.data();
  if (has_raw && reinterpret_cast<uintptr_t>(raw) % alignof(float) != 0) {
    // Bytes not aligned for floats: the one case that copies.
    std::vector<float> owned(static_cast<size_t>(count));
    std::memcpy(owned.data(), raw, request.raw_values.size());
    decoded = DecodedRows(rows, std::move(owned));
  } else {
    // Little-endian host (audio_clips.cc refuses others): the bytes are the floats.
    decoded = DecodedRows(rows, has_raw ? reinterpret_cast<const float*>(raw) : request.values);
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
