// math_constants.h: π and 2π, one definition for every numeric module.
//
// Constants only; thread-safe by construction.
#ifndef INVARIANT_CORE_BASE_MATH_CONSTANTS_H_
#define INVARIANT_CORE_BASE_MATH_CONSTANTS_H_

namespace invariant {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kTwoPi = 6.283185307179586476925;

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_MATH_CONSTANTS_H_
