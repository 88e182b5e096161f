#include "core/spectral/spec_avg.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "Eigen/Cholesky"
#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

constexpr int64_t kRowsPerBlock = 256;

absl::Status CheckRows(int64_t n, const char* what) {
  if (n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": need at least 1 training row, got ", n));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t DefaultSpecAvgBudget(int64_t n, double alpha) {
  // + 1e-9 so that exact powers (1000^(1/3)) are not floored to one below.
  const double d = std::floor(
      std::pow(static_cast<double>(std::max<int64_t>(n, 1)), 1.0 / (1.0 + alpha)) + 1e-9);
  return std::max<int64_t>(1, static_cast<int64_t>(d));
}

absl::StatusOr<Eigen::VectorXd> FitSpecAvg(const SpectralEncoder& encoder, int64_t n,
                                           const float* x, const float* y,
                                           const SpecAvgOptions& options) {
  const absl::Status st = CheckRows(n, "Spec-Avg");
  if (!st.ok()) return st;
  const int64_t d_out = encoder.d_out();
  double mean = 0.0;
  if (options.center_targets) {
    for (int64_t r = 0; r < n; ++r) mean += y[r];
    mean /= static_cast<double>(n);
  }
  Eigen::VectorXd c = Eigen::VectorXd::Zero(d_out);
  std::vector<double> block(static_cast<size_t>(kRowsPerBlock * d_out));
  for (int64_t r0 = 0; r0 < n; r0 += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, n - r0);
    encoder.EncodeDouble(rows, x + r0 * encoder.d_in(), block.data());
    for (int64_t r = 0; r < rows; ++r) {
      const double w = static_cast<double>(y[r0 + r]) - mean;
      c += w * Eigen::Map<const Eigen::VectorXd>(block.data() + r * d_out, d_out);
    }
  }
  c /= static_cast<double>(n);
  // Feature 0 is the constant function: its coefficient is the mean.
  if (options.center_targets) c(0) += mean;
  return c;
}

absl::StatusOr<Eigen::VectorXd> FitInvariantRidge(const SpectralEncoder& encoder, int64_t n,
                                                  const float* x, const float* y, double lambda) {
  const absl::Status st = CheckRows(n, "invariant ridge");
  if (!st.ok()) return st;
  if (!(lambda >= 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invariant ridge: lambda must be >= 0, got ", lambda));
  }
  const int64_t d_out = encoder.d_out();
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(d_out, d_out);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(d_out);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> block(kRowsPerBlock,
                                                                               d_out);
  for (int64_t r0 = 0; r0 < n; r0 += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, n - r0);
    encoder.EncodeDouble(rows, x + r0 * encoder.d_in(), block.data());
    const auto b = block.topRows(rows);
    gram.selfadjointView<Eigen::Lower>().rankUpdate(b.transpose());
    Eigen::VectorXd yb(rows);
    for (int64_t r = 0; r < rows; ++r) yb(r) = y[r0 + r];
    rhs.noalias() += b.transpose() * yb;
  }
  gram = gram.selfadjointView<Eigen::Lower>();
  gram /= static_cast<double>(n);
  rhs /= static_cast<double>(n);
  gram.diagonal().array() += lambda;
  Eigen::LDLT<Eigen::MatrixXd> ldlt(gram);
  if (ldlt.info() != Eigen::Success || !ldlt.isPositive()) {
    return absl::FailedPreconditionError(
        absl::StrCat("invariant ridge: the ", d_out, " × ", d_out,
                     " normal equations are singular; use lambda > 0 (got ", lambda, ")"));
  }
  Eigen::VectorXd c = ldlt.solve(rhs);
  if (!c.allFinite()) {
    return absl::FailedPreconditionError(
        absl::StrCat("invariant ridge: non-finite solution with lambda ", lambda));
  }
  return c;
}

void PredictSpectral(const SpectralEncoder& encoder, const Eigen::VectorXd& coefficients, int64_t n,
                     const float* x, float* out) {
  const int64_t d_out = encoder.d_out();
  std::vector<double> block(static_cast<size_t>(kRowsPerBlock * d_out));
  for (int64_t r0 = 0; r0 < n; r0 += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, n - r0);
    encoder.EncodeDouble(rows, x + r0 * encoder.d_in(), block.data());
    for (int64_t r = 0; r < rows; ++r) {
      out[r0 + r] = static_cast<float>(
          Eigen::Map<const Eigen::VectorXd>(block.data() + r * d_out, d_out).dot(coefficients));
    }
  }
}

absl::StatusOr<Eigen::VectorXd> SpecAvgAlgorithm1(const TorusBasis& basis,
                                                  const InvariantSubspaces& subspaces, int64_t n,
                                                  const float* x, const float* y) {
  const absl::Status st = CheckRows(n, "Spec-Avg (Algorithm 1)");
  if (!st.ok()) return st;
  const TorusFunctionTable table(basis.signed_indices);
  const int64_t num = basis.num_functions();
  Eigen::VectorXd tilde = Eigen::VectorXd::Zero(num);
  std::vector<double> phi(num);
  std::vector<double> scratch;
  for (int64_t r = 0; r < n; ++r) {
    table.EvaluatePoint(x + r * basis.dim, scratch, phi.data());
    tilde += static_cast<double>(y[r]) * Eigen::Map<const Eigen::VectorXd>(phi.data(), num);
  }
  tilde /= static_cast<double>(n);
  return ProjectToInvariant(subspaces, tilde);
}

}  // namespace invariant
