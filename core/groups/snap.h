// snap.h: Snap(v), v rounded to the nearest integer when it lies within 1e-9
// of it, so that a transform landing on a grid point up to rounding reads
// that point exactly (the image and audio transforms' interpolation taps).
//
// Pure function; thread-safe.
#ifndef INVARIANT_CORE_GROUPS_SNAP_H_
#define INVARIANT_CORE_GROUPS_SNAP_H_

#include <cmath>

namespace invariant {

inline constexpr double kSnapTolerance = 1e-9;

inline double Snap(double v) {
  const double r = std::round(v);
  return std::abs(v - r) < kSnapTolerance ? r : v;
}

}  // namespace invariant

#endif  // INVARIANT_CORE_GROUPS_SNAP_H_
