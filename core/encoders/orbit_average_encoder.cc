#include "core/encoders/orbit_average_encoder.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace invariant {

absl::StatusOr<std::unique_ptr<OrbitAverageEncoder>> OrbitAverageEncoder::Create(
    std::shared_ptr<const Encoder> inner, std::shared_ptr<const GroupAction> action,
    std::vector<GroupElement> elements) {
  if (inner == nullptr) return absl::InvalidArgumentError("OrbitAverageEncoder: no inner encoder");
  if (action == nullptr) return absl::InvalidArgumentError("OrbitAverageEncoder: no group action");
  if (elements.empty()) {
    return absl::InvalidArgumentError("OrbitAverageEncoder: no group elements to average over");
  }
  if (action->dim() != inner->d_in()) {
    return absl::InvalidArgumentError(
        absl::StrCat("OrbitAverageEncoder: the group acts on vectors of length ", action->dim(),
                     ", but the encoder's input has ", inner->d_in(), " values"));
  }
  return std::unique_ptr<OrbitAverageEncoder>(
      new OrbitAverageEncoder(std::move(inner), std::move(action), std::move(elements)));
}

OrbitAverageEncoder::OrbitAverageEncoder(std::shared_ptr<const Encoder> inner,
                                         std::shared_ptr<const GroupAction> action,
                                         std::vector<GroupElement> elements)
    : Encoder(inner->d_in(), inner->d_out()),
      inner_(std::move(inner)),
      action_(std::move(action)),
      elements_(std::move(elements)) {}

void OrbitAverageEncoder::Encode(int64_t n, const float* x, float* out) const {
  if (n <= 0) return;
  const int64_t r = num_elements();
  const int64_t d = d_in();
  const int64_t f = d_out();
  const float inv_r = 1.0f / static_cast<float>(r);
  const int64_t block = std::min(kImageBlock, n);
  // Element-major: copy k of image i is row k·rows + i.
  std::vector<float> copies(static_cast<size_t>(block * r * d));
  std::vector<float> features(static_cast<size_t>(block * r * f));
  for (int64_t i0 = 0; i0 < n; i0 += block) {
    const int64_t rows = std::min(block, n - i0);
    for (int64_t k = 0; k < r; ++k) {
      action_->Apply(elements_[static_cast<size_t>(k)], rows, x + i0 * d,
                     copies.data() + k * rows * d);
    }
    inner_->Encode(rows * r, copies.data(), features.data());
    for (int64_t i = 0; i < rows; ++i) {
      float* o = out + (i0 + i) * f;
      const float* first = features.data() + i * f;
      std::copy(first, first + f, o);
      for (int64_t k = 1; k < r; ++k) {
        const float* row = features.data() + (k * rows + i) * f;
        for (int64_t c = 0; c < f; ++c) o[c] += row[c];
      }
      for (int64_t c = 0; c < f; ++c) o[c] *= inv_r;
    }
  }
}

}  // namespace invariant
