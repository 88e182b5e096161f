#include "core/encoders/haar_kernel.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

absl::Status CheckKernel(const BaseKernel& kernel) {
  if (kernel.kind == BaseKernelKind::kGaussian &&
      (!(kernel.sigma > 0.0) || !std::isfinite(kernel.sigma))) {
    return absl::InvalidArgumentError(
        absl::StrCat("haar kernel: sigma must be finite and > 0, got ", kernel.sigma));
  }
  return absl::OkStatus();
}

// Orbit of every row: result row i·r + k = g_k·x_i, in double.
Eigen::MatrixXd Orbits(const FloatMatrix& x, const GroupAction& action,
                       const std::vector<GroupElement>& elements) {
  const int64_t r = static_cast<int64_t>(elements.size());
  const int64_t d = x.cols();
  Eigen::MatrixXd orbits(x.rows() * r, d);
  std::vector<float> moved(static_cast<size_t>(x.rows() * d));
  for (int64_t k = 0; k < r; ++k) {
    action.Apply(elements[static_cast<size_t>(k)], x.rows(), x.data(), moved.data());
    for (int64_t i = 0; i < x.rows(); ++i) {
      for (int64_t c = 0; c < d; ++c) orbits(i * r + k, c) = moved[static_cast<size_t>(i * d + c)];
    }
  }
  return orbits;
}

// Sums k0 over blocks of `ra` rows of `a` × `rb` rows of `b`, divided by ra·rb.
DoubleMatrix BlockAveragedKernel(const Eigen::MatrixXd& a, int64_t ra, const Eigen::MatrixXd& b,
                                 int64_t rb, const BaseKernel& kernel) {
  const int64_t na = a.rows() / ra;
  const int64_t nb = b.rows() / rb;
  DoubleMatrix out = DoubleMatrix::Zeros(na, nb);
  const Eigen::VectorXd b_norms = b.rowwise().squaredNorm();
  const double inv_two_sigma2 = 1.0 / (2.0 * kernel.sigma * kernel.sigma);
  for (int64_t i = 0; i < na; ++i) {
    const Eigen::MatrixXd block = a.middleRows(i * ra, ra);
    const Eigen::MatrixXd dots = block * b.transpose();  // ra × (nb·rb)
    const Eigen::VectorXd a_norms = block.rowwise().squaredNorm();
    for (int64_t j = 0; j < nb; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < ra; ++p) {
        for (int64_t q = 0; q < rb; ++q) {
          const double dot = dots(p, j * rb + q);
          if (kernel.kind == BaseKernelKind::kLinear) {
            sum += dot;
          } else {
            const double d2 = std::max(0.0, a_norms(p) + b_norms(j * rb + q) - 2.0 * dot);
            sum += std::exp(-d2 * inv_two_sigma2);
          }
        }
      }
      out.mutable_row(i)[j] = sum / static_cast<double>(ra * rb);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<DoubleMatrix> BaseKernelMatrix(const FloatMatrix& a, const FloatMatrix& b,
                                              const BaseKernel& kernel) {
  if (a.cols() != b.cols()) {
    return absl::InvalidArgumentError(
        absl::StrCat("base kernel: row sets have dimensions ", a.cols(), " and ", b.cols()));
  }
  if (absl::Status s = CheckKernel(kernel); !s.ok()) return s;
  return BlockAveragedKernel(a.map().cast<double>(), 1, b.map().cast<double>(), 1, kernel);
}

absl::StatusOr<DoubleMatrix> HaarKernelMatrix(const FloatMatrix& a, const FloatMatrix& b,
                                              const GroupAction& action,
                                              const std::vector<GroupElement>& elements,
                                              const BaseKernel& kernel) {
  if (elements.empty()) return absl::InvalidArgumentError("haar kernel: no group elements");
  if (a.cols() != action.dim() || b.cols() != action.dim()) {
    return absl::InvalidArgumentError(absl::StrCat("haar kernel: rows have dimensions ", a.cols(),
                                                   " and ", b.cols(), ", action ", action.name(),
                                                   " expects ", action.dim()));
  }
  if (absl::Status s = CheckKernel(kernel); !s.ok()) return s;
  const int64_t r = static_cast<int64_t>(elements.size());
  if (kernel.kind == BaseKernelKind::kLinear) {
    // Σ_{a,b}⟨g_a x, g_b z⟩ / r² = ⟨mean orbit of x, mean orbit of z⟩.
    const Eigen::MatrixXd oa = Orbits(a, action, elements);
    const Eigen::MatrixXd ob = Orbits(b, action, elements);
    Eigen::MatrixXd ma(a.rows(), a.cols());
    Eigen::MatrixXd mb(b.rows(), b.cols());
    for (int64_t i = 0; i < a.rows(); ++i) ma.row(i) = oa.middleRows(i * r, r).colwise().mean();
    for (int64_t i = 0; i < b.rows(); ++i) mb.row(i) = ob.middleRows(i * r, r).colwise().mean();
    return BlockAveragedKernel(ma, 1, mb, 1, kernel);
  }
  return BlockAveragedKernel(Orbits(a, action, elements), r, Orbits(b, action, elements), r,
                             kernel);
}

}  // namespace invariant
