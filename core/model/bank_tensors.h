// bank_tensors.h: the "encoder/bank" tensor of the template-based encoder
// kinds (cdf, random_fourier, nystrom, patch), drawn and loaded one way.
//
// Parts of the descriptors (encoder_kind.h), shared by every kind whose
// encoder projects onto a bank of group-transformed templates (bundle.proto:
// "encoder/bank" (m·r) × d, row j·r + k = g_k⁻¹·t_j, float32 or bf16; with
// placement INPUT the m × d templates and, when the law does not depend on
// the input, "encoder/group_elements" r × parameters float64). Errors are
// INVALID_ARGUMENT naming the field or tensor. Free functions, reentrant.
#ifndef INVARIANT_CORE_MODEL_BANK_TENSORS_H_
#define INVARIANT_CORE_MODEL_BANK_TENSORS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/encoders/projector.h"
#include "core/model/model.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

inline constexpr char kBankTensor[] = "encoder/bank";
inline constexpr char kGroupElementsTensor[] = "encoder/group_elements";

// Checks num_group_elements (`field`, value r) unless the group is
// enumerated: [1, 1e5], and exactly 1 for the identity group.
absl::Status CheckGroupElements(const v1::EncoderSpec& spec, const std::string& field, int64_t r);

// Checks encoder.bank_dtype (FLOAT32 or BF16).
absl::Status CheckBankDtype(const v1::EncoderSpec& spec);

// Stores `rows` as "encoder/bank" in the spec's bank_dtype.
void StoreBank(const v1::EncoderSpec& spec, const FloatMatrix& rows, ModelTensors& t);

// Fills "encoder/bank" from the m × d templates, the elements drawn from
// spec.group with Rng::ForStream(spec.seed, 2) (every element when
// enumerated), and returns r (|G| when enumerated). `vectors` names what the
// templates' length is in errors ("the data rows", "the patches").
absl::StatusOr<int64_t> DrawBank(const v1::EncoderSpec& spec, const FloatMatrix& templates,
                                 int64_t r, ModelTensors& t, const char* vectors = "the data rows");

// DrawBank with r = p.num_group_elements(), then the r drawn recorded there:
// the bank step of every kind whose params `p` (a part of `spec`: CdfParams,
// RandomFourierParams, NystromParams, PatchParams) count their elements.
template <typename Params>
absl::Status DrawBankInto(const v1::EncoderSpec& spec, const FloatMatrix& templates, Params& p,
                          ModelTensors& t, const char* vectors = "the data rows") {
  const absl::StatusOr<int64_t> r = DrawBank(spec, templates, p.num_group_elements(), t, vectors);
  if (!r.ok()) return r.status();
  p.set_num_group_elements(static_cast<int32_t>(*r));
  return absl::OkStatus();
}

// The projector over "encoder/bank" for m templates of length d and r group
// elements, honouring the group's placement. `dim_name` names d in errors
// ("input_dim", "the patch dimension k·k·C").
absl::StatusOr<Projector> LoadProjector(const v1::EncoderSpec& spec, int64_t d, int64_t m,
                                        int64_t r, const ModelTensors& t,
                                        const char* dim_name = "input_dim");

// The projector over an "encoder/bank" of m·r stored rows of length d in
// Placement::kTemplates, whatever made the rows (LoadProjector's bank case;
// the patch kind's tempo-warped copies).
absl::StatusOr<Projector> LoadBankProjector(const v1::EncoderSpec& spec, int64_t d, int64_t m,
                                            int64_t r, const ModelTensors& t);

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_BANK_TENSORS_H_
