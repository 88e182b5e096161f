#include "core/spectral/torus_basis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/math_constants.h"

namespace invariant {
namespace {

constexpr double kSqrt2 = 1.41421356237309504880;

int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  return a + b;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) {
    return std::numeric_limits<int64_t>::max();
  }
  return a * b;
}

// sizes[m] = number of basis functions of level m, m = 0..max_level: the
// coefficients of (1 + 2 Σ_{k ≥ 1} z^{k²})^dim, saturating at INT64_MAX.
std::vector<int64_t> LevelSizes(int32_t dim, int32_t max_level) {
  std::vector<int64_t> ways(max_level + 1, 0);
  ways[0] = 1;
  std::vector<int64_t> next(max_level + 1);
  for (int32_t c = 0; c < dim; ++c) {
    std::fill(next.begin(), next.end(), 0);
    for (int32_t m = 0; m <= max_level; ++m) {
      if (ways[m] == 0) continue;
      next[m] = SaturatingAdd(next[m], ways[m]);
      for (int32_t k = 1; m + k * k <= max_level; ++k) {
        next[m + k * k] = SaturatingAdd(next[m + k * k], SaturatingMul(2, ways[m]));
      }
    }
    ways.swap(next);
  }
  return ways;
}

// Appends every multi-index k (k_i ≥ 0) with Σ_{i ≥ pos} k_i² = remaining,
// in lexicographic order of (k_0, k_1, …).
void MultiIndices(int32_t dim, int32_t pos, int32_t remaining, std::vector<int32_t>& k,
                  std::vector<std::vector<int32_t>>& out) {
  if (pos == dim) {
    if (remaining == 0) out.push_back(k);
    return;
  }
  for (int32_t v = 0; v * v <= remaining; ++v) {
    k[pos] = v;
    MultiIndices(dim, pos + 1, remaining - v * v, k, out);
  }
  k[pos] = 0;
}

// Appends the eigenspace of level m to rows.
void AppendLevel(int32_t dim, int32_t level, std::vector<int32_t>& rows) {
  std::vector<std::vector<int32_t>> indices;
  std::vector<int32_t> k(dim, 0);
  MultiIndices(dim, 0, level, k, indices);
  for (const auto& idx : indices) {
    std::vector<int32_t> nonzero;
    for (int32_t i = 0; i < dim; ++i) {
      if (idx[i] != 0) nonzero.push_back(i);
    }
    const int64_t patterns = int64_t{1} << nonzero.size();
    for (int64_t pattern = 0; pattern < patterns; ++pattern) {
      // Bit b of pattern (most significant = first non-zero coordinate) set
      // means sin on that coordinate; cos before sin.
      for (int32_t i = 0; i < dim; ++i) rows.push_back(idx[i]);
      int32_t* row = rows.data() + rows.size() - dim;
      for (size_t b = 0; b < nonzero.size(); ++b) {
        const bool use_sin = (pattern >> (nonzero.size() - 1 - b)) & 1;
        if (use_sin) row[nonzero[b]] = -row[nonzero[b]];
      }
    }
  }
}

TorusBasis MakeBasis(int32_t dim, const std::vector<int32_t>& levels) {
  std::vector<int32_t> rows;
  TorusBasis basis;
  basis.dim = dim;
  for (int32_t level : levels) {
    TorusEigenspace space;
    space.level = level;
    space.begin = static_cast<int64_t>(rows.size()) / dim;
    AppendLevel(dim, level, rows);
    space.end = static_cast<int64_t>(rows.size()) / dim;
    basis.eigenspaces.push_back(space);
  }
  const int64_t n = static_cast<int64_t>(rows.size()) / dim;
  basis.signed_indices = IntMatrix::Zeros(n, dim);
  std::copy(rows.begin(), rows.end(), basis.signed_indices.mutable_data());
  return basis;
}

}  // namespace

int32_t TorusBasis::max_frequency() const {
  int32_t m = 0;
  for (int64_t i = 0; i < signed_indices.size(); ++i) {
    m = std::max(m, std::abs(signed_indices.data()[i]));
  }
  return m;
}

int64_t TorusEigenspaceSize(int32_t dim, int32_t level) {
  if (dim < 1 || level < 0 || level > kMaxTorusLevel) return 0;
  return LevelSizes(dim, level)[level];
}

absl::StatusOr<TorusBasis> EnumerateTorusBasis(int32_t dim, int64_t budget) {
  if (dim < 1) {
    return absl::InvalidArgumentError(absl::StrCat("torus basis: dim must be >= 1, got ", dim));
  }
  if (budget < 1 || budget > kMaxTorusBudget) {
    return absl::InvalidArgumentError(
        absl::StrCat("torus basis: budget D must be in [1, ", kMaxTorusBudget, "], got ", budget));
  }
  // Sizes of levels 0..max_level in one pass, doubling max_level until the
  // cumulative count exceeds the budget (or the level cap is reached).
  std::vector<int64_t> sizes;
  for (int32_t max_level = 16;; max_level = std::min(2 * max_level, kMaxTorusLevel)) {
    sizes = LevelSizes(dim, max_level);
    int64_t total = 0;
    for (int64_t s : sizes) total = SaturatingAdd(total, s);
    if (total > budget || max_level == kMaxTorusLevel) break;
  }
  std::vector<int32_t> levels;
  int64_t total = 0;
  for (int32_t level = 0; level < static_cast<int32_t>(sizes.size()); ++level) {
    if (sizes[level] == 0) continue;  // no multi-index with this Σ k² (e.g. 7 for d ≤ 3)
    if (SaturatingAdd(total, sizes[level]) > budget) break;
    total += sizes[level];
    levels.push_back(level);
  }
  return MakeBasis(dim, levels);
}

absl::StatusOr<TorusBasis> EnumerateTorusBasisToLevel(int32_t dim, int32_t max_level) {
  if (dim < 1) {
    return absl::InvalidArgumentError(absl::StrCat("torus basis: dim must be >= 1, got ", dim));
  }
  if (max_level < 0 || max_level > kMaxTorusLevel) {
    return absl::InvalidArgumentError(absl::StrCat("torus basis: max_level must be in [0, ",
                                                   kMaxTorusLevel, "], got ", max_level));
  }
  const std::vector<int64_t> sizes = LevelSizes(dim, max_level);
  std::vector<int32_t> levels;
  int64_t total = 0;
  for (int32_t level = 0; level <= max_level; ++level) {
    if (sizes[level] == 0) continue;
    total = SaturatingAdd(total, sizes[level]);
    levels.push_back(level);
  }
  if (total > kMaxTorusBudget) {
    return absl::InvalidArgumentError(absl::StrCat("torus basis: levels <= ", max_level,
                                                   " in d = ", dim, " hold more than ",
                                                   kMaxTorusBudget, " functions"));
  }
  return MakeBasis(dim, levels);
}

double EvaluateTorusFunction(const int32_t* s, int32_t dim, const float* x) {
  double value = 1.0;
  for (int32_t i = 0; i < dim; ++i) {
    if (s[i] == 0) continue;
    const int32_t k = std::abs(s[i]);
    const double arg = (kPi * k) * static_cast<double>(x[i]);
    value *= kSqrt2 * (s[i] > 0 ? std::cos(arg) : std::sin(arg));
  }
  return value;
}

TorusFunctionTable::TorusFunctionTable(const IntMatrix& signed_indices)
    : dim_(static_cast<int32_t>(signed_indices.cols())) {
  factor_begin_.reserve(signed_indices.rows() + 1);
  for (int64_t j = 0; j < signed_indices.rows(); ++j) {
    const int32_t* row = signed_indices.row(j);
    for (int32_t i = 0; i < dim_; ++i) {
      if (row[i] == 0) continue;
      factor_coord_.push_back(i);
      factor_signed_k_.push_back(row[i]);
      max_frequency_ = std::max(max_frequency_, std::abs(row[i]));
    }
    factor_begin_.push_back(static_cast<int64_t>(factor_coord_.size()));
  }
}

void TorusFunctionTable::EvaluatePoint(const float* x, std::vector<double>& scratch,
                                       double* out) const {
  // scratch[(i·K + k − 1)·2 + {0: cos, 1: sin}] = √2·trig(π k x_i).
  const int32_t kmax = max_frequency_;
  scratch.resize(static_cast<size_t>(dim_) * kmax * 2);
  for (int32_t i = 0; i < dim_; ++i) {
    const double xi = static_cast<double>(x[i]);
    for (int32_t k = 1; k <= kmax; ++k) {
      const double arg = (kPi * k) * xi;
      double* cell = scratch.data() + (static_cast<size_t>(i) * kmax + (k - 1)) * 2;
      cell[0] = kSqrt2 * std::cos(arg);
      cell[1] = kSqrt2 * std::sin(arg);
    }
  }
  const int64_t num = num_functions();
  for (int64_t j = 0; j < num; ++j) {
    double value = 1.0;
    for (int64_t f = factor_begin_[j]; f < factor_begin_[j + 1]; ++f) {
      const int32_t s = factor_signed_k_[f];
      const int32_t k = s > 0 ? s : -s;
      value *= scratch[(static_cast<size_t>(factor_coord_[f]) * kmax + (k - 1)) * 2 + (s < 0)];
    }
    out[j] = value;
  }
}

void TorusFunctionTable::EvaluateBatch(int64_t n, const float* x, double* out) const {
  std::vector<double> scratch;
  const int64_t num = num_functions();
  for (int64_t r = 0; r < n; ++r) EvaluatePoint(x + r * dim_, scratch, out + r * num);
}

}  // namespace invariant
