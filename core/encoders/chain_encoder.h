// chain_encoder.h: encoders composed in sequence, e.g. preprocess → encoder →
// second layer, as one Encoder.
//
// Stage i's output feeds stage i+1; d_in is the first stage's, d_out the
// last's. Rows go through the stages in blocks of kRowBlock, one thread-pool
// task per block with its own scratch (the stages split their work further),
// so Encode is const, thread-safe and batch-independent whenever every
// stage is. kind() is the last stage's kind (what the chain produces).
#ifndef INVARIANT_CORE_ENCODERS_CHAIN_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_CHAIN_ENCODER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/encoders/encoder.h"

namespace invariant {

class ChainEncoder final : public Encoder {
 public:
  static constexpr int64_t kRowBlock = 64;

  // Errors: no stages, a null stage, stage i's d_out != stage i+1's d_in.
  static absl::StatusOr<std::unique_ptr<ChainEncoder>> Create(
      std::vector<std::shared_ptr<const Encoder>> stages);

  void Encode(int64_t n, const float* x, float* out) const override;
  std::string kind() const override { return stages_.back()->kind(); }
  size_t parameter_bytes() const override;

  const std::vector<std::shared_ptr<const Encoder>>& stages() const { return stages_; }

 private:
  explicit ChainEncoder(std::vector<std::shared_ptr<const Encoder>> stages);

  std::vector<std::shared_ptr<const Encoder>> stages_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_CHAIN_ENCODER_H_
