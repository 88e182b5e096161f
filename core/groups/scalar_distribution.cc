#include "core/groups/scalar_distribution.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/base/math_constants.h"

namespace invariant {
namespace {

constexpr double kAngleTolerance = 1e-12;

// True when 2·location ≡ 0 mod 2π, i.e. location ≡ 0 or π.
bool HalfTurnMultiple(double location) {
  return std::abs(std::remainder(2.0 * location, kTwoPi)) < kAngleTolerance;
}

}  // namespace

double ScalarDistribution::Sample(Rng& rng) const {
  switch (kind_) {
    case Kind::kFixed:
      return p0_;
    case Kind::kUniform:
      return rng.Uniform(p0_, p1_);
    case Kind::kVonMises:
      return rng.VonMises(p0_, p1_);
    case Kind::kNormal:
      return rng.Normal(p0_, p1_);
    case Kind::kLogNormal:
      return std::exp(rng.Normal(p0_, p1_));
  }
  return p0_;
}

std::string ScalarDistribution::name() const {
  switch (kind_) {
    case Kind::kFixed:
      return absl::StrCat("fixed(", p0_, ")");
    case Kind::kUniform:
      return absl::StrCat("uniform(", p0_, ", ", p1_, ")");
    case Kind::kVonMises:
      return absl::StrCat("von_mises(mean=", p0_, ", kappa=", p1_, ")");
    case Kind::kNormal:
      return absl::StrCat("normal(mean=", p0_, ", stddev=", p1_, ")");
    case Kind::kLogNormal:
      return absl::StrCat("log_normal(log_mean=", p0_, ", log_stddev=", p1_, ")");
  }
  return "unknown";
}

bool ScalarDistribution::SymmetricAboutZero() const {
  switch (kind_) {
    case Kind::kFixed:
      return p0_ == 0.0;
    case Kind::kUniform:
      return p0_ == -p1_;
    case Kind::kVonMises:
    case Kind::kNormal:
      return p0_ == 0.0;
    case Kind::kLogNormal:
      return false;
  }
  return false;
}

bool ScalarDistribution::SymmetricAngle() const {
  switch (kind_) {
    case Kind::kFixed:
    case Kind::kNormal:
      return HalfTurnMultiple(p0_);
    case Kind::kVonMises:
      return p1_ == 0.0 || HalfTurnMultiple(p0_);
    case Kind::kUniform:
      return std::abs((p1_ - p0_) - kTwoPi) < kAngleTolerance ||
             HalfTurnMultiple(0.5 * (p0_ + p1_));
    case Kind::kLogNormal:
      return false;
  }
  return false;
}

bool ScalarDistribution::SymmetricUnderReciprocal() const {
  return IsFixedAt(1.0) || (kind_ == Kind::kLogNormal && p0_ == 0.0);
}

}  // namespace invariant
