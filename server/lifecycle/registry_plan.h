// registry_plan.h: the registry's decisions, as pure functions of what is
// loaded and what is on disk (no locks, no file system, no loading).
//
// The policy (version_policy.h) names the aspired versions: the ones the
// server should serve. Planning turns them into actions under the
// availability-preserving rules (like TF Serving's
// AvailabilityPreservingPolicy):
//  * load an aspired version that is new, was unloaded, or failed and whose
//    bundle file changed since (a failure is retried only for a new file,
//    except a refusal for room, RESOURCE_EXHAUSTED from --max_model_bytes,
//    whose stamp the registry forgets so the next scan or load retries it);
//  * load again a ready version whose bundle file changed in place (the
//    loaded bits keep serving until the new file loads, and keep serving
//    when it does not);
//  * a version the policy no longer aspires to is unloaded only once an
//    aspired version is ready, and each aspired version that is not ready
//    (failed or loading) keeps the newest such version serving in its place,
//    so a corrupt newest version never shrinks the set of serving versions
//    (latest:2 with versions 1, 2 ready and a corrupt 3 keeps serving 1 and 2;
//    TF Serving's policy would unload 1);
//  * a version whose directory disappeared is unloaded only after the
//    removal grace and only while another ready version is still on disk,
//    so an empty or failing scan never unloads the last good version.
#ifndef INVARIANT_SERVER_LIFECYCLE_REGISTRY_PLAN_H_
#define INVARIANT_SERVER_LIFECYCLE_REGISTRY_PLAN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "core/model/repository.h"

namespace invariant::server {

enum class VersionState { kLoading, kReady, kFailed, kUnloaded };

// "loading", "ready", "failed" or "unloaded".
const char* VersionStateName(VersionState state);

// What planning needs to know of one version the registry has seen.
struct VersionView {
  VersionState state = VersionState::kLoading;
  int64_t stamp = 0;                        // of the bundle file last attempted
  std::optional<absl::Time> missing_since;  // ready but no longer on disk since
};
using VersionViews = std::map<int64_t, VersionView, std::greater<int64_t>>;

// The aspired versions to (re)load now, newest first.
std::vector<int64_t> PlanLoads(const VersionViews& seen, const std::vector<int64_t>& aspired,
                               const std::map<int64_t, VersionFile>& on_disk);

// The ready versions to unload now. `seen` must have missing_since set for
// every ready version absent from `on_disk` (and reset for present ones).
std::vector<int64_t> PlanUnloads(const VersionViews& seen, const std::vector<int64_t>& aspired,
                                 const std::map<int64_t, VersionFile>& on_disk, absl::Time now,
                                 absl::Duration removal_grace);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_LIFECYCLE_REGISTRY_PLAN_H_
