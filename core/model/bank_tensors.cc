#include "core/model/bank_tensors.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/bf16.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/template_bank.h"
#include "core/groups/group_factory.h"
#include "core/model/encoder_kind.h"

namespace invariant {
namespace {

BankDtype ToBankDtype(const v1::EncoderSpec& spec) {
  return spec.bank_dtype() == v1::BANK_DTYPE_BF16 ? BankDtype::kBfloat16 : BankDtype::kFloat32;
}

// The m × d templates of an input-placement model, widened to float when
// stored as bf16 (exact).
absl::StatusOr<FloatMatrix> LoadTemplates(const v1::EncoderSpec& spec, int64_t m, int64_t d,
                                          const ModelTensors& t) {
  if (spec.bank_dtype() != v1::BANK_DTYPE_BF16) {
    return RequireTensor(t.f32, kBankTensor, m, d, "m × input_dim");
  }
  ASSIGN_OR_RETURN(Bf16Matrix rows16,
                   RequireTensor(t.bf16, kBankTensor, m, d, "m × input_dim, DTYPE_BFLOAT16"));
  FloatMatrix rows = FloatMatrix::Zeros(m, d);
  for (int64_t i = 0; i < m * d; ++i) rows.mutable_data()[i] = Bf16Value(rows16.data()[i]);
  return rows;
}

}  // namespace

// Validates num_group_elements unless the group is enumerated.
absl::Status CheckGroupElements(const v1::EncoderSpec& spec, const std::string& field, int64_t r) {
  if (spec.group().enumerate()) return absl::OkStatus();
  // The identity has one element: r copies of it would cost r times the
  // compute for the same map (and round differently than the plain one).
  if (spec.group().has_identity()) return CheckFieldRange(field, static_cast<double>(r), 1, 1);
  return CheckFieldRange(field, static_cast<double>(r), 1, 1e5);
}

// Stores `rows` as "encoder/bank" in the spec's bank_dtype.
void StoreBank(const v1::EncoderSpec& spec, const FloatMatrix& rows, ModelTensors& t) {
  if (spec.bank_dtype() == v1::BANK_DTYPE_BF16) {
    t.bf16[kBankTensor] = RoundToBf16(rows);
  } else {
    t.f32[kBankTensor] = rows;
  }
}

// Fills "encoder/bank" from the templates and returns r (|G| when enumerated).
// Input placement stores the templates alone and, when the distribution does
// not depend on the input, the r elements drawn now as
// "encoder/group_elements" (r × parameters, float64): every request then
// applies those same elements (Projector::OverInputOrbit).
absl::StatusOr<int64_t> DrawBank(const v1::EncoderSpec& spec, const FloatMatrix& templates,
                                 int64_t r, ModelTensors& t, const char* vectors) {
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec.group()));
  ASSIGN_OR_RETURN(Placement placement, ResolvePlacement(spec.group(), *q));
  if (q->action().dim() != templates.cols()) {
    return absl::InvalidArgumentError(absl::StrCat("encoder.group acts on vectors of length ",
                                                   q->action().dim(), ", but ", vectors, " have ",
                                                   templates.cols(), " values"));
  }
  Rng rng = Rng::ForStream(spec.seed(), 2);
  if (placement == Placement::kInput) {
    StoreBank(spec, templates, t);
    if (q->depends_on_input()) {
      if (spec.group().enumerate()) r = static_cast<int64_t>(q->Enumerate().size());
      return r;
    }
    ASSIGN_OR_RETURN(std::vector<GroupElement> elements,
                     DrawGroupElements(*q, r, spec.group().enumerate(), rng));
    const int64_t params = static_cast<int64_t>(elements.front().params.size());
    DoubleMatrix table = DoubleMatrix::Zeros(static_cast<int64_t>(elements.size()), params);
    for (size_t k = 0; k < elements.size(); ++k) {
      if (static_cast<int64_t>(elements[k].params.size()) != params) {
        return absl::InternalError(absl::StrCat(q->name(), " drew elements of ", params, " and ",
                                                elements[k].params.size(), " parameters"));
      }
      std::copy(elements[k].params.begin(), elements[k].params.end(),
                table.mutable_row(static_cast<int64_t>(k)));
    }
    t.f64[kGroupElementsTensor] = std::move(table);
    return static_cast<int64_t>(elements.size());
  }
  ASSIGN_OR_RETURN(TemplateBank bank,
                   TemplateBank::Sample(templates, *q, r, spec.group().enumerate(), rng));
  StoreBank(spec, bank.rows(), t);
  return bank.num_group_elements();
}

namespace {

// A bundle's stored elements of a small finite group (a dihedral group's
// turns and mirrors) must be elements of it: an action decodes its
// parameters without checks, so a crafted row (a quarter turn of a
// non-square image, NaN) would index outside the image. Larger enumerable
// groups are not listed here (their enumeration costs more than a load).
absl::Status CheckStoredElements(const GroupDistribution& q,
                                 const std::vector<GroupElement>& elements) {
  constexpr size_t kMaxListed = 4096;
  if (!q.enumerable()) return absl::OkStatus();
  const std::vector<GroupElement> all = q.Enumerate();
  if (all.size() > kMaxListed) return absl::OkStatus();
  for (size_t k = 0; k < elements.size(); ++k) {
    bool found = false;
    for (const GroupElement& g : all) found = found || g.params == elements[k].params;
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", kGroupElementsTensor, "' row ", k,
                                                     " is not an element of ", q.name()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// The projector over "encoder/bank" for m templates and r group elements,
// honouring the group's placement.
absl::StatusOr<Projector> LoadProjector(const v1::EncoderSpec& spec, int64_t d, int64_t m,
                                        int64_t r, const ModelTensors& t, const char* dim_name) {
  RETURN_IF_ERROR(CheckFieldPositive("encoder: number of templates", static_cast<double>(m)));
  RETURN_IF_ERROR(CheckFieldPositive("encoder: num_group_elements", static_cast<double>(r)));
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec.group()));
  ASSIGN_OR_RETURN(Placement placement, ResolvePlacement(spec.group(), *q));
  if (q->action().dim() != d) {
    return absl::InvalidArgumentError(absl::StrCat("encoder.group acts on vectors of length ",
                                                   q->action().dim(), ", but ", dim_name, " is ",
                                                   d));
  }
  if (placement == Placement::kInput) {
    ASSIGN_OR_RETURN(FloatMatrix templates, LoadTemplates(spec, m, d, t));
    std::shared_ptr<const GroupDistribution> shared(std::move(q));
    if (t.f64.count(kGroupElementsTensor) == 0) {
      return Projector::OverInput(std::move(templates), r, std::move(shared), spec.seed(),
                                  ToBankDtype(spec));
    }
    ASSIGN_OR_RETURN(DoubleMatrix table, RequireTensor(t.f64, kGroupElementsTensor, r, -1,
                                                       "num_group_elements × parameters"));
    std::vector<GroupElement> elements(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      elements[static_cast<size_t>(k)].params.assign(table.row(k), table.row(k) + table.cols());
    }
    RETURN_IF_ERROR(CheckStoredElements(*shared, elements));
    return Projector::OverInputOrbit(std::move(templates), std::move(shared), elements,
                                     ToBankDtype(spec));
  }
  return LoadBankProjector(spec, d, m, r, t);
}

absl::StatusOr<Projector> LoadBankProjector(const v1::EncoderSpec& spec, int64_t d, int64_t m,
                                            int64_t r, const ModelTensors& t) {
  if (spec.bank_dtype() == v1::BANK_DTYPE_BF16) {
    ASSIGN_OR_RETURN(Bf16Matrix rows16, RequireTensor(t.bf16, kBankTensor, m * r, d,
                                                      "m·r × input_dim, DTYPE_BFLOAT16"));
    return Projector::OverBf16Bank(std::move(rows16), m, r);
  }
  ASSIGN_OR_RETURN(FloatMatrix rows,
                   RequireTensor(t.f32, kBankTensor, m * r, d, "m·r × input_dim"));
  ASSIGN_OR_RETURN(TemplateBank bank, TemplateBank::FromRows(std::move(rows), m, r));
  return Projector::OverBank(std::move(bank));
}

// Checks encoder.bank_dtype (shared by the template-based kinds).
absl::Status CheckBankDtype(const v1::EncoderSpec& spec) {
  if (spec.bank_dtype() == v1::BANK_DTYPE_FLOAT32 || spec.bank_dtype() == v1::BANK_DTYPE_BF16) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("encoder.bank_dtype must be BANK_DTYPE_FLOAT32 or BANK_DTYPE_BF16, got ",
                   static_cast<int>(spec.bank_dtype())));
}

}  // namespace invariant
