#include "server/handlers/model_warmup.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"

namespace invariant::server {

absl::Status WarmUp(const std::string& path, const Model& model, int64_t rows) {
  if (rows <= 0 || model.input_dim() <= 0) return absl::OkStatus();
  constexpr uint64_t kWarmupSeed = 0x5eed3a4dULL;
  Rng rng(kWarmupSeed);
  std::vector<float> x(static_cast<size_t>(rows * model.input_dim()));
  for (float& v : x) v = static_cast<float>(rng.Normal());
  if (const audio::AudioFrontEnd* front_end = model.audio_front_end(); front_end != nullptr) {
    const int rate = front_end->spec().sample_rate();
    const double seconds =
        std::min(front_end->spec().clip_seconds(), front_end->spec().max_clip_seconds() > 0
                                                       ? front_end->spec().max_clip_seconds()
                                                       : front_end->spec().clip_seconds());
    std::vector<float> clip(
        static_cast<size_t>(std::max<int64_t>(1, std::llround(seconds * rate))));
    constexpr double kPi = 3.14159265358979323846;
    for (size_t i = 0; i < clip.size(); ++i) {
      clip[i] = static_cast<float>(0.5 * std::sin(2 * kPi * 440.0 * static_cast<double>(i) / rate) +
                                   0.05 * rng.Normal());
    }
    if (absl::Status s =
            front_end->Apply(clip, rate, x.data(), absl::StrCat(path, ": warmup clip"));
        !s.ok()) {
      return absl::FailedPreconditionError(s.message());
    }
  }
  std::vector<float> out;
  if (model.has_head()) {
    out.resize(static_cast<size_t>(rows * model.output_dim()));
    model.Predict(rows, x.data(), out.data());
  } else {
    out.resize(static_cast<size_t>(rows * model.feature_dim()));
    model.Featurize(rows, x.data(), out.data());
  }
  int64_t non_finite = 0;
  for (const float v : out) non_finite += std::isfinite(v) ? 0 : 1;
  if (non_finite > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": warmup: ", non_finite, " of ", out.size(), " outputs for ", rows,
                     " seeded rows are NaN or infinite; expected finite values"));
  }
  return absl::OkStatus();
}

}  // namespace invariant::server
