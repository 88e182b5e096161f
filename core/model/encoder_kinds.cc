#include "core/model/encoder_kinds.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/model/cdf_kind.h"
#include "core/model/nystrom_kind.h"
#include "core/model/patch_kind.h"
#include "core/model/random_fourier_kind.h"
#include "core/model/spectral_kind.h"

namespace invariant {
namespace {

// The table, in the order of the EncoderSpec oneof: each kind's descriptor,
// copied once (each is constant-initialized in its own file).
absl::Span<const EncoderKind> Table() {
  static const EncoderKind kinds[] = {kCdfKind, kRandomFourierKind, kNystromKind, kSpectralKind,
                                      kPatchKind};
  return kinds;
}

}  // namespace

absl::Span<const EncoderKind> EncoderKinds() { return Table(); }

absl::StatusOr<const EncoderKind*> FindEncoderKind(const v1::EncoderSpec& spec,
                                                   const std::string& field) {
  for (const EncoderKind& kind : Table()) {
    if (kind.params_case == spec.params_case()) return &kind;
  }
  std::vector<std::string> names;
  for (const EncoderKind& kind : Table()) names.push_back(kind.name);
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must set one of ", absl::StrJoin(names, ", "), "; got none"));
}

std::string EncoderKindName(const v1::EncoderSpec& spec) {
  for (const EncoderKind& kind : Table()) {
    if (kind.params_case == spec.params_case()) return kind.name;
  }
  return "none";
}

}  // namespace invariant
