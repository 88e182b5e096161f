// patch_encoder.h: invariant features of image patches, pooled over regions.
//
// docs/math.md §10 (the patch features Raj §4.3 and Mroueh §5 leave for
// future work; the encoding of Coates & Ng 2011) and §11 (the same on
// spectrograms: exact pooling over time–frequency translations). The input
// row is an H × W × C image, row-major, channels last. For every
// k_h × k_w × C patch p at stride s (positions P_y × P_x,
// P_y = (H + 2·pad_rows − k_h)/s + 1, top-left first, row-major; zeros in the
// padding), optionally normalised (contrast: p ← (p − mean p) /
// sqrt(var p + ε_c), mean and variance over all k_h·k_w·C values), every
// template j = 1..m and every group element g_1..g_r acting on patches:
//
//   u_{j,k}(p) = ⟨g_k⁻¹·w_j, p⟩ + b_{j,k}        (one PackedDot per patch)
//   φ_{j,c}(p) = (1/r) Σ_k h_c(u_{j,k}(p))        (the orbit average)
//   out[(ρ·f + c)·m + j] = mean over the positions of region ρ of φ_{j,c}
//                          (max_pooling, kThreshold only: (1/r) Σ_k of the
//                          largest h_c(u_{j,k}(p)) over the region)
//
// where the regions are a G_y × G_x grid over the positions (position (a, b)
// is in region (⌊a·G_y/P_y⌋, ⌊b·G_x/P_x⌋), ρ row-major), and the responses
// h_c, f per template, are
//   kFourier   (f = 2):      cos u / √m, sin u / √m;
//   kCdf       (f = 2n + 1): 1[u ≤ range·i/n], i = −n..n;
//   kThreshold (f = 2):      max(0, u − α), max(0, −u − α).
// d_out = G_y·G_x·f·m. Because the orbit average runs over g_k, φ(g·p) = φ(p)
// for every g of an enumerated group whose action permutes pixels
// (DihedralGroup), up to float summation order; pooling over positions makes
// the output invariant to shifts that keep every region's positions in it:
// with one region (G_y = G_x = 1) and an image whose content stays away from
// the edges, a translation of the image by a multiple of s permutes the
// patches that see content and leaves the pooled features unchanged (bit
// for bit for kCdf, whose counts are order-free).
//
// Layout and storage: the bank is a Projector in Placement::kTemplates
// ((m·r) × k_h·k_w·C, row j·r + k = g_k⁻¹·w_j, float32 or bf16); `bias`
// holds either the m values b_j (b_{j,k} = b_j) or m·r values, one per bank
// row (tempo-warped copies, whose biases differ; bundle.proto PatchParams).
//
// Computation: im2col (ExtractPatches) then PackedDot against the packed
// bank, tiled over (image, template block), the responses pooled in
// registers/cache as the tile is produced; no n × positions × m buffer.
//
// Batch independence: an image's output depends only on that image, bit for
// bit: every product goes through PackedDot, and positions are accumulated
// into a region in one fixed order (row-major), whatever the batch, tiling,
// thread or kernel path.
//
// Thread-safety: immutable after Create; Encode and EncodePatches are const
// and thread-safe, and run on the default thread pool (thread_pool.h).
#ifndef INVARIANT_CORE_ENCODERS_PATCH_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_PATCH_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/encoders/encoder.h"
#include "core/encoders/projector.h"

namespace invariant {

// Where the patches of an image are and how they are pooled. Patches are
// k_h × k_w × C; with padding the image is surrounded by pad_rows rows and
// pad_cols columns of zeros on every side (PADDING_ZERO: k_h − 1, k_w − 1, so
// that every position where the patch overlaps the image is one).
struct PatchGeometry {
  int64_t height = 0;        // H
  int64_t width = 0;         // W
  int64_t channels = 0;      // C
  int64_t patch_height = 0;  // k_h
  int64_t patch_width = 0;   // k_w
  int64_t stride = 1;        // s
  int64_t pool_rows = 1;     // G_y
  int64_t pool_cols = 1;     // G_x
  int64_t pad_rows = 0;
  int64_t pad_cols = 0;

  // k × k patches, a G × G grid, no padding.
  static PatchGeometry Square(int64_t h, int64_t w, int64_t c, int64_t k, int64_t s, int64_t g) {
    PatchGeometry geometry;
    geometry.height = h;
    geometry.width = w;
    geometry.channels = c;
    geometry.patch_height = geometry.patch_width = k;
    geometry.stride = s;
    geometry.pool_rows = geometry.pool_cols = g;
    return geometry;
  }

  int64_t patch_dim() const { return patch_height * patch_width * channels; }
  int64_t positions_y() const { return (height + 2 * pad_rows - patch_height) / stride + 1; }
  int64_t positions_x() const { return (width + 2 * pad_cols - patch_width) / stride + 1; }
  int64_t num_positions() const { return positions_y() * positions_x(); }
  int64_t num_regions() const { return pool_rows * pool_cols; }
  int64_t image_dim() const { return height * width * channels; }
  // The region (row-major over the G_y × G_x grid) of position (a, b).
  int64_t RegionOf(int64_t a, int64_t b) const {
    return (a * pool_rows / positions_y()) * pool_cols + (b * pool_cols / positions_x());
  }
};

// Errors (INVALID_ARGUMENT naming the field as in PatchParams): a size < 1,
// k_h (k_w) larger than H (W) plus twice the padding, a padding < 0 or of a
// whole patch or more, stride < 1, G_y (G_x) larger than P_y (P_x).
absl::Status ValidatePatchGeometry(const PatchGeometry& g);

// Writes the P_y·P_x patches of one image (image_dim() floats) as rows of
// `patches` (num_positions() × patch_dim(), row-major; a patch is its k_h
// rows of k_w·C values, i.e. a k_h × k_w × C image, channels last; zeros
// where it lies in the padding).
void ExtractPatches(const PatchGeometry& g, const float* image, float* patches);

// The patch at position p (row-major over P_y × P_x) of one image.
void ExtractPatch(const PatchGeometry& g, const float* image, int64_t p, float* dst);

// p ← (p − mean p) / sqrt(var p + epsilon) over the d values of p (mean and
// population variance accumulated in double, in a fixed order of partial
// sums).
void NormalizePatch(int64_t d, double epsilon, float* p);

enum class PatchResponse { kFourier = 1, kCdf = 2, kThreshold = 3 };

struct PatchOptions {
  PatchGeometry geometry;
  PatchResponse response = PatchResponse::kThreshold;
  int num_bins = 0;         // kCdf: n
  double range = 1.0;       // kCdf
  double threshold = 0.25;  // kThreshold: α
  bool normalize_patches = false;
  double contrast_epsilon = 1e-3;
  // kThreshold only: each region's feature is the largest response over its
  // positions (averaged over the r elements) instead of the mean.
  bool max_pooling = false;
};

class PatchEncoder final : public Encoder {
 public:
  // Errors: an invalid geometry; a projector not in Placement::kTemplates or
  // whose dim() != patch_dim(); bias.size() not m nor m·r; kCdf with num_bins < 1 or
  // range ≤ 0; kThreshold with α < 0 or not finite.
  static absl::StatusOr<std::unique_ptr<PatchEncoder>> Create(const PatchOptions& options,
                                                              Projector projector,
                                                              std::vector<float> bias);

  void Encode(int64_t n, const float* x, float* out) const override;
  std::string kind() const override { return "patch"; }
  size_t parameter_bytes() const override;

  // The per-patch map φ (no pooling over positions): n patches of
  // patch_dim() values (normalised first when options().normalize_patches)
  // to n rows of f·m values, laid out c·m + j. Encode of an image whose
  // only position is the whole image (k = H = W, G = 1) equals it.
  void EncodePatches(int64_t n, const float* patches, float* out) const;

  int64_t responses_per_template() const;  // f
  int64_t patch_features() const;          // f·m
  const PatchOptions& options() const { return options_; }
  const Projector& projector() const { return projector_; }
  const std::vector<float>& bias() const { return bias_; }

 private:
  PatchEncoder(const PatchOptions& options, Projector projector, std::vector<float> bias);

  PatchOptions options_;
  Projector projector_;
  std::vector<float> bias_;
  // Fixed by the options, computed once here rather than per call:
  std::vector<float> thresholds_;      // kCdf: the 2n + 1 thresholds range·i/n
  std::vector<int32_t> region_of_;     // the region of every position, row-major
  std::vector<int64_t> region_count_;  // positions per region
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_PATCH_ENCODER_H_
