#include "train/pipeline/feature_map.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/templates.h"
#include "core/model/encoder_kinds.h"
#include "train/data/splits.h"

namespace invariant::train {
namespace {

// The rows a feature map is fitted on: every training row, or with
// held_out >= 0 those outside fold `held_out` (a cross-validation round's).
struct FitRows {
  int held_out = -1;
  int64_t count = 0;
};

// ForEachTrainBlock over the fitted rows only: with a held-out fold, each
// block is compacted to its rows outside that fold (x only: labels and y are
// null, first_ordinal counts fitted rows).
absl::Status ForEachFitBlock(DataPlan& plan, int64_t block_rows, const FitRows& rows,
                             const std::function<absl::Status(const TrainBlock&)>& fn) {
  if (rows.held_out < 0) return ForEachTrainBlock(plan, block_rows, 0, 1, fn);
  const int64_t d = plan.schema.dim;
  std::vector<float> kept;
  int64_t ordinal = 0;
  return ForEachTrainBlock(plan, block_rows, 0, 1, [&](const TrainBlock& b) {
    kept.resize(static_cast<size_t>(b.n * d));
    int64_t n = 0;
    for (int64_t i = 0; i < b.n; ++i) {
      if (plan.fold[static_cast<size_t>(b.first_ordinal + i)] == rows.held_out) continue;
      std::memcpy(kept.data() + n * d, b.x + i * d, sizeof(float) * d);
      ++n;
    }
    if (n == 0) return absl::OkStatus();
    TrainBlock out{n, kept.data(), nullptr, nullptr, ordinal};
    ordinal += n;
    return fn(out);
  });
}

// Per-coordinate mean and standard deviation of the training rows. With
// per_channel, the statistics of each channel (the last axis of an
// `input_shape` [H, W, C], channels last; [H, W] is one channel) pooled over
// every pixel, repeated at every coordinate of that channel: a block of n
// rows of d values is n·d/C rows of the C channels.
absl::Status FitPreprocess(const v1::Preprocess& pre, absl::Span<const int64_t> input_shape,
                           DataPlan& plan, const FitRows& rows, int64_t block_rows,
                           ModelTensors& t) {
  const int64_t d = plan.schema.dim;
  int64_t channels = 1;
  if (pre.per_channel()) {
    if (!pre.center() && !pre.scale()) {
      return absl::InvalidArgumentError(
          "preprocess.per_channel needs preprocess.center or preprocess.scale");
    }
    // An image: [H, W, C] (channels last) or [H, W] (one channel, as the
    // schema of grey images has it); any other shape has no channels.
    if (input_shape.size() != 2 && input_shape.size() != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "preprocess.per_channel needs an image shape [H, W, C] or [H, W] (encoder.input_shape "
          "or the data's), got one of ",
          input_shape.size(), " axes"));
    }
    channels = input_shape.size() == 3 ? input_shape.back() : 1;
    if (channels < 1 || d % channels != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "preprocess.per_channel needs an encoder.input_shape whose last axis (the channels) "
          "divides the input_dim ",
          d, ", got ", channels));
    }
  }
  if (!pre.center() && !pre.scale()) return absl::OkStatus();
  ColumnStatistics stats(pre.per_channel() ? channels : d);
  RETURN_IF_ERROR(ForEachFitBlock(plan, block_rows, rows, [&](const TrainBlock& b) {
    stats.Add(pre.per_channel() ? b.n * (d / channels) : b.n, b.x);
    return absl::OkStatus();
  }));
  FloatMatrix mean = stats.Mean(), scale = stats.Scale();
  if (pre.per_channel()) {  // repeat the channel statistics at every pixel
    FloatMatrix pixel_mean = FloatMatrix::Zeros(1, d), pixel_scale = FloatMatrix::Zeros(1, d);
    for (int64_t j = 0; j < d; ++j) {
      pixel_mean.mutable_data()[j] = mean.data()[j % channels];
      pixel_scale.mutable_data()[j] = scale.data()[j % channels];
    }
    mean = std::move(pixel_mean);
    scale = std::move(pixel_scale);
  }
  if (pre.center()) t.f32["preprocess/mean"] = std::move(mean);
  if (pre.scale()) t.f32["preprocess/scale"] = std::move(scale);
  return absl::OkStatus();
}

// m distinct fitted rows (seeded), preprocessed like every input. `field`
// names the count in errors (templates drawn from data, or landmarks).
absl::StatusOr<FloatMatrix> DrawLandmarks(int64_t m, uint64_t seed, DataPlan& plan,
                                          const FitRows& rows, int64_t block_rows,
                                          const Encoder* preprocess, const char* field) {
  if (m > rows.count) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be <= the training rows (", rows.count, "), got ", m));
  }
  std::vector<int64_t> order = ShuffledIndices(rows.count, seed);
  std::vector<int64_t> pick(order.begin(), order.begin() + m);
  std::sort(pick.begin(), pick.end());
  const int64_t d = plan.schema.dim;
  FloatMatrix raw = FloatMatrix::Zeros(m, d);
  int64_t ordinal = 0, next = 0;
  RETURN_IF_ERROR(ForEachFitBlock(plan, block_rows, rows, [&](const TrainBlock& b) {
    for (int64_t i = 0; i < b.n && next < m; ++i, ++ordinal) {
      if (ordinal != pick[static_cast<size_t>(next)]) continue;
      std::memcpy(raw.mutable_row(next++), b.x + i * d, sizeof(float) * d);
    }
    return absl::OkStatus();
  }));
  if (preprocess == nullptr) return raw;
  FloatMatrix out = FloatMatrix::Zeros(m, d);
  preprocess->Encode(m, raw.data(), out.mutable_data());
  return out;
}

}  // namespace

absl::StatusOr<FeatureMap> BuildFeatureMap(const v1::TrainConfig& config, DataPlan& plan,
                                           int held_out_fold) {
  FitRows rows{held_out_fold, plan.train_rows};
  if (held_out_fold >= 0) {
    if (held_out_fold >= plan.num_folds) {
      return absl::InvalidArgumentError(absl::StrCat("feature map: held-out fold ", held_out_fold,
                                                     " of a plan with ", plan.num_folds, " folds"));
    }
    for (int32_t f : plan.fold) rows.count -= (f == held_out_fold);
  }
  FeatureMap fm;
  v1::Manifest& m = fm.manifest;
  m.set_input_dim(plan.schema.dim);
  for (const std::string& column : plan.schema.column_names) m.add_input_columns(column);
  m.set_input_scaling(plan.schema.unit_byte_scaled ? v1::INPUT_SCALING_UNIT_BYTE
                                                   : v1::INPUT_SCALING_NONE);
  // Clips: the server turns every clip it is sent into a row by this front
  // end, as the trainer did (input_shape [frequency_bins, frames, 1]).
  if (plan.schema.audio.has_value()) *m.mutable_audio() = *plan.schema.audio;
  // Image files: likewise, by the image front end (input_shape [height,
  // width, channels]).
  if (plan.schema.image.has_value()) *m.mutable_image() = *plan.schema.image;
  *m.mutable_preprocess() = config.preprocess();
  *m.mutable_encoder() = config.encoder();
  v1::EncoderSpec& spec = *m.mutable_encoder();
  if (spec.input_shape().empty()) {
    for (int64_t s : plan.schema.input_shape) spec.add_input_shape(s);
    if (spec.input_shape().empty()) spec.add_input_shape(plan.schema.dim);
  }
  const std::vector<int64_t> input_shape(spec.input_shape().begin(), spec.input_shape().end());
  RETURN_IF_ERROR(
      FitPreprocess(config.preprocess(), input_shape, plan, rows, config.block_rows(), fm.tensors));
  std::unique_ptr<PreprocessEncoder> preprocess;
  const v1::Preprocess& pre = config.preprocess();
  if (pre.center() || pre.scale() || pre.l2_normalize()) {
    auto tensor = [&](const char* name) {
      auto it = fm.tensors.f32.find(name);
      return it == fm.tensors.f32.end() ? FloatMatrix() : it->second;
    };
    PreprocessOptions o{pre.center(), pre.scale(), pre.l2_normalize()};
    ASSIGN_OR_RETURN(preprocess,
                     PreprocessEncoder::Create(o, plan.schema.dim, tensor("preprocess/mean"),
                                               tensor("preprocess/scale")));
  }
  EncoderTrainingData data;
  data.input_dim = plan.schema.dim;
  data.train_rows = rows.count;
  data.draw_rows = [&](int64_t m, uint64_t seed) {
    return DrawLandmarks(m, seed, plan, rows, config.block_rows(), preprocess.get(),
                         spec.has_cdf()     ? "encoder.cdf.num_templates (TEMPLATE_DATA)"
                         : spec.has_patch() ? "encoder.patch (statistics images)"
                                            : "encoder.nystrom.num_landmarks");
  };
  ASSIGN_OR_RETURN(const EncoderKind* kind, FindEncoderKind(spec, "encoder"));
  RETURN_IF_ERROR(kind->draw(spec, data, fm.tensors));
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> first, Model::Assemble(m, fm.tensors));
  if (config.has_second_layer()) {
    v1::SecondLayerParams p = config.second_layer();
    Rng rng(p.seed());
    ASSIGN_OR_RETURN(
        FloatMatrix freqs,
        SampleGaussianTemplates(p.num_features(), first->feature_dim(), p.sigma(), rng));
    fm.tensors.f32["second_layer/frequencies"] = std::move(freqs);
    *m.mutable_second_layer() = p;
    ASSIGN_OR_RETURN(first, Model::Assemble(m, fm.tensors));
  }
  m.set_feature_dim(first->feature_dim());
  fm.model = std::move(first);
  return fm;
}

}  // namespace invariant::train
