#include "core/spectral/spectral_proto.h"

#include "absl/strings/str_cat.h"

namespace invariant {

v1::TorusGenerator TorusGeneratorToProto(const TorusGeneratorSpec& g) {
  v1::TorusGenerator p;
  switch (g.kind) {
    case TorusGeneratorKind::kSignFlip:
      p.set_kind(v1::TorusGenerator::SIGN_FLIP);
      break;
    case TorusGeneratorKind::kPermutation:
      p.set_kind(v1::TorusGenerator::PERMUTATION);
      break;
    case TorusGeneratorKind::kShift:
      p.set_kind(v1::TorusGenerator::SHIFT);
      p.set_p(g.p);
      break;
  }
  for (int32_t c : g.coords) p.add_coords(c);
  for (int32_t v : g.permutation) p.add_permutation(v);
  return p;
}

absl::StatusOr<TorusGeneratorSpec> TorusGeneratorFromProto(const v1::TorusGenerator& p, int index) {
  TorusGeneratorSpec g;
  switch (p.kind()) {
    case v1::TorusGenerator::SIGN_FLIP:
      g.kind = TorusGeneratorKind::kSignFlip;
      break;
    case v1::TorusGenerator::PERMUTATION:
      g.kind = TorusGeneratorKind::kPermutation;
      break;
    case v1::TorusGenerator::SHIFT:
      g.kind = TorusGeneratorKind::kShift;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spectral.generators[", index,
                       "].kind: expected SIGN_FLIP, PERMUTATION or SHIFT, got ", p.kind()));
  }
  g.coords.assign(p.coords().begin(), p.coords().end());
  g.permutation.assign(p.permutation().begin(), p.permutation().end());
  g.p = p.p();
  return g;
}

v1::SpectralParams SpectralParamsToProto(const SpectralEncoder& encoder) {
  v1::SpectralParams p;
  const SpectralEncoderOptions& o = encoder.options();
  p.set_dim(o.dim);
  p.set_budget(static_cast<int32_t>(o.budget));
  for (const TorusGeneratorSpec& g : o.generators) *p.add_generators() = TorusGeneratorToProto(g);
  p.set_num_invariant(static_cast<int32_t>(encoder.d_out()));
  p.set_tolerance(o.tolerance);
  p.set_num_basis(encoder.info().num_basis_enumerated);
  p.set_max_level(encoder.info().max_level);
  return p;
}

absl::StatusOr<SpectralEncoderOptions> SpectralOptionsFromProto(const v1::SpectralParams& p) {
  SpectralEncoderOptions o;
  if (p.dim() < 1) {
    return absl::InvalidArgumentError(absl::StrCat("spectral.dim: expected >= 1, got ", p.dim()));
  }
  if (p.budget() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("spectral.budget: expected >= 1, got ", p.budget()));
  }
  if (p.tolerance() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spectral.tolerance: expected >= 0, got ", p.tolerance()));
  }
  o.dim = p.dim();
  o.budget = p.budget();
  o.tolerance = p.tolerance() > 0 ? p.tolerance() : 1e-6;
  for (int k = 0; k < p.generators_size(); ++k) {
    auto g = TorusGeneratorFromProto(p.generators(k), k);
    if (!g.ok()) return g.status();
    const absl::Status st = ValidateTorusGenerator(*g, o.dim, k);
    if (!st.ok()) return absl::InvalidArgumentError(absl::StrCat("spectral.", st.message()));
    o.generators.push_back(*std::move(g));
  }
  return o;
}

absl::StatusOr<std::unique_ptr<SpectralEncoder>> SpectralEncoderFromProto(
    const v1::SpectralParams& p, SpectralTensors tensors) {
  auto options = SpectralOptionsFromProto(p);
  if (!options.ok()) return options.status();
  SpectralEncoderInfo info;
  info.num_basis_enumerated = p.num_basis();
  info.max_level = p.max_level();
  auto encoder = SpectralEncoder::FromTensors(*options, info, std::move(tensors));
  if (!encoder.ok()) return encoder.status();
  if ((*encoder)->d_out() != p.num_invariant()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spectral.num_invariant: manifest says ", p.num_invariant(), ", tensor ",
        kSpectralCombinationIndexTensor, " defines ", (*encoder)->d_out(), " features"));
  }
  return encoder;
}

}  // namespace invariant
