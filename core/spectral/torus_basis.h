// torus_basis.h: the Laplace–Beltrami eigenbasis of the flat torus [-1, 1)^d.
//
// Every basis function is a product over coordinates of one factor each:
//   1,  √2·cos(π k x_i)  or  √2·sin(π k x_i)   (k ≥ 1),
// orthonormal for the uniform probability measure on [-1, 1)^d, with
// eigenvalue π²·Σ k_i². A function is stored as a "signed multi-index" s of
// length d: s_i = 0 is the constant factor, s_i = +k is √2 cos(π k x_i),
// s_i = −k is √2 sin(π k x_i).
//
// Functions are grouped into eigenspaces by level m = Σ k_i² (eigenvalue
// π²·m), levels in increasing order, functions in a fixed lexicographic order
// within a level. A budget D keeps WHOLE eigenspaces only: levels are added
// while the running count stays ≤ D, and the first level that would overflow
// the budget is dropped entirely (the paper's rule "D_λ ≤ D"). So
// num_functions() ≤ D, with equality only when D falls on a level boundary.
// Limits (so a bad config fails fast instead of exhausting memory or time):
// D ≤ kMaxTorusBudget, and levels above kMaxTorusLevel are never enumerated
// (this only binds in dimensions 1 and 2, e.g. at most 513 functions for d = 1).
#ifndef INVARIANT_CORE_SPECTRAL_TORUS_BASIS_H_
#define INVARIANT_CORE_SPECTRAL_TORUS_BASIS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"

namespace invariant {

inline constexpr int64_t kMaxTorusBudget = int64_t{1} << 22;
inline constexpr int32_t kMaxTorusLevel = 1 << 16;

// One eigenspace: functions [begin, end) of the basis, eigenvalue π²·level.
struct TorusEigenspace {
  int32_t level = 0;  // m = Σ k_i²
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// A set of basis functions as signed multi-indices (rows of `signed_indices`,
// num_functions × dim), grouped into eigenspaces.
struct TorusBasis {
  int32_t dim = 0;
  IntMatrix signed_indices;  // num_functions × dim
  std::vector<TorusEigenspace> eigenspaces;

  int64_t num_functions() const { return signed_indices.rows(); }
  // Largest |s_i| over all functions (0 for the constant alone).
  int32_t max_frequency() const;
};

// Number of basis functions in the eigenspace of level m for dimension d
// (0 when no multi-index has Σ k_i² = m). Saturates at INT64_MAX. Cost
// O(dim·m^1.5); m > kMaxTorusLevel is outside the supported range and gives 0.
int64_t TorusEigenspaceSize(int32_t dim, int32_t level);

// All eigenspaces, in increasing eigenvalue, whose cumulative size is ≤
// budget (whole eigenspaces only; see the banner). Errors: dim < 1, budget < 1,
// budget > kMaxTorusBudget.
absl::StatusOr<TorusBasis> EnumerateTorusBasis(int32_t dim, int64_t budget);

// Every eigenspace with level ≤ max_level (no budget). Errors: dim < 1,
// max_level < 0 or > kMaxTorusLevel, more than kMaxTorusBudget functions.
absl::StatusOr<TorusBasis> EnumerateTorusBasisToLevel(int32_t dim, int32_t max_level);

// Value of one basis function (row `s`, length dim) at x (length dim).
double EvaluateTorusFunction(const int32_t* s, int32_t dim, const float* x);

// A compact, evaluation-friendly form of a list of signed multi-indices:
// each function keeps only its non-constant factors (coordinate, signed k).
class TorusFunctionTable {
 public:
  TorusFunctionTable() = default;
  // Rows of `signed_indices` (num_functions × dim).
  explicit TorusFunctionTable(const IntMatrix& signed_indices);

  int32_t dim() const { return dim_; }
  int64_t num_functions() const { return static_cast<int64_t>(factor_begin_.size()) - 1; }
  int32_t max_frequency() const { return max_frequency_; }

  // out[j] = φ_j(x) for one point x (length dim); `scratch` is resized to
  // the trig table size. Cost: dim·max_frequency cos/sin + Σ factors.
  void EvaluatePoint(const float* x, std::vector<double>& scratch, double* out) const;
  // n points (n × dim, row-major) into out (n × num_functions, row-major).
  void EvaluateBatch(int64_t n, const float* x, double* out) const;

 private:
  int32_t dim_ = 0;
  int32_t max_frequency_ = 0;
  std::vector<int64_t> factor_begin_{0};
  std::vector<int32_t> factor_coord_;
  std::vector<int32_t> factor_signed_k_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_SPECTRAL_TORUS_BASIS_H_
