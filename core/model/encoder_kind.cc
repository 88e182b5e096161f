#include "core/model/encoder_kind.h"

namespace invariant {

absl::Status CheckFieldRange(const std::string& field, double v, double lo, double hi) {
  if (v >= lo && v <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be in [", lo, ", ", hi, "], got ", v));
}

absl::Status CheckFieldPositive(const std::string& field, double v) {
  if (v > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got ", v));
}

}  // namespace invariant
