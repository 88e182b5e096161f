#include "core/encoders/patch_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "Eigen/Dense"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/encoders/packed_dot.h"

namespace invariant {
namespace {

// Rows of the covariance accumulated together (converted to double).
constexpr int64_t kCovarianceBlock = 2048;
// Points assigned per k-means task.
constexpr int64_t kAssignBlock = 96;

// x / ‖x‖ in place (accumulated in double); a zero row stays zero.
void NormalizeRow(int64_t d, float* x) {
  double sq = 0.0;
  for (int64_t i = 0; i < d; ++i) sq += static_cast<double>(x[i]) * x[i];
  if (!(sq > 0.0)) return;
  const double inv = 1.0 / std::sqrt(sq);
  for (int64_t i = 0; i < d; ++i) x[i] = static_cast<float>(x[i] * inv);
}

}  // namespace

absl::StatusOr<FloatMatrix> SamplePatches(const PatchGeometry& g, const FloatMatrix& images,
                                          int64_t count, bool normalize, double contrast_epsilon,
                                          Rng& rng) {
  RETURN_IF_ERROR(ValidatePatchGeometry(g));
  if (images.rows() < 1) return absl::InvalidArgumentError("patch statistics: no images");
  if (images.cols() != g.image_dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch statistics: images have ", images.cols(), " values, the geometry ",
                     g.height, " × ", g.width, " × ", g.channels, " needs ", g.image_dim()));
  }
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch.statistics_patches must be >= 1, got ", count));
  }
  if (normalize && (!(contrast_epsilon > 0.0) || !std::isfinite(contrast_epsilon))) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch.contrast_epsilon must be finite and > 0, got ", contrast_epsilon));
  }
  const int64_t d = g.patch_dim();
  FloatMatrix out = FloatMatrix::Zeros(count, d);
  const uint64_t n = static_cast<uint64_t>(images.rows());
  const uint64_t positions = static_cast<uint64_t>(g.num_positions());
  for (int64_t q = 0; q < count; ++q) {
    const int64_t i = static_cast<int64_t>(rng.UniformInt(n));
    const int64_t p = static_cast<int64_t>(rng.UniformInt(positions));
    float* dst = out.mutable_row(q);
    ExtractPatch(g, images.row(i), p, dst);
    if (normalize) NormalizePatch(d, contrast_epsilon, dst);
  }
  return out;
}

absl::StatusOr<PatchWhitening> ComputeZcaWhitening(const FloatMatrix& patches, double epsilon) {
  const int64_t n = patches.rows(), d = patches.cols();
  if (n < 2 || d < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch whitening needs at least 2 patches, got ", n, " of dimension ", d));
  }
  if (!(epsilon > 0.0) || !std::isfinite(epsilon)) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch.whitening_epsilon must be finite and > 0, got ", epsilon));
  }
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(d);
  for (int64_t i = 0; i < n; ++i) {
    mean += patches.map().row(i).transpose().cast<double>();
  }
  mean /= static_cast<double>(n);
  // Covariance (1/(n − 1)) Σ (x − μ)(x − μ)ᵀ, block by block in double.
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(d, d);
  for (int64_t row0 = 0; row0 < n; row0 += kCovarianceBlock) {
    const int64_t rows = std::min(kCovarianceBlock, n - row0);
    Eigen::MatrixXd centred =
        patches.map().middleRows(row0, rows).cast<double>().rowwise() - mean.transpose();
    cov.selfadjointView<Eigen::Lower>().rankUpdate(centred.transpose());
  }
  Eigen::MatrixXd full = cov.selfadjointView<Eigen::Lower>();
  full /= static_cast<double>(n - 1);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(full);
  if (eig.info() != Eigen::Success) {
    return absl::InternalError("patch whitening: the eigendecomposition did not converge");
  }
  // Negative eigenvalues are rounding noise of a positive semidefinite matrix.
  const Eigen::VectorXd scale = (eig.eigenvalues().array().max(0.0) + epsilon).rsqrt().matrix();
  const Eigen::MatrixXd& v = eig.eigenvectors();
  Eigen::MatrixXd w = v * scale.asDiagonal() * v.transpose();
  w = 0.5 * (w + w.transpose());  // exactly symmetric
  PatchWhitening out;
  out.mean = FloatMatrix::FromEigen(mean.transpose());
  out.matrix = FloatMatrix::FromEigen(w);
  return out;
}

absl::StatusOr<FloatMatrix> SphericalKMeans(const FloatMatrix& points, int64_t k, int iterations,
                                            Rng& rng) {
  const int64_t n = points.rows(), d = points.cols();
  if (k < 1) return absl::InvalidArgumentError(absl::StrCat("k-means: k must be >= 1, got ", k));
  if (n < k || d < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("k-means: needs at least k = ", k, " points, got ", n, " of dimension ", d));
  }
  if (iterations < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch.kmeans_iterations must be >= 0, got ", iterations));
  }
  // k distinct rows, drawn without replacement (partial Fisher–Yates).
  FloatMatrix centres = FloatMatrix::Zeros(k, d);
  {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    for (int64_t c = 0; c < k; ++c) {
      const int64_t pick = c + static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n - c)));
      std::swap(order[static_cast<size_t>(c)], order[static_cast<size_t>(pick)]);
      float* dst = centres.mutable_row(c);
      std::memcpy(dst, points.row(order[static_cast<size_t>(c)]),
                  static_cast<size_t>(d) * sizeof(float));
      NormalizeRow(d, dst);
    }
  }
  std::vector<int32_t> assignment(static_cast<size_t>(n));
  std::vector<float> weight(static_cast<size_t>(n));
  std::vector<double> sums(static_cast<size_t>(k * d));
  for (int it = 0; it < iterations; ++it) {
    const PackedBank bank = PackedBank::Pack(centres);
    // Each point's centre depends only on the point and the centres (one
    // PackedDot order; ties go to the lowest index), so the split over
    // threads never changes it.
    const int64_t blocks = (n + kAssignBlock - 1) / kAssignBlock;
    ParallelFor(blocks, [&](int64_t block) {
      const int64_t row0 = block * kAssignBlock;
      const int64_t rows = std::min(kAssignBlock, n - row0);
      thread_local std::vector<float> tile;
      tile.resize(static_cast<size_t>(rows * k));
      PackedDot(bank, rows, points.row(row0), d, 0, k, tile.data(), k);
      for (int64_t q = 0; q < rows; ++q) {
        const float* s = tile.data() + q * k;
        int64_t best = 0;
        for (int64_t c = 1; c < k; ++c) {
          if (std::abs(s[c]) > std::abs(s[best])) best = c;
        }
        assignment[static_cast<size_t>(row0 + q)] = static_cast<int32_t>(best);
        weight[static_cast<size_t>(row0 + q)] = s[best];
      }
    });
    // c ← Σ ⟨c, x⟩ x over its points, in the points' order.
    std::fill(sums.begin(), sums.end(), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      double* sum = sums.data() + assignment[static_cast<size_t>(i)] * d;
      const double w = weight[static_cast<size_t>(i)];
      const float* x = points.row(i);
      for (int64_t t = 0; t < d; ++t) sum[t] += w * x[t];
    }
    for (int64_t c = 0; c < k; ++c) {
      const double* sum = sums.data() + c * d;
      double sq = 0.0;
      for (int64_t t = 0; t < d; ++t) sq += sum[t] * sum[t];
      float* dst = centres.mutable_row(c);
      if (sq > 0.0) {
        const double inv = 1.0 / std::sqrt(sq);
        for (int64_t t = 0; t < d; ++t) dst[t] = static_cast<float>(sum[t] * inv);
      } else {
        // An empty centre (or one whose points all project to 0): a new seed.
        const int64_t i = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)));
        std::memcpy(dst, points.row(i), static_cast<size_t>(d) * sizeof(float));
        NormalizeRow(d, dst);
      }
    }
  }
  return centres;
}

}  // namespace invariant
