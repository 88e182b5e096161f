#include "core/encoders/random_fourier_encoder.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/encoders/fast_math.h"

namespace invariant {

absl::StatusOr<std::unique_ptr<RandomFourierEncoder>> RandomFourierEncoder::Create(
    const RandomFourierOptions& options, Projector projector) {
  if (projector.num_templates() <= 0 || projector.dim() <= 0) {
    return absl::InvalidArgumentError("random_fourier: empty bank");
  }
  if (!(options.sigma > 0.0) || !std::isfinite(options.sigma)) {
    return absl::InvalidArgumentError(
        absl::StrCat("random_fourier: sigma must be finite and > 0, got ", options.sigma));
  }
  return std::unique_ptr<RandomFourierEncoder>(
      new RandomFourierEncoder(options, std::move(projector)));
}

RandomFourierEncoder::RandomFourierEncoder(const RandomFourierOptions& options, Projector projector)
    : Encoder(projector.dim(), 2 * projector.num_templates()),
      options_(options),
      projector_(std::move(projector)) {}

void RandomFourierEncoder::Encode(int64_t n, const float* x, float* out) const {
  const int64_t s = projector_.num_templates();
  const int64_t r = projector_.num_group_elements();
  const int64_t width = d_out();
  const float scale =
      static_cast<float>(1.0 / (static_cast<double>(r) * std::sqrt(static_cast<double>(s))));
  projector_.ForEachBlock(n, x, /*need_sq_norms=*/false, [&](const ProjectionBlock& b) {
    const int64_t cols = b.num_templates * r;
    std::vector<float> sines(static_cast<size_t>(cols));
    std::vector<float> cosines(static_cast<size_t>(cols));
    for (int64_t i = 0; i < b.num_rows; ++i) {
      FastSinCos(cols, b.values + i * b.stride, sines.data(), cosines.data());
      float* dst = out + (b.row_begin + i) * width;
      for (int64_t j = 0; j < b.num_templates; ++j) {
        const float* c = cosines.data() + j * r;
        const float* sn = sines.data() + j * r;
        dst[b.template_begin + j] = SumInFixedOrder(c, r) * scale;
        dst[s + b.template_begin + j] = SumInFixedOrder(sn, r) * scale;
      }
    }
  });
}

}  // namespace invariant
