#include "core/rls/gram_accumulator.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/rls_internal.h"

namespace invariant {
namespace {

constexpr double kMagic = 0x47524D31;  // "GRM1"
constexpr double kFormatVersion = 1;
constexpr int64_t kHeaderSize = 5;
// Rows converted to double per BLAS call: bounds the scratch to
// kBlockRows · D doubles while keeping the rank-k update efficient.
constexpr int64_t kBlockRows = 512;

// A buffer entry that must be a positive integer (a dimension).
bool IsPositiveInteger(double v) { return v >= 1 && v < 9.0e15 && std::floor(v) == v; }

// The five header values: magic, version, D, T, N. DATA_LOSS naming the bad one.
absl::Status CheckHeader(const double* buffer) {
  if (buffer[0] != kMagic) {
    return absl::DataLossError(
        absl::StrCat("GramAccumulator buffer: expected magic ", kMagic, ", got ", buffer[0]));
  }
  if (buffer[1] != kFormatVersion) {
    return absl::DataLossError(absl::StrCat("GramAccumulator buffer: expected format version ",
                                            kFormatVersion, ", got ", buffer[1]));
  }
  // Caps D so that D(D+1)/2 cannot overflow and the allocation stays sane.
  if (!IsPositiveInteger(buffer[2]) || buffer[2] > 1.0e6 || !IsPositiveInteger(buffer[3]) ||
      buffer[3] > 1.0e6 ||
      !(buffer[4] >= 0 && std::floor(buffer[4]) == buffer[4] && buffer[4] < 9.0e15)) {
    return absl::DataLossError(absl::StrCat(
        "GramAccumulator buffer: expected D, T in [1, 1e6] and N >= 0 integers, got D = ",
        buffer[2], ", T = ", buffer[3], ", N = ", buffer[4]));
  }
  return absl::OkStatus();
}

}  // namespace

GramAccumulator::GramAccumulator(int64_t feature_dim, int64_t target_dim)
    : feature_dim_(feature_dim),
      target_dim_(target_dim),
      phi_t_phi_lower_(Eigen::MatrixXd::Zero(feature_dim, feature_dim)),
      phi_t_y_(Eigen::MatrixXd::Zero(feature_dim, target_dim)),
      phi_sum_(Eigen::VectorXd::Zero(feature_dim)),
      y_sum_(Eigen::VectorXd::Zero(target_dim)),
      y_squared_sum_(Eigen::VectorXd::Zero(target_dim)) {}

absl::StatusOr<GramAccumulator> GramAccumulator::Create(int64_t feature_dim, int64_t target_dim) {
  if (feature_dim < 1 || target_dim < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("GramAccumulator: expected feature_dim >= 1 and target_dim >= 1, got ",
                     feature_dim, " and ", target_dim));
  }
  return GramAccumulator(feature_dim, target_dim);
}

absl::Status GramAccumulator::CheckNotConsumed(const char* who) const {
  if (phi_t_phi_lower_.rows() == feature_dim_) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(who, ": the accumulator's Gram was taken (TakePhiTPhiLower)"));
}

absl::Status GramAccumulator::Add(int64_t n, const float* phi, const float* y) {
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GramAccumulator::Add: expected n >= 0 rows, got ", n));
  }
  RETURN_IF_ERROR(CheckNotConsumed("GramAccumulator::Add"));
  if (n == 0) return absl::OkStatus();
  if (phi == nullptr || y == nullptr) {
    return absl::InvalidArgumentError("GramAccumulator::Add: phi and y must not be null");
  }
  const int64_t d = feature_dim_;
  const int64_t t = target_dim_;
  RETURN_IF_ERROR(rls_internal::CheckFinite("GramAccumulator::Add", "phi", n, d, phi));
  RETURN_IF_ERROR(rls_internal::CheckFinite("GramAccumulator::Add", "y", n, t, y));

  // Row-major k × D doubles = column-major D × k with leading dimension D.
  Eigen::MatrixXd phi_block(d, std::min(n, kBlockRows));
  Eigen::MatrixXd y_block(t, std::min(n, kBlockRows));
  for (int64_t start = 0; start < n; start += kBlockRows) {
    const int64_t k = std::min(kBlockRows, n - start);
    phi_block.leftCols(k) = Eigen::Map<const Eigen::MatrixXf>(phi + start * d, d, k).cast<double>();
    y_block.leftCols(k) = Eigen::Map<const Eigen::MatrixXf>(y + start * t, t, k).cast<double>();
    rls_internal::SymmetricRankKUpdate(d, k, phi_block.data(), d, phi_t_phi_lower_.data());
    rls_internal::GemmNT(d, t, k, 1.0, phi_block.data(), d, y_block.data(), t, 1.0, phi_t_y_.data(),
                         d);
    phi_sum_ += phi_block.leftCols(k).rowwise().sum();
    y_sum_ += y_block.leftCols(k).rowwise().sum();
    y_squared_sum_ += y_block.leftCols(k).cwiseAbs2().rowwise().sum();
  }
  count_ += n;
  return absl::OkStatus();
}

absl::Status GramAccumulator::Merge(const GramAccumulator& other) {
  if (other.feature_dim_ != feature_dim_ || other.target_dim_ != target_dim_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GramAccumulator::Merge: expected feature_dim ", feature_dim_, " and target_dim ",
        target_dim_, ", got ", other.feature_dim_, " and ", other.target_dim_));
  }
  RETURN_IF_ERROR(CheckNotConsumed("GramAccumulator::Merge"));
  RETURN_IF_ERROR(other.CheckNotConsumed("GramAccumulator::Merge (other)"));
  phi_t_phi_lower_ += other.phi_t_phi_lower_;
  phi_t_y_ += other.phi_t_y_;
  phi_sum_ += other.phi_sum_;
  y_sum_ += other.y_sum_;
  y_squared_sum_ += other.y_squared_sum_;
  count_ += other.count_;
  return absl::OkStatus();
}

Eigen::MatrixXd GramAccumulator::PhiTPhi() const {
  Eigen::MatrixXd full = phi_t_phi_lower_.selfadjointView<Eigen::Lower>();
  return full;
}

int64_t GramAccumulator::SerializedSize(int64_t feature_dim, int64_t target_dim) {
  const int64_t d = feature_dim;
  const int64_t t = target_dim;
  return kHeaderSize + d + 2 * t + d * (d + 1) / 2 + d * t;
}

std::vector<double> GramAccumulator::Serialize() const {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(SerializedSize(feature_dim_, target_dim_)));
  SerializeTo([&out](const double* values, int64_t n) {
    out.insert(out.end(), values, values + n);
    return true;
  });
  return out;
}

bool GramAccumulator::SerializeTo(const std::function<bool(const double*, int64_t)>& write) const {
  const int64_t d = feature_dim_;
  const int64_t t = target_dim_;
  const double header[kHeaderSize] = {kMagic, kFormatVersion, static_cast<double>(d),
                                      static_cast<double>(t), static_cast<double>(count_)};
  if (!write(header, kHeaderSize) || !write(phi_sum_.data(), d) || !write(y_sum_.data(), t) ||
      !write(y_squared_sum_.data(), t)) {
    return false;
  }
  for (int64_t j = 0; j < d; ++j) {
    if (!write(phi_t_phi_lower_.data() + j * d + j, d - j)) return false;
  }
  return write(phi_t_y_.data(), d * t);
}

absl::Status GramAccumulator::MergeSerialized(const std::function<bool(double*, int64_t)>& read) {
  RETURN_IF_ERROR(CheckNotConsumed("GramAccumulator::MergeSerialized"));
  double header[kHeaderSize];
  if (!read(header, kHeaderSize)) {
    return absl::DataLossError("GramAccumulator input: ends inside its header");
  }
  RETURN_IF_ERROR(CheckHeader(header));
  const auto d = static_cast<int64_t>(header[2]);
  const auto t = static_cast<int64_t>(header[3]);
  if (d != feature_dim_ || t != target_dim_) {
    return absl::InvalidArgumentError(
        absl::StrCat("GramAccumulator::MergeSerialized: expected feature_dim ", feature_dim_,
                     " and target_dim ", target_dim_, ", got ", d, " and ", t));
  }
  const auto short_input = [](const char* part) {
    return absl::DataLossError(absl::StrCat("GramAccumulator input: ends inside ", part));
  };
  Eigen::VectorXd column(std::max(d, t));
  if (!read(column.data(), d)) return short_input("the feature sums");
  phi_sum_ += column.head(d);
  if (!read(column.data(), t)) return short_input("the target sums");
  y_sum_ += column.head(t);
  if (!read(column.data(), t)) return short_input("the squared target sums");
  y_squared_sum_ += column.head(t);
  for (int64_t j = 0; j < d; ++j) {
    if (!read(column.data(), d - j)) return short_input("the Gram matrix");
    phi_t_phi_lower_.col(j).tail(d - j) += column.head(d - j);
  }
  for (int64_t k = 0; k < t; ++k) {
    if (!read(column.data(), d)) return short_input("the feature-target products");
    phi_t_y_.col(k) += column.head(d);
  }
  count_ += static_cast<int64_t>(header[4]);
  return absl::OkStatus();
}

absl::StatusOr<GramAccumulator> GramAccumulator::Deserialize(absl::Span<const double> buffer) {
  if (buffer.size() < static_cast<size_t>(kHeaderSize)) {
    return absl::DataLossError(absl::StrCat("GramAccumulator buffer: expected at least ",
                                            kHeaderSize, " values, got ", buffer.size()));
  }
  RETURN_IF_ERROR(CheckHeader(buffer.data()));
  const int64_t d = static_cast<int64_t>(buffer[2]);
  const int64_t t = static_cast<int64_t>(buffer[3]);
  const int64_t expected = SerializedSize(d, t);
  if (static_cast<int64_t>(buffer.size()) != expected) {
    return absl::DataLossError(absl::StrCat("GramAccumulator buffer for D = ", d, ", T = ", t,
                                            ": expected ", expected, " values, got ",
                                            buffer.size()));
  }
  GramAccumulator acc(d, t);
  acc.count_ = static_cast<int64_t>(buffer[4]);
  const double* p = buffer.data() + kHeaderSize;
  acc.phi_sum_ = Eigen::Map<const Eigen::VectorXd>(p, d);
  p += d;
  acc.y_sum_ = Eigen::Map<const Eigen::VectorXd>(p, t);
  p += t;
  acc.y_squared_sum_ = Eigen::Map<const Eigen::VectorXd>(p, t);
  p += t;
  for (int64_t j = 0; j < d; ++j) {
    std::copy(p, p + (d - j), acc.phi_t_phi_lower_.data() + j * d + j);
    p += d - j;
  }
  acc.phi_t_y_ = Eigen::Map<const Eigen::MatrixXd>(p, d, t);
  return acc;
}

}  // namespace invariant
