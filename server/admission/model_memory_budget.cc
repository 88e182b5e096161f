#include "server/admission/model_memory_budget.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace invariant::server {

absl::StatusOr<std::shared_ptr<const void>> ModelMemoryBudget::Reserve(
    const std::string& path, int64_t bytes, const std::string& breakdown) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (limit_ > 0 && held_ + bytes > limit_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("max_model_bytes: ", path, " states ", bytes, " bytes (", breakdown,
                       ") and the loaded versions hold ", held_, " of max_model_bytes=", limit_,
                       bytes > limit_ ? "; the version alone is over the limit"
                                      : "; unload a version or raise --max_model_bytes"));
    }
    held_ += bytes;
    if (on_change_) on_change_(held_);
  }
  // Any non-null pointer: what matters is its deleter, which gives the bytes back.
  return std::shared_ptr<const void>(this,
                                     [bytes](ModelMemoryBudget* budget) { budget->Give(bytes); });
}

int64_t ModelMemoryBudget::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

void ModelMemoryBudget::Give(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  held_ -= bytes;
  if (on_change_) on_change_(held_);
}

}  // namespace invariant::server
