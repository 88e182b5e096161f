#include "core/encoders/cdf_encoder.h"

#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace invariant {

absl::StatusOr<std::unique_ptr<CdfEncoder>> CdfEncoder::Create(const CdfOptions& options,
                                                               Projector projector) {
  if (projector.num_templates() <= 0 || projector.dim() <= 0) {
    return absl::InvalidArgumentError("cdf: empty bank");
  }
  int64_t per_template = 1;
  switch (options.pooling) {
    case Pooling::kCdf:
      if (options.num_bins <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("cdf: num_bins must be > 0, got ", options.num_bins));
      }
      if (!(options.range > 0.0) || !std::isfinite(options.range)) {
        return absl::InvalidArgumentError(
            absl::StrCat("cdf: range must be finite and > 0, got ", options.range));
      }
      per_template = 2 * options.num_bins + 1;
      break;
    case Pooling::kMean:
    case Pooling::kSecondMoment:
    case Pooling::kMax:
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("cdf: unknown pooling ", static_cast<int>(options.pooling)));
  }
  return std::unique_ptr<CdfEncoder>(new CdfEncoder(options, std::move(projector), per_template));
}

CdfEncoder::CdfEncoder(const CdfOptions& options, Projector projector, int64_t per_template)
    : Encoder(projector.dim(), projector.num_templates() * per_template),
      options_(options),
      projector_(std::move(projector)),
      per_template_(per_template) {
  if (options_.pooling == Pooling::kCdf) {
    thresholds_ = CdfThresholds(options_.num_bins, options_.range);
  }
}

void CdfEncoder::Encode(int64_t n, const float* x, float* out) const {
  const int64_t r = projector_.num_group_elements();
  const int64_t width = d_out();
  projector_.ForEachBlock(n, x, /*need_sq_norms=*/false, [&](const ProjectionBlock& b) {
    std::vector<int32_t> counts(thresholds_.size() + 1);
    for (int64_t i = 0; i < b.num_rows; ++i) {
      const float* row = b.values + i * b.stride;
      float* dst = out + (b.row_begin + i) * width + b.template_begin * per_template_;
      for (int64_t j = 0; j < b.num_templates; ++j) {
        const float* p = row + j * r;
        float* o = dst + j * per_template_;
        switch (options_.pooling) {
          case Pooling::kCdf:
            PoolCdf(p, r, thresholds_, counts.data(), o);
            break;
          case Pooling::kMean:
            PoolMean(p, r, o);
            break;
          case Pooling::kSecondMoment:
            PoolSecondMoment(p, r, o);
            break;
          case Pooling::kMax:
            PoolMax(p, r, o);
            break;
        }
      }
    }
  });
}

}  // namespace invariant
