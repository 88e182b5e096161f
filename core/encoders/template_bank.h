// template_bank.h: the bank of group-transformed templates g_k⁻¹·t_j.
//
// docs/math.md §1: for a unitary action ⟨t, g·x⟩ = ⟨g⁻¹·t, x⟩, so the r sampled
// group elements are moved onto the m templates once, and encoding is one
// matrix product with the bank. Layout (bundle.proto CdfParams et al.): ONE
// contiguous row-major (m·r) × d FloatMatrix, row j·r + k = g_k⁻¹·t_j, so the
// r rows pooled together for template j are adjacent. The storage may be
// owned or borrowed (a view into a loaded bundle); a bank never copies it.
#ifndef INVARIANT_CORE_ENCODERS_TEMPLATE_BANK_H_
#define INVARIANT_CORE_ENCODERS_TEMPLATE_BANK_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/random.h"
#include "core/base/tensor.h"
#include "core/groups/group.h"

namespace invariant {

// The group elements a bank is built from: all of q's support when
// `enumerate` (r is then |support| and `r` is ignored), else r draws
// q.Sample(r, rng). Errors: enumerate on a non-enumerable distribution,
// r ≤ 0, an empty enumeration.
absl::StatusOr<std::vector<GroupElement>> DrawGroupElements(const GroupDistribution& q, int64_t r,
                                                            bool enumerate, Rng& rng);

class TemplateBank {
 public:
  TemplateBank() = default;

  // Builds the bank from m × d templates: row j·r + k = g_k⁻¹·t_j with
  // r = elements.size(). Deterministic: the same inputs give the same bits.
  // Errors: empty templates or elements, templates.cols() != action.dim().
  static absl::StatusOr<TemplateBank> Build(const FloatMatrix& templates, const GroupAction& action,
                                            const std::vector<GroupElement>& elements);

  // DrawGroupElements(q, r, enumerate, rng) then Build.
  static absl::StatusOr<TemplateBank> Sample(const FloatMatrix& templates,
                                             const GroupDistribution& q, int64_t r, bool enumerate,
                                             Rng& rng);

  // Wraps existing rows (owned or borrowed, e.g. a loaded bundle tensor)
  // without copying. Errors: rows.rows() != m·r, m ≤ 0, r ≤ 0, no columns.
  static absl::StatusOr<TemplateBank> FromRows(FloatMatrix rows, int64_t num_templates,
                                               int64_t num_group_elements);

  int64_t num_templates() const { return num_templates_; }            // m
  int64_t num_group_elements() const { return num_group_elements_; }  // r
  int64_t dim() const { return rows_.cols(); }                        // d
  // The (m·r) × d rows; row j·r + k = g_k⁻¹·t_j.
  const FloatMatrix& rows() const { return rows_; }
  const float* row(int64_t j, int64_t k) const { return rows_.row(j * num_group_elements_ + k); }

 private:
  FloatMatrix rows_;
  int64_t num_templates_ = 0;
  int64_t num_group_elements_ = 0;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_TEMPLATE_BANK_H_
