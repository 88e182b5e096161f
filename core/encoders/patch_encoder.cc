#include "core/encoders/patch_encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/encoders/fast_math.h"
#include "core/encoders/packed_dot.h"
#include "core/encoders/patch_kernels.h"
#include "core/encoders/pooling.h"

namespace invariant {
namespace {

// f: the responses of one template (2n + 1 CDF steps, else two).
int64_t ResponsesPerTemplate(const PatchOptions& o) {
  return o.response == PatchResponse::kCdf ? 2 * int64_t{o.num_bins} + 1 : 2;
}

// Positions projected together: their patches (≤ 48 × k²C floats) and their
// projections onto one template block stay in L1/L2.
constexpr int64_t kPositionChunk = 48;
// Bank columns per task (whole templates), before splitting for threads.
constexpr int64_t kBlockColumns = 256;
// Bytes of a task's region accumulators the column block is sized to.
constexpr int64_t kAccumulatorBytes = 96 * 1024;

absl::Status SizeAtLeast(const char* field, int64_t v, int64_t lo) {
  if (v < lo) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch.", field, " must be >= ", lo, ", got ", v));
  }
  return absl::OkStatus();
}

// The patch at position (a, b) of one image into dst: whole rows copied when
// the patch lies inside the image, zeros where it lies in the padding.
void CopyPatchAt(const PatchGeometry& g, const float* image, int64_t a, int64_t b, float* dst) {
  const int64_t c = g.channels;
  const int64_t row_floats = g.patch_width * c;
  const int64_t image_row = g.width * c;
  const int64_t y0 = a * g.stride - g.pad_rows, x0 = b * g.stride - g.pad_cols;
  if (y0 >= 0 && x0 >= 0 && y0 + g.patch_height <= g.height && x0 + g.patch_width <= g.width) {
    const float* src = image + y0 * image_row + x0 * c;
    for (int64_t dy = 0; dy < g.patch_height; ++dy) {
      std::memcpy(dst + dy * row_floats, src + dy * image_row,
                  static_cast<size_t>(row_floats) * sizeof(float));
    }
    return;
  }
  const int64_t lo = std::max<int64_t>(0, -x0);
  const int64_t hi = std::min<int64_t>(g.patch_width, g.width - x0);
  for (int64_t dy = 0; dy < g.patch_height; ++dy) {
    float* row = dst + dy * row_floats;
    std::fill(row, row + row_floats, 0.f);
    const int64_t y = y0 + dy;
    if (y < 0 || y >= g.height || lo >= hi) continue;
    std::memcpy(row + lo * c, image + y * image_row + (x0 + lo) * c,
                static_cast<size_t>((hi - lo) * c) * sizeof(float));
  }
}

// Patches of positions [p0, p0 + count) of one image, as rows of dst.
void ExtractPatchRange(const PatchGeometry& g, const float* image, int64_t p0, int64_t count,
                       float* dst) {
  const int64_t px = g.positions_x();
  const int64_t d = g.patch_dim();
  for (int64_t p = p0; p < p0 + count; ++p) {
    CopyPatchAt(g, image, p / px, p % px, dst);
    dst += d;
  }
}

// What a task needs to turn projections into pooled responses.
struct ResponseKernel {
  PatchResponse kind;
  int64_t f;                          // responses per template
  int64_t r;                          // group elements per template
  float alpha;                        // kThreshold
  double output_scale;                // 1/√m for kFourier, else 1
  const float* thresholds = nullptr;  // kCdf: the f = 2n + 1 thresholds
  bool per_row_bias = false;          // the bias holds m·r values, one per bank row
  bool max_pooling = false;           // kThreshold: the region's largest response, not the mean

  // Accumulator bytes per column of a region: f doubles and f floats.
  int64_t AccumulatorBytesPerColumn() const { return f * 12; }
};

// The scratch of one task (one thread), reused across calls.
struct TaskScratch {
  std::vector<float> patches;         // an image's positions (or a block of patches) × d
  std::vector<float> tile;            // chunk × cols (projections, then u)
  std::vector<float> sines, cosines;  // chunk × cols (kFourier)
  std::vector<float> bias;            // cols: b_j repeated r times
  std::vector<double> acc;            // regions × f × cols, over all positions
  std::vector<float> chunk_acc;       // regions × f × cols, over one chunk (zero between chunks)
  std::vector<char> touched;          // regions: has chunk_acc values
  std::vector<int64_t> touched_list;
};

TaskScratch& LocalScratch() {
  thread_local TaskScratch scratch;
  return scratch;
}

// Adds the responses of `rows` rows of projections (row stride cols) to the
// accumulators of their regions; region_of(i) gives row i's region. Sums
// over the chunk's rows are formed in float (rows in order), then added to
// the double sums of their regions.
template <typename RegionOf>
void AccumulateRows(const ResponseKernel& rk, const patch_internal::RowKernels& kernels,
                    int64_t rows, int64_t cols, TaskScratch& s, RegionOf region_of) {
  float* tile = s.tile.data();
  const float* bias = s.bias.data();
  if (rk.kind != PatchResponse::kThreshold) {
    for (int64_t i = 0; i < rows; ++i) kernels.add_bias(cols, tile + i * cols, bias);
  }
  if (rk.kind == PatchResponse::kFourier) {
    FastSinCos(rows * cols, tile, s.sines.data(), s.cosines.data());
  }
  s.touched_list.clear();
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t rho = region_of(i);
    if (!s.touched[static_cast<size_t>(rho)]) {
      s.touched[static_cast<size_t>(rho)] = 1;
      s.touched_list.push_back(rho);
    }
    float* a0 = s.chunk_acc.data() + rho * rk.f * cols;
    float* a1 = a0 + cols;
    if (rk.kind == PatchResponse::kThreshold) {
      (rk.max_pooling ? kernels.threshold_max : kernels.threshold)(cols, tile + i * cols, bias,
                                                                   rk.alpha, a0, a1);
    } else if (rk.kind == PatchResponse::kCdf) {
      // 1[u ≤ t_c] for each threshold: counts, exact in float.
      for (int64_t c = 0; c < rk.f; ++c) {
        kernels.step(cols, tile + i * cols, rk.thresholds[c], a0 + c * cols);
      }
    } else {
      kernels.add(cols, s.cosines.data() + i * cols, a0);
      kernels.add(cols, s.sines.data() + i * cols, a1);
    }
  }
  for (int64_t rho : s.touched_list) {
    (rk.max_pooling ? kernels.fold_max : kernels.fold)(
        rk.f * cols, s.chunk_acc.data() + rho * rk.f * cols, s.acc.data() + rho * rk.f * cols);
    s.touched[static_cast<size_t>(rho)] = 0;
  }
}

// Writes region ρ's features of templates [j0, j0 + nt) into dst (one output
// row; feature (ρ·f + c)·m + j) from its accumulators, averaged over the r
// elements and `count` positions; k is summed in ascending order.
void FinishRegion(const ResponseKernel& rk, const TaskScratch& s, int64_t region,
                  int64_t region_slot, int64_t count, int64_t m, int64_t j0, int64_t nt,
                  float* dst) {
  const int64_t r = rk.r;
  const int64_t cols = nt * r;
  // Max pooling keeps each element's largest response: averaged over the r
  // elements only.
  const double denom = static_cast<double>(r) * (rk.max_pooling ? 1.0 : static_cast<double>(count));
  const double scale = rk.output_scale / denom;
  // kCdf sums integer counts (exact in double) and divides them: the
  // fraction of the r·count projections at or below each threshold.
  const bool fraction = rk.kind == PatchResponse::kCdf;
  for (int64_t c = 0; c < rk.f; ++c) {
    const double* a = s.acc.data() + (region_slot * rk.f + c) * cols;
    float* o = dst + (region * rk.f + c) * m + j0;
    for (int64_t jj = 0; jj < nt; ++jj) {
      double sum = 0.0;
      for (int64_t k = 0; k < r; ++k) sum += a[jj * r + k];
      o[jj] = static_cast<float>(fraction ? sum / denom : sum * scale);
    }
  }
}

void ResetAccumulators(const ResponseKernel& rk, int64_t regions, int64_t cols, TaskScratch& s) {
  s.acc.assign(static_cast<size_t>(regions * rk.f * cols), 0.0);
  s.chunk_acc.assign(static_cast<size_t>(regions * rk.f * cols), 0.f);
  s.touched.assign(static_cast<size_t>(regions), 0);
}

// Templates per task: ~kBlockColumns columns (fewer when the accumulators of
// `regions` regions would outgrow kAccumulatorBytes), halved while there are
// fewer than 4 tasks per thread; a multiple of whole 32-column panel pairs
// when r allows, so PackedDot never computes columns it drops.
int64_t TemplatesPerBlock(const ResponseKernel& rk, int64_t m, int64_t items, int64_t regions) {
  const int64_t r = rk.r;
  int64_t columns = std::min<int64_t>(
      kBlockColumns,
      kAccumulatorBytes / std::max<int64_t>(1, regions * rk.AccumulatorBytesPerColumn()));
  int64_t per_block = std::min(m, std::max<int64_t>(1, columns / r));
  const int64_t want_tasks = 4 * static_cast<int64_t>(DefaultThreadCount());
  while (per_block > 1 && items * ((m + per_block - 1) / per_block) < want_tasks) {
    per_block = (per_block + 1) / 2;
  }
  // Round to whole panel pairs (32 columns) when that keeps the block.
  int64_t unit = 1;
  while (unit * r % 32 != 0 && unit < 32) ++unit;
  if (unit * r % 32 == 0 && per_block >= unit) per_block = per_block / unit * unit;
  return per_block;
}

// The tasks of a call: every item (an image, or a block of patches) is split
// into `groups` tasks of consecutive template blocks, as few as give 4 tasks
// per thread, so an item's patches are extracted and normalised once per
// task, not once per template block.
struct TaskGrid {
  int64_t per_block = 1;  // templates per block
  int64_t blocks = 1;     // template blocks
  int64_t groups = 1;     // tasks per item

  TaskGrid(const ResponseKernel& rk, int64_t m, int64_t items, int64_t regions) {
    per_block = TemplatesPerBlock(rk, m, items, regions);
    blocks = (m + per_block - 1) / per_block;
    const int64_t want_tasks = 4 * static_cast<int64_t>(DefaultThreadCount());
    groups = std::min(blocks, std::max<int64_t>(1, (want_tasks + items - 1) / items));
  }
  int64_t num_tasks(int64_t items) const { return items * groups; }
  // The template blocks [first, last) of task `task`'s group.
  int64_t first_block(int64_t task) const { return (task % groups) * blocks / groups; }
  int64_t last_block(int64_t task) const { return (task % groups + 1) * blocks / groups; }
};

}  // namespace

absl::Status ValidatePatchGeometry(const PatchGeometry& g) {
  RETURN_IF_ERROR(SizeAtLeast("height", g.height, 1));
  RETURN_IF_ERROR(SizeAtLeast("width", g.width, 1));
  RETURN_IF_ERROR(SizeAtLeast("channels", g.channels, 1));
  RETURN_IF_ERROR(SizeAtLeast("patch_height", g.patch_height, 1));
  RETURN_IF_ERROR(SizeAtLeast("patch_width", g.patch_width, 1));
  if (g.pad_rows < 0 || g.pad_cols < 0 || g.pad_rows >= g.patch_height ||
      g.pad_cols >= g.patch_width) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch.padding must be in [0, k − 1] rows and columns, got ", g.pad_rows,
                     " × ", g.pad_cols, " for ", g.patch_height, " × ", g.patch_width, " patches"));
  }
  if (g.patch_height > g.height + 2 * g.pad_rows || g.patch_width > g.width + 2 * g.pad_cols) {
    return absl::InvalidArgumentError(absl::StrCat(
        "patch.patch_size must be at most the image's height ", g.height, " and width ", g.width,
        " (plus the padding), got ", g.patch_height, " × ", g.patch_width));
  }
  RETURN_IF_ERROR(SizeAtLeast("stride", g.stride, 1));
  RETURN_IF_ERROR(SizeAtLeast("pool_rows", g.pool_rows, 1));
  RETURN_IF_ERROR(SizeAtLeast("pool_cols", g.pool_cols, 1));
  if (g.pool_rows > g.positions_y() || g.pool_cols > g.positions_x()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "patch.pool_grid must be at most the patch positions per side (", g.positions_y(), " × ",
        g.positions_x(), "), got ", g.pool_rows, " × ", g.pool_cols));
  }
  return absl::OkStatus();
}

void ExtractPatches(const PatchGeometry& g, const float* image, float* patches) {
  ExtractPatchRange(g, image, 0, g.num_positions(), patches);
}

void ExtractPatch(const PatchGeometry& g, const float* image, int64_t p, float* dst) {
  CopyPatchAt(g, image, p / g.positions_x(), p % g.positions_x(), dst);
}

void NormalizePatch(int64_t d, double epsilon, float* p) {
  patch_internal::ActiveRowKernels().normalize(d, epsilon, p);
}

absl::StatusOr<std::unique_ptr<PatchEncoder>> PatchEncoder::Create(const PatchOptions& options,
                                                                   Projector projector,
                                                                   std::vector<float> bias) {
  RETURN_IF_ERROR(ValidatePatchGeometry(options.geometry));
  if (projector.placement() != Placement::kTemplates) {
    return absl::InvalidArgumentError(
        "patch: the group's placement must be TEMPLATES (the bank holds g_k⁻¹·w_j)");
  }
  if (projector.num_templates() <= 0 || projector.num_group_elements() <= 0) {
    return absl::InvalidArgumentError("patch: empty bank");
  }
  if (projector.dim() != options.geometry.patch_dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch: the bank has dimension ", projector.dim(), ", patches of ",
                     options.geometry.patch_height, " × ", options.geometry.patch_width, " × ",
                     options.geometry.channels, " have ", options.geometry.patch_dim()));
  }
  const int64_t bank_rows = projector.num_templates() * projector.num_group_elements();
  if (static_cast<int64_t>(bias.size()) != projector.num_templates() &&
      static_cast<int64_t>(bias.size()) != bank_rows) {
    return absl::InvalidArgumentError(absl::StrCat("patch: bias has ", bias.size(),
                                                   " values, the bank ", projector.num_templates(),
                                                   " templates (", bank_rows, " rows)"));
  }
  switch (options.response) {
    case PatchResponse::kFourier:
      break;
    case PatchResponse::kCdf:
      if (options.num_bins < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("patch.num_bins must be >= 1, got ", options.num_bins));
      }
      if (!(options.range > 0.0) || !std::isfinite(options.range)) {
        return absl::InvalidArgumentError(
            absl::StrCat("patch.range must be finite and > 0, got ", options.range));
      }
      break;
    case PatchResponse::kThreshold:
      if (!(options.threshold >= 0.0) || !std::isfinite(options.threshold)) {
        return absl::InvalidArgumentError(
            absl::StrCat("patch.threshold must be finite and >= 0, got ", options.threshold));
      }
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("patch.response: unknown response ", static_cast<int>(options.response)));
  }
  if (options.max_pooling && options.response != PatchResponse::kThreshold) {
    return absl::InvalidArgumentError(
        "patch.pooling: max pooling applies to the threshold response only (a CDF is a mean of "
        "steps, a Fourier feature a mean of cos / sin)");
  }
  if (options.normalize_patches &&
      (!(options.contrast_epsilon > 0.0) || !std::isfinite(options.contrast_epsilon))) {
    return absl::InvalidArgumentError(
        absl::StrCat("patch.contrast_epsilon must be finite and > 0 when normalize_patches, got ",
                     options.contrast_epsilon));
  }
  return std::unique_ptr<PatchEncoder>(
      new PatchEncoder(options, std::move(projector), std::move(bias)));
}

PatchEncoder::PatchEncoder(const PatchOptions& options, Projector projector,
                           std::vector<float> bias)
    : Encoder(options.geometry.image_dim(), options.geometry.num_regions() *
                                                ResponsesPerTemplate(options) *
                                                projector.num_templates()),
      options_(options),
      projector_(std::move(projector)),
      bias_(std::move(bias)),
      region_of_(static_cast<size_t>(options.geometry.num_positions())),
      region_count_(static_cast<size_t>(options.geometry.num_regions()), 0) {
  if (options_.response == PatchResponse::kCdf) {
    thresholds_ = CdfThresholds(options_.num_bins, options_.range);
  }
  const PatchGeometry& g = options_.geometry;
  for (int64_t a = 0; a < g.positions_y(); ++a) {
    for (int64_t b = 0; b < g.positions_x(); ++b) {
      const int64_t rho = g.RegionOf(a, b);
      region_of_[static_cast<size_t>(a * g.positions_x() + b)] = static_cast<int32_t>(rho);
      ++region_count_[static_cast<size_t>(rho)];
    }
  }
}

int64_t PatchEncoder::responses_per_template() const { return ResponsesPerTemplate(options_); }

int64_t PatchEncoder::patch_features() const {
  return responses_per_template() * projector_.num_templates();
}

size_t PatchEncoder::parameter_bytes() const {
  return projector_.bank_bytes() + bias_.size() * sizeof(float);
}

namespace {

// The kernel's constants for one call; `thresholds` must outlive it.
ResponseKernel MakeKernel(const PatchOptions& o, const Projector& projector,
                          const std::vector<float>& thresholds, size_t bias_size) {
  ResponseKernel rk;
  rk.kind = o.response;
  rk.r = projector.num_group_elements();
  rk.f = ResponsesPerTemplate(o);
  rk.alpha = static_cast<float>(o.threshold);
  rk.output_scale = o.response == PatchResponse::kFourier
                        ? 1.0 / std::sqrt(static_cast<double>(projector.num_templates()))
                        : 1.0;
  if (o.response == PatchResponse::kCdf) rk.thresholds = thresholds.data();
  rk.per_row_bias = static_cast<int64_t>(bias_size) != projector.num_templates();
  rk.max_pooling = o.max_pooling;
  return rk;
}

// Sizes a task's scratch for `rows` rows of `cols` columns and fills the
// per-column bias b_j (templates [j0, j0 + cols/r)).
void PrepareBlock(const ResponseKernel& rk, int64_t rows, int64_t cols, int64_t j0,
                  const std::vector<float>& bias, TaskScratch& s) {
  s.tile.resize(static_cast<size_t>(rows * cols));
  if (rk.kind == PatchResponse::kFourier) {
    s.sines.resize(static_cast<size_t>(rows * cols));
    s.cosines.resize(static_cast<size_t>(rows * cols));
  }
  s.bias.resize(static_cast<size_t>(cols));
  // One bias per template (repeated r times) or one per bank row.
  for (int64_t c = 0; c < cols; ++c) {
    s.bias[static_cast<size_t>(c)] = rk.per_row_bias ? bias[static_cast<size_t>(j0 * rk.r + c)]
                                                     : bias[static_cast<size_t>(j0 + c / rk.r)];
  }
}

}  // namespace

void PatchEncoder::Encode(int64_t n, const float* x, float* out) const {
  if (n <= 0) return;
  const PatchGeometry& g = options_.geometry;
  const int64_t m = projector_.num_templates();
  const int64_t r = projector_.num_group_elements();
  const int64_t d = g.patch_dim();
  const int64_t positions = g.num_positions();
  const int64_t regions = g.num_regions();
  const int64_t width = d_out();
  const ResponseKernel rk = MakeKernel(options_, projector_, thresholds_, bias_.size());
  const TaskGrid grid(rk, m, n, regions);
  const PackedBank& bank = projector_.packed();
  const patch_internal::RowKernels& kernels = patch_internal::ActiveRowKernels();
  const int64_t chunk = std::min(kPositionChunk, positions);
  // The patches of image i, extracted and normalised; into `shared` by a
  // first pass when an image is split over several tasks (small batches),
  // else by its one task into its scratch.
  auto extract = [&](int64_t i, int64_t p0, int64_t count, float* dst) {
    ExtractPatchRange(g, x + i * g.image_dim(), p0, count, dst);
    if (options_.normalize_patches) {
      for (int64_t q = 0; q < count; ++q) {
        kernels.normalize(d, options_.contrast_epsilon, dst + q * d);
      }
    }
  };
  std::vector<float> shared;
  if (grid.groups > 1) {
    shared.resize(static_cast<size_t>(n * positions * d));
    const int64_t chunks = (positions + chunk - 1) / chunk;
    ParallelFor(n * chunks, [&](int64_t t) {
      const int64_t i = t / chunks, p0 = (t % chunks) * chunk;
      extract(i, p0, std::min(chunk, positions - p0), shared.data() + (i * positions + p0) * d);
    });
  }
  ParallelFor(grid.num_tasks(n), [&](int64_t task) {
    const int64_t i = task / grid.groups;
    TaskScratch& s = LocalScratch();
    const float* image_patches = nullptr;
    if (grid.groups > 1) {
      image_patches = shared.data() + i * positions * d;
    } else {
      s.patches.resize(static_cast<size_t>(positions * d));
      extract(i, 0, positions, s.patches.data());
      image_patches = s.patches.data();
    }
    for (int64_t block = grid.first_block(task); block < grid.last_block(task); ++block) {
      const int64_t j0 = block * grid.per_block;
      const int64_t nt = std::min(grid.per_block, m - j0);
      const int64_t cols = nt * r;
      PrepareBlock(rk, chunk, cols, j0, bias_, s);
      ResetAccumulators(rk, regions, cols, s);
      for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
        const int64_t pc = std::min(chunk, positions - p0);
        PackedDot(bank, pc, image_patches + p0 * d, d, j0 * r, j0 * r + cols, s.tile.data(), cols);
        const int32_t* chunk_regions = region_of_.data() + p0;
        AccumulateRows(rk, kernels, pc, cols, s, [chunk_regions](int64_t q) {
          return static_cast<int64_t>(chunk_regions[q]);
        });
      }
      for (int64_t rho = 0; rho < regions; ++rho) {
        FinishRegion(rk, s, rho, rho, region_count_[static_cast<size_t>(rho)], m, j0, nt,
                     out + i * width);
      }
    }
  });
}

void PatchEncoder::EncodePatches(int64_t n, const float* patches, float* out) const {
  if (n <= 0) return;
  const int64_t m = projector_.num_templates();
  const int64_t r = projector_.num_group_elements();
  const int64_t d = options_.geometry.patch_dim();
  const int64_t width = patch_features();
  const ResponseKernel rk = MakeKernel(options_, projector_, thresholds_, bias_.size());
  // Row blocks of ≤ kPositionChunk patches, each patch its own region.
  const int64_t chunk = std::min(kPositionChunk, n);
  const int64_t row_blocks = (n + chunk - 1) / chunk;
  const TaskGrid grid(rk, m, row_blocks, chunk);
  const PackedBank& bank = projector_.packed();
  const patch_internal::RowKernels& kernels = patch_internal::ActiveRowKernels();
  ParallelFor(grid.num_tasks(row_blocks), [&](int64_t task) {
    const int64_t row0 = (task / grid.groups) * chunk;
    const int64_t rows = std::min(chunk, n - row0);
    TaskScratch& s = LocalScratch();
    s.patches.resize(static_cast<size_t>(rows * d));
    std::memcpy(s.patches.data(), patches + row0 * d,
                static_cast<size_t>(rows * d) * sizeof(float));
    if (options_.normalize_patches) {
      for (int64_t q = 0; q < rows; ++q) {
        kernels.normalize(d, options_.contrast_epsilon, s.patches.data() + q * d);
      }
    }
    for (int64_t block = grid.first_block(task); block < grid.last_block(task); ++block) {
      const int64_t j0 = block * grid.per_block;
      const int64_t nt = std::min(grid.per_block, m - j0);
      const int64_t cols = nt * r;
      PrepareBlock(rk, rows, cols, j0, bias_, s);
      ResetAccumulators(rk, rows, cols, s);
      PackedDot(bank, rows, s.patches.data(), d, j0 * r, j0 * r + cols, s.tile.data(), cols);
      AccumulateRows(rk, kernels, rows, cols, s, [](int64_t q) { return q; });
      for (int64_t q = 0; q < rows; ++q) {
        // Each patch is region 0 of its own output row.
        FinishRegion(rk, s, 0, q, 1, m, j0, nt, out + (row0 + q) * width);
      }
    }
  });
}

}  // namespace invariant
