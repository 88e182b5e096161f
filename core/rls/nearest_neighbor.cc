#include "core/rls/nearest_neighbor.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/rls_internal.h"

namespace invariant {
namespace {

// Rows per block, chosen so that a converted block holds at most ~4M
// doubles (32 MB) while staying large enough for an efficient GEMM.
int64_t BlockRows(int64_t cap, int64_t d) {
  return std::max<int64_t>(1, std::min<int64_t>(cap, (int64_t{1} << 22) / std::max<int64_t>(d, 1)));
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> NearestNeighborIndices(const FloatMatrix& queries,
                                                            const FloatMatrix& references) {
  const int64_t r = references.rows();
  const int64_t d = references.cols();
  if (r < 1) {
    return absl::InvalidArgumentError(
        "NearestNeighborIndices: expected at least one reference row, got 0");
  }
  if (queries.cols() != d) {
    return absl::InvalidArgumentError(absl::StrCat("NearestNeighborIndices: expected queries with ",
                                                   d, " columns (as references), got ",
                                                   queries.cols()));
  }
  RETURN_IF_ERROR(
      rls_internal::CheckFinite("NearestNeighborIndices", "references", r, d, references.data()));
  RETURN_IF_ERROR(rls_internal::CheckFinite("NearestNeighborIndices", "queries", queries.rows(), d,
                                            queries.data()));
  const int64_t m = queries.rows();
  const int64_t query_rows = BlockRows(256, d);
  const int64_t reference_rows = BlockRows(4096, d);
  std::vector<int64_t> best_index(static_cast<size_t>(m), 0);
  std::vector<double> best_distance(static_cast<size_t>(m),
                                    std::numeric_limits<double>::infinity());
  // Column-major D × rows blocks: column j is one row of the input.
  Eigen::MatrixXd ref_block(d, std::min(r, reference_rows));
  Eigen::MatrixXd query_block(d, std::min(m, query_rows));
  Eigen::MatrixXd inner(ref_block.cols(), query_block.cols());
  for (int64_t r0 = 0; r0 < r; r0 += reference_rows) {
    const int64_t rn = std::min(reference_rows, r - r0);
    ref_block.leftCols(rn) =
        Eigen::Map<const Eigen::MatrixXf>(references.row(r0), d, rn).cast<double>();
    const Eigen::VectorXd ref_norms = ref_block.leftCols(rn).colwise().squaredNorm().transpose();
    for (int64_t q0 = 0; q0 < m; q0 += query_rows) {
      const int64_t qn = std::min(query_rows, m - q0);
      query_block.leftCols(qn) =
          Eigen::Map<const Eigen::MatrixXf>(queries.row(q0), d, qn).cast<double>();
      // inner (rn × qn) = ref_blockᵀ · query_block.
      rls_internal::GemmTN(rn, qn, d, 1.0, ref_block.data(), d, query_block.data(), d, 0.0,
                           inner.data(), inner.rows());
      for (int64_t q = 0; q < qn; ++q) {
        const double* column = inner.data() + q * inner.rows();
        double& best = best_distance[static_cast<size_t>(q0 + q)];
        int64_t& index = best_index[static_cast<size_t>(q0 + q)];
        for (int64_t j = 0; j < rn; ++j) {
          // ‖q‖² is common to the whole row and left out of the comparison.
          const double distance = ref_norms[j] - 2.0 * column[j];
          if (distance < best) {
            best = distance;
            index = r0 + j;
          }
        }
      }
    }
  }
  return best_index;
}

absl::StatusOr<std::vector<int32_t>> NearestNeighborClassify(
    const FloatMatrix& queries, const FloatMatrix& references,
    absl::Span<const int32_t> reference_labels) {
  if (static_cast<int64_t>(reference_labels.size()) != references.rows()) {
    return absl::InvalidArgumentError(
        absl::StrCat("NearestNeighborClassify: expected ", references.rows(),
                     " reference labels (one per reference row), got ", reference_labels.size()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> indices, NearestNeighborIndices(queries, references));
  std::vector<int32_t> labels(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    labels[i] = reference_labels[static_cast<size_t>(indices[i])];
  }
  return labels;
}

}  // namespace invariant
