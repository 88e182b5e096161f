#include "core/encoders/chain_encoder.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/thread_pool.h"

namespace invariant {

absl::StatusOr<std::unique_ptr<ChainEncoder>> ChainEncoder::Create(
    std::vector<std::shared_ptr<const Encoder>> stages) {
  if (stages.empty()) return absl::InvalidArgumentError("chain: no stages");
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("chain: stage ", i, " is null"));
    }
    if (i > 0 && stages[i - 1]->d_out() != stages[i]->d_in()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "chain: stage ", i, " (", stages[i]->kind(), ") expects d_in ", stages[i]->d_in(),
          ", stage ", i - 1, " (", stages[i - 1]->kind(), ") produces ", stages[i - 1]->d_out()));
    }
  }
  return std::unique_ptr<ChainEncoder>(new ChainEncoder(std::move(stages)));
}

ChainEncoder::ChainEncoder(std::vector<std::shared_ptr<const Encoder>> stages)
    : Encoder(stages.front()->d_in(), stages.back()->d_out()), stages_(std::move(stages)) {}

size_t ChainEncoder::parameter_bytes() const {
  size_t total = 0;
  for (const auto& s : stages_) total += s->parameter_bytes();
  return total;
}

void ChainEncoder::Encode(int64_t n, const float* x, float* out) const {
  if (stages_.size() == 1) {
    stages_[0]->Encode(n, x, out);
    return;
  }
  int64_t widest = 0;
  for (size_t i = 0; i + 1 < stages_.size(); ++i) widest = std::max(widest, stages_[i]->d_out());
  // Row blocks run as pool tasks; each stage splits its own work further
  // (nested ParallelFor), so batch 1 still uses every core.
  const int64_t blocks = (n + kRowBlock - 1) / kRowBlock;
  ParallelFor(blocks, [&](int64_t block) {
    const int64_t row0 = block * kRowBlock;
    const int64_t rows = std::min(kRowBlock, n - row0);
    std::vector<float> a(static_cast<size_t>(rows * widest));
    std::vector<float> b(static_cast<size_t>(rows * widest));
    const float* in = x + row0 * d_in();
    for (size_t i = 0; i < stages_.size(); ++i) {
      const bool last = i + 1 == stages_.size();
      float* dst = last ? out + row0 * d_out() : (i % 2 == 0 ? a.data() : b.data());
      stages_[i]->Encode(rows, in, dst);
      in = dst;
    }
  });
}

}  // namespace invariant
