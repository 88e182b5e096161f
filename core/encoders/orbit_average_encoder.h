// orbit_average_encoder.h: an encoder averaged over the orbit of its input
// under a finite group: φ̄(x) = (1/r) Σ_k φ(g_k·x), g_1..g_r every element.
//
// This is Haar integration over a finite group acting on the input (Mroueh
// et al. 2015, §2; docs/math.md §10), around any feature map φ. Because
// {g_k·h} runs over the same r elements as {g_k} for every h of the group,
// φ̄(h·x) and φ̄(x) sum the same r vectors, in another order: they are equal
// up to float summation order, and bit for bit when r = 2 (a + b = b + a)
// and the action is exact (pixel permutations: DihedralAction copies
// pixels). The patch encoder uses it with the left–right mirror of the
// whole image (PatchParams.image_group): the patch features of an image and
// of its mirror image, averaged. The invariance is of the encoder's input:
// a preprocessing stage before it must commute with the group (e.g.
// per-channel, not per-pixel, centring of images under a mirror).
//
// Computation: images in blocks of kImageBlock, on the calling thread; the
// action writes a block's r·n copies g_k·x_i (GroupAction::Apply, element
// by element, O(d) each for a permutation), they go to the inner encoder in
// one call (it splits the work over the pool), and row i of the output is
// the sum of its r rows in k order, times 1/r. Scratch: kImageBlock·r rows
// of d_in and of d_out floats per call.
//
// Batch independence: a row's output depends only on that row whenever the
// inner encoder's does (its r copies are rows of their own in the inner
// call, summed in one fixed order).
//
// Thread-safety: immutable after Create; Encode is const and thread-safe
// when the inner encoder's and the action's Apply are.
#ifndef INVARIANT_CORE_ENCODERS_ORBIT_AVERAGE_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_ORBIT_AVERAGE_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/encoders/encoder.h"
#include "core/groups/group.h"

namespace invariant {

class OrbitAverageEncoder final : public Encoder {
 public:
  static constexpr int64_t kImageBlock = 32;

  // `elements` are the group's elements, every one (the average is
  // invariant only over a whole group). Errors (INVALID_ARGUMENT): a null
  // inner encoder or action, no elements, or an action on vectors of
  // another length than inner's d_in.
  static absl::StatusOr<std::unique_ptr<OrbitAverageEncoder>> Create(
      std::shared_ptr<const Encoder> inner, std::shared_ptr<const GroupAction> action,
      std::vector<GroupElement> elements);

  void Encode(int64_t n, const float* x, float* out) const override;
  // The inner encoder's kind: the features are of its kind, averaged.
  std::string kind() const override { return inner_->kind(); }
  size_t parameter_bytes() const override { return inner_->parameter_bytes(); }

  const Encoder& inner() const { return *inner_; }
  int64_t num_elements() const { return static_cast<int64_t>(elements_.size()); }  // r

 private:
  OrbitAverageEncoder(std::shared_ptr<const Encoder> inner,
                      std::shared_ptr<const GroupAction> action,
                      std::vector<GroupElement> elements);

  std::shared_ptr<const Encoder> inner_;
  std::shared_ptr<const GroupAction> action_;
  std::vector<GroupElement> elements_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_ORBIT_AVERAGE_ENCODER_H_
