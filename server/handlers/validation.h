// validation.h: checks every request at the RPC boundary.
//
// Nothing past this layer sees a malformed batch. Each error is
// INVALID_ARGUMENT and names the field, what was expected and what came, e.g.
//   "inputs.values: expected a multiple of input_dim=784 floats, received 100"
// The functions are pure (no gRPC, no model), so they are unit-tested directly.
#ifndef INVARIANT_SERVER_HANDLERS_VALIDATION_H_
#define INVARIANT_SERVER_HANDLERS_VALIDATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/base/error_text.h"
#include "server/handlers/infer_request.h"
#include "server/lifecycle/registry.h"

namespace invariant::server {

// A validated batch: num_rows × input_dim finite floats, row-major. Points
// either into the request's packed `values` (which must outlive it) or into
// its own copy of the decoded `raw_values` bytes.
class DecodedRows {
 public:
  DecodedRows() = default;
  DecodedRows(int64_t num_rows, const float* borrowed) : num_rows_(num_rows), borrowed_(borrowed) {}
  DecodedRows(int64_t num_rows, std::vector<float> owned)
      : num_rows_(num_rows), owned_(std::move(owned)) {}

  int64_t num_rows() const { return num_rows_; }
  const float* data() const { return borrowed_ != nullptr ? borrowed_ : owned_.data(); }

 private:
  int64_t num_rows_ = 0;
  const float* borrowed_ = nullptr;
  std::vector<float> owned_;
};

// EchoInput, EchoShape and kMaxEchoBytes (the bounded quoting of client
// input in every message below) are in core/base/error_text.h.

// The longest model name: a name is a directory name (NAME_MAX).
inline constexpr size_t kMaxModelNameBytes = 255;

// Checks a model reference: a non-empty name of at most kMaxModelNameBytes
// bytes and a non-negative version, naming the fields as `fields` does.
absl::Status ValidateModelRef(const std::string& name, int64_t version,
                              const LookupFieldNames& fields = {});

// Checks `request`'s rows for a model taking rows of `input_dim` floats and
// views them (DecodedRows borrows the caller's floats; raw bytes are copied
// only when not aligned for floats): exactly one of values / raw_values is
// set, raw bytes are a multiple of 4, the value count is a positive multiple
// of input_dim, declared_rows (when set) agrees, at most `max_rows` rows,
// every value finite. Errors name request.fields.
absl::StatusOr<DecodedRows> DecodeRows(const InferRequest& request, int64_t input_dim,
                                       int64_t max_rows);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_VALIDATION_H_
