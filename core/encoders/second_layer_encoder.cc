#include "core/encoders/second_layer_encoder.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/thread_pool.h"
#include "core/encoders/fast_math.h"

namespace invariant {
namespace {
constexpr int64_t kRowBlock = 96;                  // rows encoded by the inner encoder at once
constexpr int64_t kSecondLayerBlockColumns = 256;  // frequencies per task (a multiple of 16)
}  // namespace

absl::StatusOr<std::unique_ptr<SecondLayerEncoder>> SecondLayerEncoder::Create(
    const SecondLayerOptions& options, std::shared_ptr<const Encoder> inner,
    FloatMatrix frequencies) {
  if (inner == nullptr) return absl::InvalidArgumentError("second_layer: no inner encoder");
  if (frequencies.rows() <= 0) {
    return absl::InvalidArgumentError("second_layer: num_features must be > 0, got 0");
  }
  if (frequencies.cols() != inner->d_out()) {
    return absl::InvalidArgumentError(absl::StrCat("second_layer: frequencies must have ",
                                                   inner->d_out(), " columns (inner d_out), got ",
                                                   frequencies.cols()));
  }
  if (!(options.sigma > 0.0) || !std::isfinite(options.sigma)) {
    return absl::InvalidArgumentError(
        absl::StrCat("second_layer: sigma must be finite and > 0, got ", options.sigma));
  }
  return std::unique_ptr<SecondLayerEncoder>(
      new SecondLayerEncoder(options, std::move(inner), std::move(frequencies)));
}

SecondLayerEncoder::SecondLayerEncoder(const SecondLayerOptions& options,
                                       std::shared_ptr<const Encoder> inner,
                                       FloatMatrix frequencies)
    : Encoder(inner->d_in(), 2 * frequencies.rows()),
      options_(options),
      inner_(std::move(inner)),
      frequencies_(std::move(frequencies)),
      packed_frequencies_(PackedBank::Pack(frequencies_)) {}

void SecondLayerEncoder::Encode(int64_t n, const float* x, float* out) const {
  const int64_t d_feat = inner_->d_out();
  const int64_t s2 = frequencies_.rows();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s2)));
  const int64_t block = std::min(n, kRowBlock);
  const int64_t col_blocks = (s2 + kSecondLayerBlockColumns - 1) / kSecondLayerBlockColumns;
  std::vector<float> features(static_cast<size_t>(block * d_feat));
  for (int64_t row0 = 0; row0 < n; row0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, n - row0);
    inner_->Encode(rows, x + row0 * d_in(), features.data());
    // Tasks over frequency blocks; cos/sin fused right after each tile.
    ParallelFor(col_blocks, [&](int64_t task) {
      const int64_t c0 = task * kSecondLayerBlockColumns;
      const int64_t cols = std::min(kSecondLayerBlockColumns, s2 - c0);
      std::vector<float> projections(static_cast<size_t>(rows * cols));
      std::vector<float> sines(static_cast<size_t>(cols));
      std::vector<float> cosines(static_cast<size_t>(cols));
      PackedDot(packed_frequencies_, rows, features.data(), d_feat, c0, c0 + cols,
                projections.data(), cols);
      for (int64_t i = 0; i < rows; ++i) {
        FastSinCos(cols, projections.data() + i * cols, sines.data(), cosines.data());
        float* dst = out + (row0 + i) * d_out();
        for (int64_t j = 0; j < cols; ++j) {
          dst[c0 + j] = cosines[static_cast<size_t>(j)] * scale;
          dst[s2 + c0 + j] = sines[static_cast<size_t>(j)] * scale;
        }
      }
    });
  }
}

}  // namespace invariant
