#include "core/encoders/nystrom_encoder.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "Eigen/Eigenvalues"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/encoders/fast_math.h"

namespace invariant {
namespace {

absl::Status CheckSigma(double sigma) {
  if (!(sigma > 0.0) || !std::isfinite(sigma)) {
    return absl::InvalidArgumentError(
        absl::StrCat("nystrom: sigma must be finite and > 0, got ", sigma));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FloatMatrix> ComputeNystromProjection(const FloatMatrix& landmarks,
                                                     const NystromOptions& options) {
  if (landmarks.empty()) return absl::InvalidArgumentError("nystrom: no landmarks");
  if (absl::Status s = CheckSigma(options.sigma); !s.ok()) return s;
  if (!(options.eigen_cutoff >= 0.0 && options.eigen_cutoff < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("nystrom: eigen_cutoff must be in [0, 1), got ", options.eigen_cutoff));
  }
  const Eigen::MatrixXd z = landmarks.map().cast<double>();
  const Eigen::VectorXd norms = z.rowwise().squaredNorm();
  Eigen::MatrixXd k = z * z.transpose();
  const double inv_two_sigma2 = 1.0 / (2.0 * options.sigma * options.sigma);
  for (Eigen::Index i = 0; i < k.rows(); ++i) {
    for (Eigen::Index j = 0; j < k.cols(); ++j) {
      const double d2 = std::max(0.0, norms(i) + norms(j) - 2.0 * k(i, j));
      k(i, j) = std::exp(-d2 * inv_two_sigma2);
    }
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(k);
  if (eig.info() != Eigen::Success) {
    return absl::InternalError("nystrom: eigendecomposition of K_ZZ did not converge");
  }
  const Eigen::VectorXd& lambda = eig.eigenvalues();  // ascending
  const double lambda_max = lambda(lambda.size() - 1);
  const double floor = options.eigen_cutoff * lambda_max;
  std::vector<Eigen::Index> kept;
  for (Eigen::Index i = lambda.size() - 1; i >= 0; --i) {
    if (lambda(i) > floor && lambda(i) > 0.0) kept.push_back(i);
  }
  if (kept.empty()) return absl::InvalidArgumentError("nystrom: K_ZZ has no positive eigenvalue");
  FloatMatrix l = FloatMatrix::Zeros(static_cast<int64_t>(kept.size()), landmarks.rows());
  for (size_t row = 0; row < kept.size(); ++row) {
    const double w = 1.0 / std::sqrt(lambda(kept[row]));
    float* dst = l.mutable_row(static_cast<int64_t>(row));
    for (int64_t j = 0; j < landmarks.rows(); ++j) {
      dst[j] = static_cast<float>(w * eig.eigenvectors()(j, kept[row]));
    }
  }
  return l;
}

absl::StatusOr<std::unique_ptr<NystromEncoder>> NystromEncoder::Create(
    const NystromOptions& options, Projector projector, FloatMatrix projection) {
  if (projector.num_templates() <= 0 || projector.dim() <= 0) {
    return absl::InvalidArgumentError("nystrom: empty bank");
  }
  if (absl::Status s = CheckSigma(options.sigma); !s.ok()) return s;
  if (projection.cols() != projector.num_templates()) {
    return absl::InvalidArgumentError(
        absl::StrCat("nystrom: projection must have s = ", projector.num_templates(),
                     " columns (landmarks), got ", projection.cols()));
  }
  if (projection.rows() <= 0) return absl::InvalidArgumentError("nystrom: projection has rank 0");
  return std::unique_ptr<NystromEncoder>(
      new NystromEncoder(options, std::move(projector), std::move(projection)));
}

NystromEncoder::NystromEncoder(const NystromOptions& options, Projector projector,
                               FloatMatrix projection)
    : Encoder(projector.dim(), projection.rows()),
      options_(options),
      projector_(std::move(projector)),
      projection_(std::move(projection)),
      packed_projection_(PackedBank::Pack(projection_)),
      bank_sq_norms_(projector_.BankRowSquaredNorms()) {}

void NystromEncoder::Encode(int64_t n, const float* x, float* out) const {
  const int64_t s = projector_.num_templates();
  const int64_t r = projector_.num_group_elements();
  const int64_t rank = projection_.rows();
  const bool norms_per_element = projector_.placement() == Placement::kTemplates;
  const float neg_inv_two_sigma2 =
      static_cast<float>(-1.0 / (2.0 * options_.sigma * options_.sigma));
  const float inv_r = 1.0f / static_cast<float>(r);
  // Rows go in chunks whose means (chunk × s) stay within kMeansFloats.
  const int64_t chunk = std::max<int64_t>(1, std::min(n, kMeansFloats / s));
  std::vector<float> means(static_cast<size_t>(chunk * s));  // a_j(x), row-major
  for (int64_t row0 = 0; row0 < n; row0 += chunk) {
    const int64_t rows = std::min(chunk, n - row0);
    projector_.ForEachBlock(
        rows, x + row0 * d_in(), /*need_sq_norms=*/true, [&](const ProjectionBlock& b) {
          const int64_t cols = b.num_templates * r;
          std::vector<float> kernels(static_cast<size_t>(cols));  // exp arguments, then values
          std::vector<float> x2(static_cast<size_t>(r));
          for (int64_t i = 0; i < b.num_rows; ++i) {
            const float* p = b.values + i * b.stride;
            for (int64_t k = 0; k < r; ++k) x2[static_cast<size_t>(k)] = b.InputSqNorm(i, k);
            for (int64_t j = 0; j < b.num_templates; ++j) {
              const int64_t template_index = b.template_begin + j;
              // ‖z‖² per bank row (templates placement) or per template (input).
              const float* z2 = norms_per_element ? &bank_sq_norms_[template_index * r]
                                                  : &bank_sq_norms_[template_index];
              const int64_t z2_step = norms_per_element ? 1 : 0;
              const float* pj = p + j * r;
              float* kj = kernels.data() + j * r;
              for (int64_t k = 0; k < r; ++k) {
                const float d2 = x2[static_cast<size_t>(k)] + z2[k * z2_step] - 2.0f * pj[k];
                kj[k] = (d2 > 0.0f ? d2 : 0.0f) * neg_inv_two_sigma2;
              }
            }
            FastExp(cols, kernels.data(), kernels.data());
            float* a = means.data() + (b.row_begin + i) * s + b.template_begin;
            for (int64_t j = 0; j < b.num_templates; ++j) {
              a[j] = SumInFixedOrder(kernels.data() + j * r, r) * inv_r;
            }
          }
        });
    // ψ = A · Lᵀ for the rows of this chunk.
    ParallelPackedDot(packed_projection_, rows, means.data(), out + row0 * rank, rank);
  }
}

}  // namespace invariant
