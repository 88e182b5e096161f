// model_memory_budget.h: --max_model_bytes, the memory every loaded model
// version may hold together (docs/operations.md, "Model memory").
//
// A load asks for its version's stated bytes (core/model/model_footprint.h:
// the bundle copy, the encoders' packed copies, a workspace per compute
// thread; the caller states them) once the bundle's manifest is read and
// before the bundle is: Reserve
// grants a reservation for all of it or refuses (RESOURCE_EXHAUSTED) with
// the figures: what the version states, what the loaded versions hold, the
// limit. The reservation is given back when the last reference to the
// version goes (the registry unloaded it and its calls in flight ended), so
// a version replacing another is admitted only while both fit: a reload
// that would pass the limit is refused and the served version stays.
//
// Thread-safety: Reserve and held() may be called from any thread; a
// reservation may be dropped on any thread.
#ifndef INVARIANT_SERVER_ADMISSION_MODEL_MEMORY_BUDGET_H_
#define INVARIANT_SERVER_ADMISSION_MODEL_MEMORY_BUDGET_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace invariant::server {

class ModelMemoryBudget {
 public:
  // `limit` <= 0: no limit (every Reserve is granted, and counted).
  // `on_change` (may be empty) gets the bytes held after every change, with
  // the budget's lock held.
  explicit ModelMemoryBudget(int64_t limit, std::function<void(int64_t held)> on_change = nullptr)
      : limit_(limit), on_change_(std::move(on_change)) {}
  ModelMemoryBudget(const ModelMemoryBudget&) = delete;
  ModelMemoryBudget& operator=(const ModelMemoryBudget&) = delete;

  // A reservation of `bytes` for the bundle at `path`, held until the
  // returned pointer's last copy goes; or RESOURCE_EXHAUSTED
  // "max_model_bytes: <path> states <bytes> bytes (<breakdown>) and the
  // loaded versions hold <held> of max_model_bytes=<limit>; ...".
  absl::StatusOr<std::shared_ptr<const void>> Reserve(const std::string& path, int64_t bytes,
                                                      const std::string& breakdown);

  int64_t held() const;
  int64_t limit() const { return limit_; }

 private:
  void Give(int64_t bytes);

  const int64_t limit_;
  const std::function<void(int64_t)> on_change_;
  mutable std::mutex mu_;
  int64_t held_ = 0;  // guarded by mu_
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_ADMISSION_MODEL_MEMORY_BUDGET_H_
