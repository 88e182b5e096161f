#include "core/spectral/spectral_encoder.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace invariant {

SpectralEncoder::SpectralEncoder(SpectralEncoderOptions options, SpectralEncoderInfo info,
                                 SpectralTensors tensors, int64_t num_features)
    : Encoder(options.dim, num_features),
      options_(std::move(options)),
      info_(info),
      tensors_(std::move(tensors)),
      table_(tensors_.basis) {}

absl::StatusOr<std::unique_ptr<SpectralEncoder>> SpectralEncoder::Build(
    const SpectralEncoderOptions& options) {
  auto basis = EnumerateTorusBasis(options.dim, options.budget);
  if (!basis.ok()) return basis.status();
  InvariantSubspaceOptions sub_options;
  sub_options.tolerance = options.tolerance;
  auto subspaces = ComputeInvariantSubspaces(*basis, options.generators, sub_options);
  if (!subspaces.ok()) return subspaces.status();
  const SparseCombination& u = subspaces->combination;

  // Keep only the functions some feature uses, in basis order.
  std::vector<int64_t> stored_row(basis->num_functions(), -1);
  for (int64_t b : u.basis_index) stored_row[b] = 0;
  int64_t num_stored = 0;
  for (int64_t& r : stored_row) {
    if (r == 0) r = num_stored++;
  }
  SpectralTensors t;
  t.basis = IntMatrix::Zeros(num_stored, options.dim);
  for (int64_t j = 0; j < basis->num_functions(); ++j) {
    if (stored_row[j] < 0) continue;
    std::copy(basis->signed_indices.row(j), basis->signed_indices.row(j) + options.dim,
              t.basis.mutable_row(stored_row[j]));
  }
  const int64_t nnz = static_cast<int64_t>(u.value.size());
  t.combination_index = IntMatrix::Zeros(nnz, 2);
  t.combination_value = DoubleMatrix::Zeros(nnz, 1);
  for (int64_t e = 0; e < nnz; ++e) {
    t.combination_index.mutable_row(e)[0] = static_cast<int32_t>(stored_row[u.basis_index[e]]);
    t.combination_index.mutable_row(e)[1] = static_cast<int32_t>(u.feature_index[e]);
    t.combination_value.mutable_data()[e] = u.value[e];
  }
  SpectralEncoderInfo info;
  info.num_basis_enumerated = basis->num_functions();
  info.max_level = basis->eigenspaces.empty() ? 0 : basis->eigenspaces.back().level;
  return std::unique_ptr<SpectralEncoder>(
      new SpectralEncoder(options, info, std::move(t), u.num_features));
}

absl::StatusOr<std::unique_ptr<SpectralEncoder>> SpectralEncoder::FromTensors(
    const SpectralEncoderOptions& options, const SpectralEncoderInfo& info,
    SpectralTensors tensors) {
  if (options.dim < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("spectral encoder: dim must be >= 1, got ", options.dim));
  }
  if (tensors.basis.cols() != options.dim) {
    return absl::InvalidArgumentError(absl::StrCat(kSpectralBasisTensor, ": expected ", options.dim,
                                                   " columns, got ", tensors.basis.cols()));
  }
  const int32_t max_k = 1 << 15;
  for (int64_t e = 0; e < tensors.basis.size(); ++e) {
    const int32_t s = tensors.basis.data()[e];
    if (s < -max_k || s > max_k) {
      return absl::InvalidArgumentError(
          absl::StrCat(kSpectralBasisTensor, ": expected |entries| <= ", max_k, ", got ", s));
    }
  }
  const int64_t nnz = tensors.combination_index.rows();
  if (tensors.combination_index.cols() != 2 || tensors.combination_value.rows() != nnz ||
      tensors.combination_value.cols() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        kSpectralCombinationIndexTensor, " / ", kSpectralCombinationValueTensor,
        ": expected shapes nnz × 2 and nnz × 1, got ", tensors.combination_index.rows(), " × ",
        tensors.combination_index.cols(), " and ", tensors.combination_value.rows(), " × ",
        tensors.combination_value.cols()));
  }
  int64_t num_features = 0;
  for (int64_t e = 0; e < nnz; ++e) {
    const int32_t b = tensors.combination_index.row(e)[0];
    const int32_t f = tensors.combination_index.row(e)[1];
    if (b < 0 || b >= tensors.basis.rows() || f < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(kSpectralCombinationIndexTensor, " row ", e, ": expected basis row in [0, ",
                       tensors.basis.rows(), ") and feature >= 0, got (", b, ", ", f, ")"));
    }
    num_features = std::max<int64_t>(num_features, int64_t{f} + 1);
  }
  return std::unique_ptr<SpectralEncoder>(
      new SpectralEncoder(options, info, std::move(tensors), num_features));
}

void SpectralEncoder::EncodeDouble(int64_t n, const float* x, double* out) const {
  const int64_t num_stored = table_.num_functions();
  const int64_t nnz = tensors_.combination_index.rows();
  const int32_t* idx = tensors_.combination_index.data();
  const double* val = tensors_.combination_value.data();
  std::vector<double> phi(num_stored);
  std::vector<double> scratch;
  const int64_t d_in = this->d_in();
  const int64_t d_out = this->d_out();
  for (int64_t r = 0; r < n; ++r) {
    table_.EvaluatePoint(x + r * d_in, scratch, phi.data());
    double* o = out + r * d_out;
    std::fill(o, o + d_out, 0.0);
    for (int64_t e = 0; e < nnz; ++e) o[idx[2 * e + 1]] += val[e] * phi[idx[2 * e]];
  }
}

void SpectralEncoder::Encode(int64_t n, const float* x, float* out) const {
  constexpr int64_t kRowsPerBlock = 64;
  std::vector<double> block(static_cast<size_t>(kRowsPerBlock * d_out()));
  for (int64_t r0 = 0; r0 < n; r0 += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, n - r0);
    EncodeDouble(rows, x + r0 * d_in(), block.data());
    for (int64_t e = 0; e < rows * d_out(); ++e) {
      out[r0 * d_out() + e] = static_cast<float>(block[e]);
    }
  }
}

size_t SpectralEncoder::parameter_bytes() const {
  return tensors_.basis.bytes() + tensors_.combination_index.bytes() +
         tensors_.combination_value.bytes();
}

Eigen::VectorXd SpectralEncoder::ExpandToBasis(const Eigen::VectorXd& c) const {
  Eigen::VectorXd f = Eigen::VectorXd::Zero(tensors_.basis.rows());
  for (int64_t e = 0; e < tensors_.combination_index.rows(); ++e) {
    f(tensors_.combination_index.row(e)[0]) +=
        tensors_.combination_value.data()[e] * c(tensors_.combination_index.row(e)[1]);
  }
  return f;
}

}  // namespace invariant
