#include "core/groups/group_factory.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/math_constants.h"
#include "core/base/status_macros.h"
#include "core/groups/audio_distribution.h"
#include "core/groups/audio_transform.h"
#include "core/groups/cyclic_shift.h"
#include "core/groups/dihedral.h"
#include "core/groups/identity_group.h"
#include "core/groups/image_distribution.h"
#include "core/groups/image_transform.h"
#include "core/groups/permutation_actions.h"
#include "core/groups/permutation_distributions.h"
#include "core/groups/scalar_distribution.h"
#include "core/groups/sign_flip.h"

namespace invariant {
namespace {

constexpr int64_t kMaxBlocks = 65536;
constexpr int64_t kMaxMatrixN = 4096;
constexpr int64_t kMaxImageSide = 16384;
constexpr int64_t kMaxChannels = 64;
constexpr int64_t kMaxFrequencyBins = 16384;
constexpr int64_t kMaxFrames = int64_t{1} << 20;
// Bounds on scalar parameters that keep every element well inside double
// range and every transformed image meaningful.
constexpr double kMaxAbsParameter = 1e6;
constexpr double kMaxLogScale = 10.0;

absl::Status IntRange(const std::string& field, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be in [", lo, ", ", hi, "], got ", v));
  }
  return absl::OkStatus();
}

absl::Status DimLimit(const std::string& what, int64_t d) {
  if (d > kMaxGroupDim) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be at most ", kMaxGroupDim, " floats, got ", d));
  }
  return absl::OkStatus();
}

absl::Status Finite(const std::string& field, double v) {
  if (!std::isfinite(v) || std::abs(v) > kMaxAbsParameter) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be finite with |value| <= ", kMaxAbsParameter, ", got ", v));
  }
  return absl::OkStatus();
}

absl::Status Positive(const std::string& field, double v) {
  RETURN_IF_ERROR(Finite(field, v));
  if (!(v > 0.0)) return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got ", v));
  return absl::OkStatus();
}

enum class ScalarRole { kRotation, kTranslation, kScale };

const char* AllowedKinds(ScalarRole role) {
  switch (role) {
    case ScalarRole::kRotation:
      return "fixed, uniform, von_mises, normal";
    case ScalarRole::kTranslation:
      return "fixed, uniform, normal";
    case ScalarRole::kScale:
      return "fixed, uniform, log_normal";
  }
  return "";
}

absl::Status KindNotAllowed(const std::string& field, ScalarRole role, const char* got) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must set one of ", AllowedKinds(role), "; got ", got));
}

// Converts and validates one factor of an image law; `field` is its path.
absl::StatusOr<ScalarDistribution> MakeScalar(const std::string& field,
                                              const v1::ScalarDistribution& s, ScalarRole role) {
  using P = v1::ScalarDistribution;
  switch (s.kind_case()) {
    case P::kFixed: {
      const std::string f = absl::StrCat(field, ".fixed.value");
      if (role == ScalarRole::kScale) {
        RETURN_IF_ERROR(Positive(f, s.fixed().value()));
      } else {
        RETURN_IF_ERROR(Finite(f, s.fixed().value()));
      }
      return ScalarDistribution::Fixed(s.fixed().value());
    }
    case P::kUniform: {
      const double lo = s.uniform().low(), hi = s.uniform().high();
      RETURN_IF_ERROR(Finite(absl::StrCat(field, ".uniform.low"), lo));
      RETURN_IF_ERROR(Finite(absl::StrCat(field, ".uniform.high"), hi));
      if (!(lo < hi)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".uniform must have low < high, got low=", lo, ", high=", hi));
      }
      if (role == ScalarRole::kRotation && hi - lo > kTwoPi + 1e-12) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".uniform must span at most 2*pi radians, got low=", lo, ", high=", hi));
      }
      if (role == ScalarRole::kScale && !(lo > 0.0)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".uniform.low must be > 0 for a scale, got ", lo));
      }
      return ScalarDistribution::Uniform(lo, hi);
    }
    case P::kVonMises: {
      if (role != ScalarRole::kRotation) return KindNotAllowed(field, role, "von_mises");
      RETURN_IF_ERROR(Finite(absl::StrCat(field, ".von_mises.mean"), s.von_mises().mean()));
      const double kappa = s.von_mises().kappa();
      RETURN_IF_ERROR(Finite(absl::StrCat(field, ".von_mises.kappa"), kappa));
      if (kappa < 0.0) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".von_mises.kappa must be >= 0, got ", kappa));
      }
      return ScalarDistribution::VonMises(s.von_mises().mean(), kappa);
    }
    case P::kNormal: {
      if (role == ScalarRole::kScale) return KindNotAllowed(field, role, "normal");
      RETURN_IF_ERROR(Finite(absl::StrCat(field, ".normal.mean"), s.normal().mean()));
      RETURN_IF_ERROR(Positive(absl::StrCat(field, ".normal.stddev"), s.normal().stddev()));
      return ScalarDistribution::Normal(s.normal().mean(), s.normal().stddev());
    }
    case P::kLogNormal: {
      if (role != ScalarRole::kScale) return KindNotAllowed(field, role, "log_normal");
      const double lm = s.log_normal().log_mean(), ls = s.log_normal().log_stddev();
      if (!(std::abs(lm) <= kMaxLogScale)) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".log_normal.log_mean must be in [-",
                                                       kMaxLogScale, ", ", kMaxLogScale, "], got ",
                                                       lm));
      }
      if (!(ls > 0.0 && ls <= kMaxLogScale)) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".log_normal.log_stddev must be in (0, ", kMaxLogScale, "], got ", ls));
      }
      return ScalarDistribution::LogNormal(lm, ls);
    }
    case P::KIND_NOT_SET:
      return KindNotAllowed(field, role, "none");
  }
  return KindNotAllowed(field, role, "an unknown kind");
}

absl::StatusOr<std::unique_ptr<GroupDistribution>> MakeImage(const v1::ImageTransformGroup& p) {
  RETURN_IF_ERROR(IntRange("group.image.height", p.height(), 1, kMaxImageSide));
  RETURN_IF_ERROR(IntRange("group.image.width", p.width(), 1, kMaxImageSide));
  RETURN_IF_ERROR(IntRange("group.image.channels", p.channels(), 1, kMaxChannels));
  RETURN_IF_ERROR(DimLimit("group.image height*width*channels",
                           int64_t{p.height()} * p.width() * p.channels()));
  ImageTransformLaw law;
  if (p.has_rotation()) {
    ASSIGN_OR_RETURN(law.rotation,
                     MakeScalar("group.image.rotation", p.rotation(), ScalarRole::kRotation));
  }
  if (p.has_translation_x()) {
    ASSIGN_OR_RETURN(law.translation_x, MakeScalar("group.image.translation_x", p.translation_x(),
                                                   ScalarRole::kTranslation));
  }
  if (p.has_translation_y()) {
    ASSIGN_OR_RETURN(law.translation_y, MakeScalar("group.image.translation_y", p.translation_y(),
                                                   ScalarRole::kTranslation));
  }
  if (p.has_scale()) {
    ASSIGN_OR_RETURN(law.scale, MakeScalar("group.image.scale", p.scale(), ScalarRole::kScale));
  }
  if (p.stratified_rotation()) {
    if (law.rotation.kind() != ScalarDistribution::Kind::kUniform) {
      return absl::InvalidArgumentError(
          "group.image.stratified_rotation needs a uniform rotation law, got " +
          law.rotation.name());
    }
    law.stratified_rotation = true;
  }
  return std::make_unique<ImageTransformDistribution>(
      std::make_unique<ImageTransform>(p.height(), p.width(), p.channels()), law);
}

// `enumerate`: the integer shifts of the law (IntegerShifts), listed.
absl::StatusOr<std::unique_ptr<GroupDistribution>> MakeAudio(const v1::AudioTransformGroup& p,
                                                             bool enumerate) {
  RETURN_IF_ERROR(IntRange("group.audio.frequency_bins", p.frequency_bins(), 1, kMaxFrequencyBins));
  RETURN_IF_ERROR(IntRange("group.audio.frames", p.frames(), 1, kMaxFrames));
  RETURN_IF_ERROR(
      DimLimit("group.audio frequency_bins*frames", int64_t{p.frequency_bins()} * p.frames()));
  RETURN_IF_ERROR(Positive("group.audio.bins_per_octave", p.bins_per_octave()));
  AudioTransformLaw law;
  if (p.has_pitch_cents()) {
    ASSIGN_OR_RETURN(law.pitch_cents, MakeScalar("group.audio.pitch_cents", p.pitch_cents(),
                                                 ScalarRole::kTranslation));
  }
  if (p.has_tempo()) {
    ASSIGN_OR_RETURN(law.tempo, MakeScalar("group.audio.tempo", p.tempo(), ScalarRole::kScale));
  }
  if (p.has_time_shift()) {
    ASSIGN_OR_RETURN(law.time_shift, MakeScalar("group.audio.time_shift", p.time_shift(),
                                                ScalarRole::kTranslation));
  }
  auto action =
      std::make_unique<AudioTransform>(p.frequency_bins(), p.frames(), p.bins_per_octave());
  if (enumerate) {
    ASSIGN_OR_RETURN(std::vector<GroupElement> elements, IntegerShifts(*action, law));
    return std::make_unique<AudioTransformDistribution>(std::move(action), law,
                                                        std::move(elements));
  }
  return std::make_unique<AudioTransformDistribution>(std::move(action), law);
}

absl::StatusOr<std::unique_ptr<GroupDistribution>> MakeDihedral(const v1::DihedralGroup& p) {
  RETURN_IF_ERROR(IntRange("group.dihedral.height", p.height(), 1, kMaxImageSide));
  RETURN_IF_ERROR(IntRange("group.dihedral.width", p.width(), 1, kMaxImageSide));
  RETURN_IF_ERROR(IntRange("group.dihedral.channels", p.channels(), 1, kMaxChannels));
  RETURN_IF_ERROR(DimLimit("group.dihedral height*width*channels",
                           int64_t{p.height()} * p.width() * p.channels()));
  if (!p.turns() && !p.flips()) {
    return absl::InvalidArgumentError("group.dihedral must set turns, flips or both; got neither");
  }
  if (p.turns() && p.height() != p.width()) {
    return absl::InvalidArgumentError(
        absl::StrCat("group.dihedral.turns needs height == width, got height=", p.height(),
                     ", width=", p.width()));
  }
  return std::make_unique<UniformDihedral>(
      std::make_unique<DihedralAction>(p.height(), p.width(), p.channels()), p.turns(), p.flips());
}

// Builds the distribution without the enumerate check; `why_not_enumerable`
// receives the reason a non-enumerable distribution cannot be listed.
absl::StatusOr<std::unique_ptr<GroupDistribution>> MakeUnchecked(const v1::GroupSpec& spec,
                                                                 std::string& why_not_enumerable) {
  switch (spec.kind_case()) {
    case v1::GroupSpec::kPermutation: {
      const int64_t dim = spec.permutation().dim();
      RETURN_IF_ERROR(IntRange("group.permutation.dim", dim, 1, kMaxGroupDim));
      why_not_enumerable = absl::StrCat("permutation.dim must be <= ", kMaxEnumerableDegree,
                                        " to enumerate, got ", dim);
      return std::make_unique<UniformPermutations>(std::make_unique<CoordinatePermutation>(dim));
    }
    case v1::GroupSpec::kBlockPermutation: {
      const auto& p = spec.block_permutation();
      RETURN_IF_ERROR(
          IntRange("group.block_permutation.num_blocks", p.num_blocks(), 1, kMaxBlocks));
      RETURN_IF_ERROR(
          IntRange("group.block_permutation.block_size", p.block_size(), 1, kMaxGroupDim));
      RETURN_IF_ERROR(DimLimit("group.block_permutation num_blocks*block_size",
                               int64_t{p.num_blocks()} * p.block_size()));
      why_not_enumerable =
          absl::StrCat("block_permutation.num_blocks must be <= ", kMaxEnumerableDegree,
                       " to enumerate, got ", p.num_blocks());
      return std::make_unique<UniformPermutations>(
          std::make_unique<BlockPermutation>(p.num_blocks(), p.block_size()));
    }
    case v1::GroupSpec::kMatrixPermutation: {
      const auto& p = spec.matrix_permutation();
      RETURN_IF_ERROR(IntRange("group.matrix_permutation.n", p.n(), 1, kMaxMatrixN));
      const double sigma = p.noisy_sort_sigma();
      if (!std::isfinite(sigma) || sigma < 0.0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "group.matrix_permutation.noisy_sort_sigma must be finite and >= 0, got ", sigma));
      }
      auto action = std::make_unique<MatrixPermutation>(p.n());
      if (sigma > 0.0 || p.sort_rows()) {
        why_not_enumerable = "the (noisy) sort of matrix_permutation depends on the input";
        return std::make_unique<NoisySort>(std::move(action), sigma);
      }
      why_not_enumerable = absl::StrCat("matrix_permutation.n must be <= ", kMaxEnumerableDegree,
                                        " to enumerate, got ", p.n());
      return std::make_unique<UniformPermutations>(std::move(action));
    }
    case v1::GroupSpec::kCyclicShift: {
      const auto& p = spec.cyclic_shift();
      RETURN_IF_ERROR(IntRange("group.cyclic_shift.length", p.length(), 1, kMaxGroupDim));
      RETURN_IF_ERROR(IntRange("group.cyclic_shift.max_shift", p.max_shift(), 0,
                               (int64_t{p.length()} - 1) / 2));
      return std::make_unique<UniformShifts>(std::make_unique<CyclicShift>(p.length()),
                                             p.max_shift());
    }
    case v1::GroupSpec::kSignFlip: {
      const int64_t dim = spec.sign_flip().dim();
      RETURN_IF_ERROR(IntRange("group.sign_flip.dim", dim, 1, kMaxGroupDim));
      why_not_enumerable = absl::StrCat("sign_flip.dim must be <= ", kMaxEnumerableSignFlipDim,
                                        " to enumerate, got ", dim);
      return std::make_unique<UniformSignFlips>(std::make_unique<SignFlip>(dim));
    }
    case v1::GroupSpec::kImage:
      why_not_enumerable = "image transforms form a continuous group";
      return MakeImage(spec.image());
    case v1::GroupSpec::kAudio:
      return MakeAudio(spec.audio(), spec.enumerate());
    case v1::GroupSpec::kDihedral:
      return MakeDihedral(spec.dihedral());
    case v1::GroupSpec::kIdentity: {
      const int64_t dim = spec.identity().dim();
      RETURN_IF_ERROR(IntRange("group.identity.dim", dim, 1, kMaxGroupDim));
      return std::make_unique<IdentityDistribution>(std::make_unique<IdentityAction>(dim));
    }
    case v1::GroupSpec::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "group must set one of permutation, block_permutation, matrix_permutation, cyclic_shift, "
      "sign_flip, image, dihedral, identity, audio; got none");
}

}  // namespace

absl::StatusOr<std::unique_ptr<GroupDistribution>> MakeGroupDistribution(
    const v1::GroupSpec& spec) {
  std::string why_not_enumerable;
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> distribution,
                   MakeUnchecked(spec, why_not_enumerable));
  if (spec.enumerate() && !distribution->enumerable()) {
    return absl::InvalidArgumentError(
        absl::StrCat("group.enumerate requires an enumerable group: ", why_not_enumerable));
  }
  return distribution;
}

absl::StatusOr<Placement> ResolvePlacement(const v1::GroupSpec& spec,
                                           const GroupDistribution& distribution) {
  switch (spec.placement()) {
    case v1::GroupSpec::PLACEMENT_AUTO:
      return distribution.depends_on_input() ? Placement::kInput : Placement::kTemplates;
    case v1::GroupSpec::PLACEMENT_TEMPLATES:
      if (distribution.depends_on_input()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "group.placement PLACEMENT_TEMPLATES is not allowed for ", distribution.name(),
            ", which depends on the input; use PLACEMENT_AUTO or PLACEMENT_INPUT"));
      }
      return Placement::kTemplates;
    case v1::GroupSpec::PLACEMENT_INPUT:
      return Placement::kInput;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "group.placement must be one of PLACEMENT_AUTO, PLACEMENT_TEMPLATES, PLACEMENT_INPUT, got ",
      static_cast<int>(spec.placement())));
}

std::vector<GroupElement> DrawElements(const GroupDistribution& distribution, bool enumerate,
                                       int64_t r, Rng& rng) {
  if (enumerate && distribution.enumerable()) return distribution.Enumerate();
  return distribution.Sample(r < 0 ? 0 : r, rng);
}

}  // namespace invariant
