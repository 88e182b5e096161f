// scalar_distribution.h: distributions over one real parameter of a group
// element (an angle in radians, a shift in pixels, a scale factor).
//
// The factory (group_factory.h) builds them from invariant.v1.ScalarDistribution
// and validates the parameters; the constructors here only store them:
//   Fixed(v)                  always v (draws nothing from the Rng)
//   Uniform(low, high)        uniform on [low, high), low < high
//   VonMises(mean, kappa)     p(θ) ∝ exp(κ cos(θ − mean)) on (mean−π, mean+π], κ ≥ 0
//                             (the draw is wrapped to (−π, π])
//   Normal(mean, stddev)      stddev > 0
//   LogNormal(lm, ls)         exp(N(lm, ls²)), ls > 0
// Every Sample() call consumes a fixed pattern of Rng draws for its kind, so
// seeded sequences repeat bit for bit.
#ifndef INVARIANT_CORE_GROUPS_SCALAR_DISTRIBUTION_H_
#define INVARIANT_CORE_GROUPS_SCALAR_DISTRIBUTION_H_

#include <string>

#include "core/base/random.h"

namespace invariant {

class ScalarDistribution {
 public:
  enum class Kind { kFixed, kUniform, kVonMises, kNormal, kLogNormal };

  static ScalarDistribution Fixed(double value) { return {Kind::kFixed, value, 0.0}; }
  static ScalarDistribution Uniform(double low, double high) { return {Kind::kUniform, low, high}; }
  static ScalarDistribution VonMises(double mean, double kappa) {
    return {Kind::kVonMises, mean, kappa};
  }
  static ScalarDistribution Normal(double mean, double stddev) {
    return {Kind::kNormal, mean, stddev};
  }
  static ScalarDistribution LogNormal(double log_mean, double log_stddev) {
    return {Kind::kLogNormal, log_mean, log_stddev};
  }

  Kind kind() const { return kind_; }
  // First parameter: value, low, mean, mean, log_mean by kind.
  double p0() const { return p0_; }
  // Second parameter: unused, high, kappa, stddev, log_stddev by kind.
  double p1() const { return p1_; }

  double Sample(Rng& rng) const;
  // E.g. "von_mises(mean=0, kappa=2)".
  std::string name() const;

  bool IsFixedAt(double value) const { return kind_ == Kind::kFixed && p0_ == value; }
  // X and −X have the same law (shifts): Fixed(0), Uniform(−h, h),
  // Normal(0, ·), VonMises(0, ·).
  bool SymmetricAboutZero() const;
  // X and −X have the same law modulo 2π (angles): the location (value,
  // mean, or the midpoint of a uniform range) is ≡ 0 or π mod 2π, or the
  // law is uniform on the circle (VonMises with κ = 0, Uniform of width 2π).
  bool SymmetricAngle() const;
  // X and 1/X have the same law (scales): Fixed(1) and LogNormal(0, ·).
  bool SymmetricUnderReciprocal() const;

 private:
  ScalarDistribution(Kind kind, double p0, double p1) : kind_(kind), p0_(p0), p1_(p1) {}

  Kind kind_;
  double p0_;
  double p1_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_SCALAR_DISTRIBUTION_H_
