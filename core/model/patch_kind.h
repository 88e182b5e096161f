// patch_kind.h: the "patch" encoder kind (bundle.proto PatchParams,
// core/encoders/patch_encoder.h, docs/math.md §10): its config checks and
// defaults, how a new model's bank is drawn from training patches, and how
// the encoder is rebuilt over a bundle's tensors. encoder_kinds.h's table
// holds these as the "patch" descriptor; the certificate rebuilds the
// encoder with LoadPatchEncoder to measure the per-patch map.
//
// Config (ValidatePatchConfig): encoder.input_shape must be [H, W, C];
// defaults stride 1, pool_grid 2, response THRESHOLD with threshold 0.25
// (0 means the default), template_kind DATA (GAUSSIAN for FOURIER),
// contrast_epsilon 1e-3, whitening_epsilon 0.1, statistics_patches 100000
// (at most kMaxStatisticsValues / (k·k·C));
// FOURIER and GAUSSIAN templates need sigma > 0; CDF needs num_bins (range
// 1 by default). encoder.group, when set, must act on k·k·C vectors with
// placement TEMPLATES (or AUTO resolving to it). encoder.patch.image_group,
// when set, must be a dihedral group of the H × W × C image, enumerated,
// placement not TEMPLATES; the loaded encoder is then the patch encoder
// averaged over its (at most 8) elements' images (OrbitAverageEncoder), the
// elements rebuilt from the spec, never stored. Errors are
// INVALID_ARGUMENT naming the field, e.g. "encoder.patch.patch_size must be
// in [1, 32], got 40".
//
// Draw (DrawPatchEncoder), every step seeded from encoder.seed so that every
// shard of a sharded run draws the same bank bit for bit:
//   1. when whiten or template_kind DATA: min(train_rows, kStatisticsImages)
//      preprocessed training images (draw_rows with encoder.seed), and
//      statistics_patches patches of them (SamplePatches, normalised when
//      normalize_patches; Rng::ForStream(seed, 3));
//   2. whiten: μ and the ZCA matrix W of those patches; else μ = 0, W = I;
//   3. templates t_j: DATA — the patches whitened (W(p − μ)), scaled to unit
//      length, refined by kmeans_iterations of spherical k-means
//      (Rng::ForStream(seed, 4)); GAUSSIAN (σ), SPHERE, STANDARD_NORMAL over
//      k·k·C values (Rng::ForStream(seed, 1));
//   4. w_j = W·t_j, b_j = −⟨w_j, μ⟩: "encoder/bias" 1 × m;
//   5. "encoder/bank" (m·r) × k·k·C, row j·r + k = g_k⁻¹·w_j (bank_tensors.h
//      DrawBank; every element of the group when enumerated), r recorded in
//      encoder.patch.num_group_elements.
//
// Thread-safety: free functions, reentrant (the k-means and the encoder use
// the default thread pool; their results do not depend on it).
#ifndef INVARIANT_CORE_MODEL_PATCH_KIND_H_
#define INVARIANT_CORE_MODEL_PATCH_KIND_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/encoders/encoder.h"
#include "core/encoders/patch_encoder.h"
#include "core/model/encoder_kind.h"
#include "core/model/model.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

inline constexpr char kPatchBiasTensor[] = "encoder/bias";
// Training images read for the patch statistics (μ, W, data templates).
inline constexpr int64_t kStatisticsImages = 10000;
// The most values the sampled statistics patches may hold
// (statistics_patches · k·k·C): 2 GiB of floats.
inline constexpr int64_t kMaxStatisticsValues = int64_t{1} << 29;

// The geometry of spec.patch over spec.input_shape; INVALID_ARGUMENT naming
// the field when the shape is not [H, W, C], H·W·C != input_dim (input_dim
// > 0 only), or ValidatePatchGeometry refuses it.
absl::StatusOr<PatchGeometry> PatchGeometryOf(const v1::EncoderSpec& spec, int64_t input_dim);

// The encoder options spec.patch describes (after ValidatePatchConfig).
absl::StatusOr<PatchOptions> PatchOptionsOf(const v1::EncoderSpec& spec, int64_t input_dim);

// The "patch" descriptor, a row of encoder_kinds.h's table: the three
// functions below.
extern const EncoderKind kPatchKind;

absl::Status ValidatePatchConfig(v1::EncoderSpec& spec);
absl::Status DrawPatchEncoder(v1::EncoderSpec& spec, const EncoderTrainingData& data,
                              ModelTensors& tensors);
absl::StatusOr<std::shared_ptr<const Encoder>> LoadPatchKind(const v1::EncoderSpec& spec,
                                                             int64_t input_dim,
                                                             const ModelTensors& tensors);

// The patch encoder over a bundle's tensors, typed (for the certificate;
// without the average over encoder.patch.image_group).
absl::StatusOr<std::shared_ptr<const PatchEncoder>> LoadPatchEncoder(const v1::EncoderSpec& spec,
                                                                     int64_t input_dim,
                                                                     const ModelTensors& tensors);

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_PATCH_KIND_H_
