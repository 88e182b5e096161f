#include "core/model/patch_kind.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/orbit_average_encoder.h"
#include "core/encoders/patch_statistics.h"
#include "core/encoders/projector.h"
#include "core/encoders/templates.h"
#include "core/groups/group_factory.h"
#include "core/model/bank_tensors.h"

namespace invariant {
namespace {

// The group acts on patches: k·k·C values, with the bank holding g_k⁻¹·w_j.
absl::Status CheckPatchGroup(const v1::EncoderSpec& spec, int64_t patch_dim) {
  const v1::GroupSpec& group = spec.group();
  if (group.kind_case() == v1::GroupSpec::KIND_NOT_SET) return absl::OkStatus();
  if (group.placement() == v1::GroupSpec::PLACEMENT_INPUT) {
    return absl::InvalidArgumentError(
        "encoder.group.placement must be PLACEMENT_TEMPLATES (or AUTO) for a patch encoder, got "
        "PLACEMENT_INPUT: the group acts on every patch through the bank g_k⁻¹·w_j");
  }
  absl::StatusOr<std::unique_ptr<GroupDistribution>> q = MakeGroupDistribution(group);
  if (!q.ok()) return absl::InvalidArgumentError(absl::StrCat("encoder.", q.status().message()));
  absl::StatusOr<Placement> placement = ResolvePlacement(group, **q);
  if (!placement.ok() || *placement != Placement::kTemplates) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.group must be applied to the templates for a patch encoder, but ",
                     (*q)->name(), " depends on the input"));
  }
  if ((*q)->action().dim() != patch_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "encoder.group must act on patches of k·k·C = ", patch_dim,
        " values (a dihedral or image group of patch_size × patch_size × channels), but it acts "
        "on vectors of length ",
        (*q)->action().dim()));
  }
  return absl::OkStatus();
}

// encoder.patch.tempo_factors: at most kMaxTempoFactors factors in
// [1/4, 4], distinct, with encoder.group the identity on the patches (the
// copies take the group's place in the bank).
constexpr int kMaxTempoFactors = 64;

absl::Status CheckTempoFactors(const v1::EncoderSpec& spec) {
  const v1::PatchParams& p = spec.patch();
  RETURN_IF_ERROR(CheckFieldRange("encoder.patch.tempo_factors (count)", p.tempo_factors_size(), 1,
                                  kMaxTempoFactors));
  for (int k = 0; k < p.tempo_factors_size(); ++k) {
    RETURN_IF_ERROR(CheckFieldRange(absl::StrCat("encoder.patch.tempo_factors[", k, "]"),
                                    p.tempo_factors(k), 0.25, 4.0));
    for (int l = 0; l < k; ++l) {
      if (p.tempo_factors(l) == p.tempo_factors(k)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "encoder.patch.tempo_factors must be distinct, got ", p.tempo_factors(k), " twice"));
      }
    }
  }
  if (spec.group().kind_case() != v1::GroupSpec::KIND_NOT_SET && !spec.group().has_identity()) {
    return absl::InvalidArgumentError(
        "encoder.group must be the identity (or unset) with encoder.patch.tempo_factors: the "
        "tempo-warped copies of the templates take the group's place in the bank");
  }
  return absl::OkStatus();
}

// The tempo-warped copy of a k_h × k_w × C filter: column x takes the values
// at ξ = c + (x − c)·a (c the centre column, linear interpolation, zero
// outside), so a pattern played a times faster spans 1/a of the columns;
// rescaled to the filter's own length (a copy's responses stay on the
// filter's scale, and factor 1 is the filter itself).
void WarpColumns(const PatchGeometry& g, double a, const float* in, float* out) {
  const int64_t kw = g.patch_width, c = g.channels;
  const double centre = 0.5 * static_cast<double>(kw - 1);
  double in_sq = 0, out_sq = 0;
  for (int64_t y = 0; y < g.patch_height; ++y) {
    const float* row = in + y * kw * c;
    float* dst = out + y * kw * c;
    for (int64_t x = 0; x < kw; ++x) {
      const double xi = centre + (static_cast<double>(x) - centre) * a;
      const double x0 = std::floor(xi);
      const double frac = xi - x0;
      const int64_t i0 = static_cast<int64_t>(x0);
      for (int64_t ch = 0; ch < c; ++ch) {
        double v = 0;
        if (i0 >= 0 && i0 < kw) v += (1.0 - frac) * row[i0 * c + ch];
        if (frac > 0 && i0 + 1 >= 0 && i0 + 1 < kw) v += frac * row[(i0 + 1) * c + ch];
        dst[x * c + ch] = static_cast<float>(v);
        out_sq += v * v;
      }
    }
    for (int64_t i = 0; i < kw * c; ++i) in_sq += static_cast<double>(row[i]) * row[i];
  }
  if (out_sq <= 0) return;
  const double scale = std::sqrt(in_sq / out_sq);
  for (int64_t i = 0; i < g.patch_dim(); ++i) out[i] = static_cast<float>(out[i] * scale);
}

// b = −⟨w, μ⟩ (μ the mean whitened-space patch), accumulated in double: the
// bias that centres a whitened filter's response.
float MeanBias(const float* w, const PatchWhitening& whitening, int64_t d) {
  double dot = 0;
  for (int64_t c = 0; c < d; ++c) dot += static_cast<double>(w[c]) * whitening.mean.row(0)[c];
  return static_cast<float>(-dot);
}

// The elements of encoder.patch.image_group: every turn and mirror of a
// dihedral group of the whole image (a group, so the average over them is
// invariant); INVALID_ARGUMENT naming the field otherwise.
absl::StatusOr<std::vector<GroupElement>> ImageGroupElements(
    const v1::EncoderSpec& spec, const PatchGeometry& g, std::unique_ptr<GroupDistribution>& q) {
  const v1::GroupSpec& group = spec.patch().image_group();
  if (!group.has_dihedral() || !group.enumerate()) {
    return absl::InvalidArgumentError(
        "encoder.patch.image_group must be a dihedral group of the image with enumerate: true "
        "(every element is averaged over)");
  }
  if (group.placement() == v1::GroupSpec::PLACEMENT_TEMPLATES) {
    return absl::InvalidArgumentError(
        "encoder.patch.image_group acts on the input image: placement must be PLACEMENT_AUTO or "
        "PLACEMENT_INPUT, got PLACEMENT_TEMPLATES");
  }
  // The same H, W and C, not only the same H·W·C: a 24 × 8 mirror of an
  // 8 × 8 × 3 image would reverse each row's colours.
  const v1::DihedralGroup& dihedral = group.dihedral();
  if (dihedral.height() != g.height || dihedral.width() != g.width ||
      dihedral.channels() != g.channels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "encoder.patch.image_group must act on the whole image: dihedral height, width, channels "
        "must be the input_shape [",
        g.height, ", ", g.width, ", ", g.channels, "], got [", dihedral.height(), ", ",
        dihedral.width(), ", ", dihedral.channels(), "]"));
  }
  absl::StatusOr<std::unique_ptr<GroupDistribution>> made = MakeGroupDistribution(group);
  if (!made.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.patch.image_group: ", made.status().message()));
  }
  q = *std::move(made);
  return q->Enumerate();
}

// The response p names, for a config (after its default) and for a loaded
// manifest alike; CDF's num_bins is checked here, so a manifest's too (2n + 1
// responses per template).
absl::StatusOr<PatchResponse> ResponseOf(const v1::PatchParams& p) {
  switch (p.response()) {
    case v1::PatchParams::RESPONSE_FOURIER:
      return PatchResponse::kFourier;
    case v1::PatchParams::RESPONSE_CDF:
      RETURN_IF_ERROR(CheckFieldRange("encoder.patch.num_bins", p.num_bins(), 1, 1000));
      return PatchResponse::kCdf;
    case v1::PatchParams::RESPONSE_THRESHOLD:
      return PatchResponse::kThreshold;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "encoder.patch.response must be RESPONSE_FOURIER, RESPONSE_CDF or RESPONSE_THRESHOLD, "
          "got ",
          static_cast<int>(p.response())));
  }
}

// Rows scaled to unit length (zero rows stay zero).
void NormalizeRows(FloatMatrix& a) {
  for (int64_t i = 0; i < a.rows(); ++i) {
    float* row = a.mutable_row(i);
    double sq = 0;
    for (int64_t c = 0; c < a.cols(); ++c) sq += static_cast<double>(row[c]) * row[c];
    if (sq <= 0) continue;
    const double inv = 1.0 / std::sqrt(sq);
    for (int64_t c = 0; c < a.cols(); ++c) row[c] = static_cast<float>(row[c] * inv);
  }
}

// The templates t_j of step 3, given the sampled patches (DATA only) and
// their whitening (when whiten).
absl::StatusOr<FloatMatrix> DrawTemplates(const v1::EncoderSpec& spec, int64_t patch_dim,
                                          const FloatMatrix& patches,
                                          const PatchWhitening* whitening) {
  const v1::PatchParams& p = spec.patch();
  if (p.template_kind() != v1::TEMPLATE_DATA) {
    TemplateOptions o;
    o.kind = static_cast<TemplateKind>(p.template_kind());
    o.num_templates = p.num_templates();
    o.sigma = p.sigma() > 0 ? p.sigma() : 1.0;
    Rng rng = Rng::ForStream(spec.seed(), 1);
    return SampleTemplates(o, patch_dim, nullptr, rng);
  }
  // W(p − μ) for every patch p (W symmetric: the rows of (P − μ)·W).
  FloatMatrix points = FloatMatrix::Zeros(patches.rows(), patch_dim);
  if (whitening != nullptr) {
    const Eigen::RowVectorXf mu = whitening->mean.map().row(0);
    points.mutable_map().noalias() = (patches.map().rowwise() - mu) * whitening->matrix.map();
  } else {
    points.mutable_map() = patches.map();
  }
  NormalizeRows(points);
  Rng rng = Rng::ForStream(spec.seed(), 4);
  return SphericalKMeans(points, p.num_templates(), p.kmeans_iterations(), rng);
}

}  // namespace

absl::StatusOr<PatchGeometry> PatchGeometryOf(const v1::EncoderSpec& spec, int64_t input_dim) {
  const auto& shape = spec.input_shape();
  if (shape.size() != 3 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.input_shape must be [H, W, C] (an image, channels last, every size "
                     ">= 1) for a patch encoder, got [",
                     absl::StrJoin(shape, ", "), "]"));
  }
  // Bounded before any product (a crafted manifest must not overflow
  // H·W·C): the image group's limits (group_factory.cc).
  RETURN_IF_ERROR(
      CheckFieldRange("encoder.input_shape[0] (H)", static_cast<double>(shape[0]), 1, 16384));
  RETURN_IF_ERROR(
      CheckFieldRange("encoder.input_shape[1] (W)", static_cast<double>(shape[1]), 1, 16384));
  RETURN_IF_ERROR(
      CheckFieldRange("encoder.input_shape[2] (C)", static_cast<double>(shape[2]), 1, 64));
  const v1::PatchParams& p = spec.patch();
  PatchGeometry g;
  g.height = shape[0];
  g.width = shape[1];
  g.channels = shape[2];
  g.patch_height = p.patch_height() > 0 ? p.patch_height() : p.patch_size();
  g.patch_width = p.patch_width() > 0 ? p.patch_width() : p.patch_size();
  g.stride = p.stride();
  g.pool_rows = p.pool_rows() > 0 ? p.pool_rows() : p.pool_grid();
  g.pool_cols = p.pool_cols() > 0 ? p.pool_cols() : p.pool_grid();
  if (input_dim > 0 && g.image_dim() != input_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.input_shape [", absl::StrJoin(shape, ", "), "] holds ", g.image_dim(),
                     " values, but input_dim is ", input_dim));
  }
  RETURN_IF_ERROR(CheckFieldRange(
      p.patch_height() > 0 ? "encoder.patch.patch_height" : "encoder.patch.patch_size",
      static_cast<double>(g.patch_height), 1, static_cast<double>(g.height)));
  RETURN_IF_ERROR(CheckFieldRange(
      p.patch_width() > 0 ? "encoder.patch.patch_width" : "encoder.patch.patch_size",
      static_cast<double>(g.patch_width), 1, static_cast<double>(g.width)));
  switch (p.padding()) {
    case v1::PatchParams::PADDING_VALID:
      break;
    case v1::PatchParams::PADDING_ZERO:
      g.pad_rows = g.patch_height - 1;
      g.pad_cols = g.patch_width - 1;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "encoder.patch.padding must be PADDING_VALID or PADDING_ZERO, got ", p.padding()));
  }
  if (p.pad_rows() != 0) {
    RETURN_IF_ERROR(CheckFieldRange("encoder.patch.pad_rows", p.pad_rows(), 0,
                                    static_cast<double>(g.patch_height - 1)));
    g.pad_rows = p.pad_rows();
  }
  if (p.pad_cols() != 0) {
    RETURN_IF_ERROR(CheckFieldRange("encoder.patch.pad_cols", p.pad_cols(), 0,
                                    static_cast<double>(g.patch_width - 1)));
    g.pad_cols = p.pad_cols();
  }
  RETURN_IF_ERROR(CheckFieldRange("encoder.patch.stride", static_cast<double>(g.stride), 1,
                                  static_cast<double>(std::max(g.height, g.width))));
  RETURN_IF_ERROR(
      CheckFieldRange(p.pool_rows() > 0 ? "encoder.patch.pool_rows" : "encoder.patch.pool_grid",
                      static_cast<double>(g.pool_rows), 1, static_cast<double>(g.positions_y())));
  RETURN_IF_ERROR(
      CheckFieldRange(p.pool_cols() > 0 ? "encoder.patch.pool_cols" : "encoder.patch.pool_grid",
                      static_cast<double>(g.pool_cols), 1, static_cast<double>(g.positions_x())));
  RETURN_IF_ERROR(ValidatePatchGeometry(g));
  return g;
}

absl::StatusOr<PatchOptions> PatchOptionsOf(const v1::EncoderSpec& spec, int64_t input_dim) {
  const v1::PatchParams& p = spec.patch();
  PatchOptions o;
  ASSIGN_OR_RETURN(o.geometry, PatchGeometryOf(spec, input_dim));
  ASSIGN_OR_RETURN(o.response, ResponseOf(p));
  o.num_bins = p.num_bins();
  o.range = p.range();
  o.threshold = p.threshold();
  o.normalize_patches = p.normalize_patches();
  o.contrast_epsilon = p.contrast_epsilon();
  switch (p.pooling()) {
    case v1::PatchParams::POOLING_MEAN:
      break;
    case v1::PatchParams::POOLING_MAX:
      if (o.response != PatchResponse::kThreshold) {
        return absl::InvalidArgumentError(
            "encoder.patch.pooling POOLING_MAX applies to RESPONSE_THRESHOLD only");
      }
      o.max_pooling = true;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "encoder.patch.pooling must be POOLING_MEAN or POOLING_MAX, got ", p.pooling()));
  }
  return o;
}

namespace {

// response (default THRESHOLD) and the parameter it reads (sigma, range or
// threshold, defaulted).
absl::Status CheckPatchResponse(v1::PatchParams& p) {
  if (p.response() == v1::PatchParams::RESPONSE_UNSPECIFIED) {
    p.set_response(v1::PatchParams::RESPONSE_THRESHOLD);
  }
  ASSIGN_OR_RETURN(PatchResponse response, ResponseOf(p));
  switch (response) {
    case PatchResponse::kFourier:
      RETURN_IF_ERROR(CheckFieldPositive("encoder.patch.sigma (RESPONSE_FOURIER)", p.sigma()));
      break;
    case PatchResponse::kCdf:
      if (p.range() == 0) p.set_range(1.0);
      RETURN_IF_ERROR(CheckFieldPositive("encoder.patch.range", p.range()));
      break;
    case PatchResponse::kThreshold:
      if (p.threshold() == 0) p.set_threshold(0.25);
      if (!(p.threshold() > 0) || !std::isfinite(p.threshold())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "encoder.patch.threshold must be finite and > 0 (0: the default 0.25), got ",
            p.threshold()));
      }
      break;
  }
  return absl::OkStatus();
}

// template_kind (default GAUSSIAN for RESPONSE_FOURIER, else DATA), its sigma,
// and kmeans_iterations (TEMPLATE_DATA only).
absl::Status CheckPatchTemplates(v1::PatchParams& p) {
  if (p.template_kind() == v1::TEMPLATE_KIND_UNSPECIFIED) {
    p.set_template_kind(p.response() == v1::PatchParams::RESPONSE_FOURIER ? v1::TEMPLATE_GAUSSIAN
                                                                          : v1::TEMPLATE_DATA);
  }
  switch (p.template_kind()) {
    case v1::TEMPLATE_GAUSSIAN:
      RETURN_IF_ERROR(CheckFieldPositive("encoder.patch.sigma (TEMPLATE_GAUSSIAN)", p.sigma()));
      break;
    case v1::TEMPLATE_SPHERE:
    case v1::TEMPLATE_STANDARD_NORMAL:
    case v1::TEMPLATE_DATA:
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "encoder.patch.template_kind must be one of GAUSSIAN, SPHERE, STANDARD_NORMAL, DATA, "
          "got ",
          v1::TemplateKind_Name(p.template_kind())));
  }
  if (p.template_kind() != v1::TEMPLATE_DATA && p.kmeans_iterations() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.patch.kmeans_iterations applies to TEMPLATE_DATA only, got ",
                     p.kmeans_iterations(), " with ", v1::TemplateKind_Name(p.template_kind())));
  }
  RETURN_IF_ERROR(
      CheckFieldRange("encoder.patch.kmeans_iterations", p.kmeans_iterations(), 0, 1000));
  return absl::OkStatus();
}

// The whitening and contrast epsilons (defaulted) and the sampled patches the
// statistics hold in memory.
absl::Status CheckPatchStatistics(v1::PatchParams& p, const PatchGeometry& g) {
  if (p.contrast_epsilon() == 0) p.set_contrast_epsilon(1e-3);
  RETURN_IF_ERROR(CheckFieldPositive("encoder.patch.contrast_epsilon", p.contrast_epsilon()));
  if (p.whitening_epsilon() == 0) p.set_whitening_epsilon(0.1);
  RETURN_IF_ERROR(CheckFieldPositive("encoder.patch.whitening_epsilon", p.whitening_epsilon()));
  if (p.statistics_patches() == 0) p.set_statistics_patches(100000);
  const double least = p.template_kind() == v1::TEMPLATE_DATA ? std::max(2, p.num_templates()) : 2;
  RETURN_IF_ERROR(
      CheckFieldRange("encoder.patch.statistics_patches", p.statistics_patches(), least, 1e7));
  // The sampled patches are held in memory as floats (and once more whitened).
  const double values = static_cast<double>(p.statistics_patches()) * g.patch_dim();
  if (values > kMaxStatisticsValues) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoder.patch.statistics_patches × k·k·C must be at most ",
                     kMaxStatisticsValues, " values (", kMaxStatisticsValues * 4 / (1 << 30),
                     " GiB of floats), got ", p.statistics_patches(), " × ", g.patch_dim()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePatchConfig(v1::EncoderSpec& e) {
  v1::PatchParams& p = *e.mutable_patch();
  if (p.stride() == 0) p.set_stride(1);
  if (p.pool_grid() == 0) p.set_pool_grid(2);
  ASSIGN_OR_RETURN(PatchGeometry g, PatchGeometryOf(e, 0));
  RETURN_IF_ERROR(CheckFieldRange("encoder.patch.num_templates", p.num_templates(), 1, 1e6));
  RETURN_IF_ERROR(CheckBankDtype(e));
  if (p.tempo_factors_size() > 0) {
    RETURN_IF_ERROR(CheckTempoFactors(e));
    p.set_num_group_elements(p.tempo_factors_size());
  } else {
    RETURN_IF_ERROR(
        CheckGroupElements(e, "encoder.patch.num_group_elements", p.num_group_elements()));
  }
  RETURN_IF_ERROR(CheckPatchResponse(p));
  RETURN_IF_ERROR(CheckPatchTemplates(p));
  RETURN_IF_ERROR(CheckPatchStatistics(p, g));
  if (p.has_image_group()) {
    std::unique_ptr<GroupDistribution> q;
    RETURN_IF_ERROR(ImageGroupElements(e, g, q).status());
  }
  RETURN_IF_ERROR(PatchOptionsOf(e, 0).status());           // the pooling against the response
  if (p.tempo_factors_size() > 0) return absl::OkStatus();  // the identity, checked above
  return CheckPatchGroup(e, g.patch_dim());
}

absl::Status DrawPatchEncoder(v1::EncoderSpec& spec, const EncoderTrainingData& data,
                              ModelTensors& t) {
  v1::PatchParams& p = *spec.mutable_patch();
  ASSIGN_OR_RETURN(PatchGeometry g, PatchGeometryOf(spec, data.input_dim));
  const int64_t d = g.patch_dim();
  const int64_t m = p.num_templates();
  FloatMatrix patches;
  PatchWhitening whitening;
  if (p.whiten() || p.template_kind() == v1::TEMPLATE_DATA) {
    const int64_t num_images = std::min(data.train_rows, kStatisticsImages);
    ASSIGN_OR_RETURN(FloatMatrix images, data.draw_rows(num_images, spec.seed()));
    Rng rng = Rng::ForStream(spec.seed(), 3);
    ASSIGN_OR_RETURN(patches, SamplePatches(g, images, p.statistics_patches(),
                                            p.normalize_patches(), p.contrast_epsilon(), rng));
    if (p.whiten()) {
      ASSIGN_OR_RETURN(whitening, ComputeZcaWhitening(patches, p.whitening_epsilon()));
    }
  }
  ASSIGN_OR_RETURN(FloatMatrix templates,
                   DrawTemplates(spec, d, patches, p.whiten() ? &whitening : nullptr));
  patches = FloatMatrix();
  if (templates.rows() != m || templates.cols() != d) {
    return absl::InternalError(absl::StrCat("patch templates are ", templates.rows(), " × ",
                                            templates.cols(), ", expected ", m, " × ", d));
  }
  FloatMatrix bias = FloatMatrix::Zeros(1, m);
  FloatMatrix w = templates;
  if (p.whiten()) {
    // w_j = W·t_j (W symmetric) and b_j = −⟨w_j, μ⟩, accumulated in double.
    w = FloatMatrix::Zeros(m, d);
    const FloatMatrix& white = whitening.matrix;
    std::vector<double> acc(static_cast<size_t>(d));
    for (int64_t j = 0; j < m; ++j) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t a = 0; a < d; ++a) {
        const double tja = templates.row(j)[a];
        const float* wa = white.row(a);
        for (int64_t c = 0; c < d; ++c) acc[static_cast<size_t>(c)] += tja * wa[c];
      }
      for (int64_t c = 0; c < d; ++c) {
        w.mutable_row(j)[c] = static_cast<float>(acc[static_cast<size_t>(c)]);
      }
      bias.mutable_data()[j] = MeanBias(w.row(j), whitening, d);
    }
  }
  if (p.tempo_factors_size() > 0) {
    // Row j·r + k: filter j warped by tempo_factors[k], its own bias
    // −⟨warped, μ⟩ when whitened (0 otherwise).
    const int64_t r = p.tempo_factors_size();
    FloatMatrix rows = FloatMatrix::Zeros(m * r, d);
    FloatMatrix row_bias = FloatMatrix::Zeros(1, m * r);
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t k = 0; k < r; ++k) {
        float* dst = rows.mutable_row(j * r + k);
        WarpColumns(g, p.tempo_factors(static_cast<int>(k)), w.row(j), dst);
        if (p.whiten()) row_bias.mutable_data()[j * r + k] = MeanBias(dst, whitening, d);
      }
    }
    StoreBank(spec, rows, t);
    p.set_num_group_elements(static_cast<int32_t>(r));
    t.f32[kPatchBiasTensor] = std::move(row_bias);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(DrawBankInto(spec, w, p, t, "the patches"));
  t.f32[kPatchBiasTensor] = std::move(bias);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const PatchEncoder>> LoadPatchEncoder(const v1::EncoderSpec& spec,
                                                                     int64_t input_dim,
                                                                     const ModelTensors& t) {
  const v1::PatchParams& p = spec.patch();
  ASSIGN_OR_RETURN(PatchOptions o, PatchOptionsOf(spec, input_dim));
  Projector projector;
  int64_t bias_cols = p.num_templates();
  if (p.tempo_factors_size() > 0) {
    RETURN_IF_ERROR(CheckTempoFactors(spec));
    if (p.num_group_elements() != p.tempo_factors_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("encoder.patch.num_group_elements must be the number of tempo_factors, ",
                       p.tempo_factors_size(), ", got ", p.num_group_elements()));
    }
    ASSIGN_OR_RETURN(projector, LoadBankProjector(spec, o.geometry.patch_dim(), p.num_templates(),
                                                  p.num_group_elements(), t));
    bias_cols = int64_t{p.num_templates()} * p.num_group_elements();
  } else {
    ASSIGN_OR_RETURN(projector,
                     LoadProjector(spec, o.geometry.patch_dim(), p.num_templates(),
                                   p.num_group_elements(), t, "the patch dimension k_h·k_w·C"));
  }
  ASSIGN_OR_RETURN(FloatMatrix bias,
                   RequireTensor(t.f32, kPatchBiasTensor, 1, bias_cols,
                                 p.tempo_factors_size() > 0 ? "1 × num_templates·tempo_factors"
                                                            : "1 × num_templates"));
  ASSIGN_OR_RETURN(
      std::unique_ptr<PatchEncoder> encoder,
      PatchEncoder::Create(o, std::move(projector),
                           std::vector<float>(bias.data(), bias.data() + bias.size())));
  return std::shared_ptr<const PatchEncoder>(std::move(encoder));
}

absl::StatusOr<std::shared_ptr<const Encoder>> LoadPatchKind(const v1::EncoderSpec& spec,
                                                             int64_t input_dim,
                                                             const ModelTensors& t) {
  ASSIGN_OR_RETURN(std::shared_ptr<const PatchEncoder> encoder,
                   LoadPatchEncoder(spec, input_dim, t));
  if (!spec.patch().has_image_group()) return std::shared_ptr<const Encoder>(std::move(encoder));
  std::unique_ptr<GroupDistribution> q;
  ASSIGN_OR_RETURN(std::vector<GroupElement> elements,
                   ImageGroupElements(spec, encoder->options().geometry, q));
  // The action lives in the distribution: share ownership of both.
  const std::shared_ptr<const GroupDistribution> group = std::move(q);
  std::shared_ptr<const GroupAction> action(group, &group->action());
  ASSIGN_OR_RETURN(
      std::unique_ptr<OrbitAverageEncoder> averaged,
      OrbitAverageEncoder::Create(std::move(encoder), std::move(action), std::move(elements)));
  return std::shared_ptr<const Encoder>(std::move(averaged));
}

const EncoderKind kPatchKind = {
    "patch", v1::EncoderSpec::kPatch, true, ValidatePatchConfig, DrawPatchEncoder, LoadPatchKind};

}  // namespace invariant
