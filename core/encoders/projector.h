// projector.h: the hot path shared by every bank encoder, P = X · Bankᵀ.
//
// A Projector computes the projections p_{i,j,k} = ⟨g_k⁻¹·t_j, x_i⟩ of input
// rows onto a bank and hands them to a pooling callback block by block, so
// that scratch memory stays bounded (≤ kRowBlock rows × ~kBlockColumns
// columns per task, or one template's r columns per row if r is larger)
// however large the bank is. The bank is streamed from memory once per
// kRowBlock input rows. Values in a block are laid out row-major, num_rows × (num_templates·r),
// column (j − template_begin)·r + k — all r projections of one template are in the same block, so
// pooling never needs a second pass.
//
// Two placements (core/groups/group.h):
//  * kTemplates: the bank holds g_k⁻¹·t_j, packed once at construction
//    (packed_dot.h). The work is a grid of tasks, row blocks of ≤ kRowBlock
//    rows × template blocks of ~kBlockColumns columns (whole templates),
//    run on the default thread pool: large batches split over rows, small
//    batches and batch 1 over templates. Each task computes its tile with
//    PackedDot and hands it to on_block at once, while it is in cache.
//  * kInput: the bank holds only the m templates (packed once); for each
//    input row the projector seeds an Rng from (seed, FNV-1a hash of the
//    row's bytes), draws r elements with q.SampleFor(x, r, rng), computes
//    g_k·x and projects them onto the templates: p_{i,j,k} = ⟨t_j, g_k·x_i⟩.
//    The same row always gets the same elements, in-process or on a server.
//    Rows are split over the pool. This is the path of input-dependent
//    distributions (the noisy sort of Coulomb matrices).
//  * kInput over an orbit (OverInputOrbit): r elements fixed when the model
//    was drawn. Rows go in chunks (≤ kOrbitChunkFloats transformed values):
//    the OrbitOperator writes the r copies of every row of the chunk (split
//    over rows on the pool), then a grid of tasks, row blocks of
//    ≤ kRowBlock copies × template blocks, each runs PackedDot against the
//    packed templates, regroups its tile to the j·r + k layout and hands it
//    to on_block. Batch 1 splits over templates.
//
// Batch independence: a row's projections never depend on the other rows,
// the tiling or the thread: every product goes through PackedDot, whose
// summation order per output depends only on d.
//
// Thread-safety: ForEachBlock is const and may be called concurrently; it
// calls on_block concurrently from pool threads, each call with a disjoint
// rows × templates region, so on_block must only write outputs of its own
// region and keep its scratch local.
#ifndef INVARIANT_CORE_ENCODERS_PROJECTOR_H_
#define INVARIANT_CORE_ENCODERS_PROJECTOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/encoders/orbit_operator.h"
#include "core/encoders/packed_dot.h"
#include "core/encoders/template_bank.h"
#include "core/groups/group.h"

namespace invariant {

struct ProjectionBlock {
  int64_t row_begin = 0;  // first input row of the block
  int64_t num_rows = 0;
  int64_t template_begin = 0;  // first template j of the block
  int64_t num_templates = 0;
  int64_t r = 0;                  // group elements per template
  const float* values = nullptr;  // num_rows × (num_templates·r), row stride `stride`
  int64_t stride = 0;
  // Squared norms of the projected inputs (only when requested): kTemplates:
  // ‖x_i‖² at [i − row_begin]; kInput: ‖g_k·x_i‖² at [(i − row_begin)·r + k].
  const float* input_sq_norms = nullptr;
  bool per_element_norms = false;  // true for kInput

  float InputSqNorm(int64_t row_in_block, int64_t k) const {
    return per_element_norms ? input_sq_norms[row_in_block * r + k] : input_sq_norms[row_in_block];
  }
};

class Projector {
 public:
  static constexpr int64_t kRowBlock = 96;       // input rows per task
  static constexpr int64_t kBlockColumns = 512;  // bank columns per task (whole templates)
  static constexpr int64_t kOrbitChunkFloats = int64_t{1} << 20;  // transformed copies per chunk

  Projector() = default;

  // Projects onto a bank of transformed templates (Placement::kTemplates),
  // packed as `bank_dtype`. kBfloat16 rounds every value to bfloat16 once
  // (half the bytes read per request); the projector then keeps only the
  // rounded bank (rows_bf16()), as OverBf16Bank would.
  static Projector OverBank(TemplateBank bank, BankDtype bank_dtype = BankDtype::kFloat32);

  // Projects onto a bank stored as bfloat16 bits, (m·r) × d with row
  // j·r + k = g_k⁻¹·t_j (owned or a view into a loaded bundle, not copied).
  // Errors: rows16.rows() != m·r, m ≤ 0, r ≤ 0, no columns.
  static absl::StatusOr<Projector> OverBf16Bank(Bf16Matrix rows16, int64_t num_templates,
                                                int64_t num_group_elements);

  // Projects transformed inputs onto m × d templates (Placement::kInput),
  // r elements drawn per input row (see the header comment). Errors: r ≤ 0,
  // null q, empty templates, templates.cols() != q's dim().
  static absl::StatusOr<Projector> OverInput(FloatMatrix templates, int64_t r,
                                             std::shared_ptr<const GroupDistribution> q,
                                             uint64_t seed,
                                             BankDtype bank_dtype = BankDtype::kFloat32);

  // Placement::kInput with r = elements.size() elements fixed when the model
  // was drawn: every input row gets the same g_1..g_r, applied by an
  // OrbitOperator in one pass, then one PackedDot against the templates.
  // Errors: null q, no elements, empty templates, templates.cols() != q's
  // dim().
  static absl::StatusOr<Projector> OverInputOrbit(FloatMatrix templates,
                                                  std::shared_ptr<const GroupDistribution> q,
                                                  const std::vector<GroupElement>& elements,
                                                  BankDtype bank_dtype = BankDtype::kFloat32);

  Placement placement() const { return placement_; }
  int64_t num_templates() const { return num_templates_; }  // m
  int64_t num_group_elements() const { return r_; }         // r
  int64_t dim() const { return packed_->dim(); }            // d
  // kTemplates: the (m·r) × d bank; kInput: the m × d templates. This is the
  // "encoder/bank" tensor of a bundle. Empty for a bf16 bank (rows_bf16()).
  const FloatMatrix& rows() const { return rows_; }
  // The bf16 bank's bits; empty for a float32 bank.
  const Bf16Matrix& rows_bf16() const { return rows16_; }
  // Bytes of the stored bank (rows() or rows_bf16()).
  size_t bank_bytes() const { return rows_.bytes() + rows16_.bytes(); }
  // ‖row‖² of every bank row as stored (bf16 rows widened exactly).
  std::vector<float> BankRowSquaredNorms() const;
  // rows(), packed for PackedDot (shared by copies of this projector).
  const PackedBank& packed() const { return *packed_; }
  BankDtype bank_dtype() const { return packed_->dtype(); }
  const std::shared_ptr<const GroupDistribution>& distribution() const { return q_; }
  // The fixed elements' operator (OverInputOrbit), or null.
  const OrbitOperator* orbit() const { return orbit_.get(); }
  uint64_t seed() const { return seed_; }

  // Calls on_block once for every block of projections of the n rows of x
  // (n × dim(), row-major); blocks cover every (row, template) exactly
  // once, in unspecified order, concurrently (see Thread-safety). With
  // need_sq_norms the blocks carry input_sq_norms.
  void ForEachBlock(int64_t n, const float* x, bool need_sq_norms,
                    absl::FunctionRef<void(const ProjectionBlock&)> on_block) const;

 private:
  void ForEachBlockOverBank(int64_t n, const float* x, bool need_sq_norms,
                            absl::FunctionRef<void(const ProjectionBlock&)> on_block) const;
  void ForEachBlockOverInput(int64_t n, const float* x, bool need_sq_norms,
                             absl::FunctionRef<void(const ProjectionBlock&)> on_block) const;
  void ForEachBlockOverOrbit(int64_t n, const float* x, bool need_sq_norms,
                             absl::FunctionRef<void(const ProjectionBlock&)> on_block) const;
  // Stores the bank as `dtype` (bf16: rounded once, rows16_ only) and packs it.
  void SetBank(FloatMatrix rows, BankDtype dtype);

  Placement placement_ = Placement::kTemplates;
  FloatMatrix rows_;
  Bf16Matrix rows16_;
  std::shared_ptr<const PackedBank> packed_ = std::make_shared<const PackedBank>();
  int64_t num_templates_ = 0;
  int64_t r_ = 0;
  std::shared_ptr<const GroupDistribution> q_;
  std::shared_ptr<const OrbitOperator> orbit_;  // OverInputOrbit's
  uint64_t seed_ = 0;
};

// 64-bit FNV-1a hash of the bytes of d floats (seeds the kInput draws).
uint64_t HashRowBytes(const float* x, int64_t d);

// ‖row‖² of every row, accumulated in double, rounded to float.
std::vector<float> RowSquaredNorms(const FloatMatrix& rows);

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_PROJECTOR_H_
