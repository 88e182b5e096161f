#include "train/pipeline/feature_map.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// Per-coordinate mean and standard deviation of the training rows. With
// per_channel, the statistics of each channel (the last axis of an
// `input_shape` [H, W, C], channels last; [H, W] is one channel) pooled over
// every pixel, repeated at every coordinate of that channel: a block of n
// rows of d values is n·d/C rows of the C channels.
absl::Status FitPreprocess(const v1::Preprocess& pre, absl::Span<const int64_t> input_shape,
                           DataPlan& plan, int64_t block_rows, ModelTensors& t) {
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
  RETURN_IF_ERROR(ForEachTrainBlock(plan, block_rows, 0, 1, [&](const TrainBlock& b) {
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

// m distinct training rows (seeded), preprocessed like every input. `field`
// names the count in errors (templates drawn from data, or landmarks).
absl::StatusOr<FloatMatrix> DrawLandmarks(int64_t m, uint64_t seed, DataPlan& plan,
                                          int64_t block_rows, const Encoder* preprocess,
                                          const char* field) {
  if (m > plan.train_rows) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be <= the training rows (", plan.train_rows, "), got ", m));
  }
  std::vector<int64_t> order = ShuffledIndices(plan.train_rows, seed);
  std::vector<int64_t> pick(order.begin(), order.begin() + m);
  std::sort(pick.begin(), pick.end());
  const int64_t d = plan.schema.dim;
  FloatMatrix raw = FloatMatrix::Zeros(m, d);
  int64_t ordinal = 0, next = 0;
  RETURN_IF_ERROR(ForEachTrainBlock(plan, block_rows, 0, 1, [&](const TrainBlock& b) {
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

absl::StatusOr<FeatureMap> BuildFeatureMap(const v1::TrainConfig& config, DataPlan& plan) {
  FeatureMap fm;
  v1::Manifest& m = fm.manifest;
  m.set_input_dim(plan.schema.dim);
  for (const std::string& column : plan.schema.column_names) m.add_input_columns(column);
  m.set_input_scaling(plan.schema.unit_byte_scaled ? v1::INPUT_SCALING_UNIT_BYTE
                                                   : v1::INPUT_SCALING_NONE);
  // Clips: the server turns every clip it is sent into a row by this front
  // end, as the trainer did (input_shape [frequency_bins, frames, 1]).
  if (plan.schema.audio.has_value()) *m.mutable_audio() = *plan.schema.audio;
  *m.mutable_preprocess() = config.preprocess();
  *m.mutable_encoder() = config.encoder();
  v1::EncoderSpec& spec = *m.mutable_encoder();
  if (spec.input_shape().empty()) {
    for (int64_t s : plan.schema.input_shape) spec.add_input_shape(s);
    if (spec.input_shape().empty()) spec.add_input_shape(plan.schema.dim);
  }
  const std::vector<int64_t> input_shape(spec.input_shape().begin(), spec.input_shape().end());
  RETURN_IF_ERROR(
      FitPreprocess(config.preprocess(), input_shape, plan, config.block_rows(), fm.tensors));
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
  data.train_rows = plan.train_rows;
  data.draw_rows = [&](int64_t m, uint64_t seed) {
    return DrawLandmarks(m, seed, plan, config.block_rows(), preprocess.get(),
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
