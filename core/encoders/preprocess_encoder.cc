#include "core/encoders/preprocess_encoder.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/thread_pool.h"

namespace invariant {
namespace {
constexpr int64_t kValuesPerTask = 1 << 16;
}  // namespace

ColumnStatistics::ColumnStatistics(int64_t d)
    : d_(d), mean_(static_cast<size_t>(d), 0.0), m2_(static_cast<size_t>(d), 0.0) {}

void ColumnStatistics::Add(int64_t n, const float* rows) {
  if (n <= 0) return;
  std::vector<double> block_mean(static_cast<size_t>(d_), 0.0);
  std::vector<double> block_m2(static_cast<size_t>(d_), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < d_; ++c) block_mean[static_cast<size_t>(c)] += rows[i * d_ + c];
  }
  for (double& m : block_mean) m /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < d_; ++c) {
      const double centered = rows[i * d_ + c] - block_mean[static_cast<size_t>(c)];
      block_m2[static_cast<size_t>(c)] += centered * centered;
    }
  }
  const double na = static_cast<double>(count_), nb = static_cast<double>(n);
  const double total = na + nb;
  for (int64_t c = 0; c < d_; ++c) {
    const size_t k = static_cast<size_t>(c);
    const double delta = block_mean[k] - mean_[k];
    mean_[k] += delta * nb / total;
    m2_[k] += block_m2[k] + delta * delta * na * nb / total;
  }
  count_ += n;
}

FloatMatrix ColumnStatistics::Mean() const {
  FloatMatrix mean = FloatMatrix::Zeros(1, d_);
  for (int64_t c = 0; c < d_; ++c) mean.mutable_data()[c] = static_cast<float>(mean_[c]);
  return mean;
}

FloatMatrix ColumnStatistics::Scale() const {
  FloatMatrix scale = FloatMatrix::Zeros(1, d_);
  for (int64_t c = 0; c < d_; ++c) {
    const float sd = static_cast<float>(std::sqrt(m2_[c] / static_cast<double>(count_)));
    scale.mutable_data()[c] = (sd > 0.0f && std::isfinite(sd)) ? sd : 1.0f;
  }
  return scale;
}

absl::StatusOr<std::unique_ptr<PreprocessEncoder>> PreprocessEncoder::Create(
    const PreprocessOptions& options, int64_t d, FloatMatrix mean, FloatMatrix scale) {
  if (d <= 0) return absl::InvalidArgumentError(absl::StrCat("preprocess: d must be > 0, got ", d));
  if (options.center && (mean.rows() != 1 || mean.cols() != d)) {
    return absl::InvalidArgumentError(absl::StrCat("preprocess: mean must be 1 × ", d, ", got ",
                                                   mean.rows(), " × ", mean.cols()));
  }
  if (options.scale) {
    if (scale.rows() != 1 || scale.cols() != d) {
      return absl::InvalidArgumentError(absl::StrCat("preprocess: scale must be 1 × ", d, ", got ",
                                                     scale.rows(), " × ", scale.cols()));
    }
    for (int64_t i = 0; i < d; ++i) {
      const float v = scale.data()[i];
      if (!(v != 0.0f) || !std::isfinite(v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("preprocess: scale[", i, "] must be finite and non-zero, got ", v));
      }
    }
  }
  if (!options.center) mean = FloatMatrix();
  if (!options.scale) scale = FloatMatrix();
  return std::unique_ptr<PreprocessEncoder>(
      new PreprocessEncoder(options, d, std::move(mean), std::move(scale)));
}

absl::StatusOr<std::unique_ptr<PreprocessEncoder>> PreprocessEncoder::Fit(
    const PreprocessOptions& options, const FloatMatrix& data) {
  if (data.rows() <= 0 || data.cols() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("preprocess: fit needs rows, got ", data.rows(), " × ", data.cols()));
  }
  ColumnStatistics stats(data.cols());
  stats.Add(data.rows(), data.data());
  return Create(options, data.cols(), stats.Mean(), stats.Scale());
}

PreprocessEncoder::PreprocessEncoder(const PreprocessOptions& options, int64_t d, FloatMatrix mean,
                                     FloatMatrix scale)
    : Encoder(d, d), options_(options), mean_(std::move(mean)), scale_(std::move(scale)) {}

void PreprocessEncoder::Encode(int64_t n, const float* x, float* out) const {
  const int64_t d = d_in();
  // Row-wise: ~kValuesPerTask values per pool task.
  const int64_t rows_per_task = std::max<int64_t>(1, kValuesPerTask / d);
  ParallelFor((n + rows_per_task - 1) / rows_per_task, [&](int64_t task) {
    const int64_t end = std::min(n, (task + 1) * rows_per_task);
    for (int64_t i = task * rows_per_task; i < end; ++i) {
      const float* src = x + i * d;
      float* dst = out + i * d;
      for (int64_t c = 0; c < d; ++c) {
        float v = src[c];
        if (options_.center) v -= mean_.data()[c];
        if (options_.scale) v /= scale_.data()[c];
        dst[c] = v;
      }
      if (options_.l2_normalize) {
        double norm2 = 0.0;
        for (int64_t c = 0; c < d; ++c) norm2 += static_cast<double>(dst[c]) * dst[c];
        if (norm2 > 0.0) {
          const double inv = 1.0 / std::sqrt(norm2);
          for (int64_t c = 0; c < d; ++c) dst[c] = static_cast<float>(dst[c] * inv);
        }
      }
    }
  });
}

}  // namespace invariant
