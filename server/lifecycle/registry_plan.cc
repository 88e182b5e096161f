#include "server/lifecycle/registry_plan.h"

#include <algorithm>

namespace invariant::server {

const char* VersionStateName(VersionState state) {
  switch (state) {
    case VersionState::kLoading:
      return "loading";
    case VersionState::kReady:
      return "ready";
    case VersionState::kFailed:
      return "failed";
    case VersionState::kUnloaded:
      return "unloaded";
  }
  return "unknown";
}

std::vector<int64_t> PlanLoads(const VersionViews& seen, const std::vector<int64_t>& aspired,
                               const std::map<int64_t, VersionFile>& on_disk) {
  std::vector<int64_t> loads;
  for (int64_t v : aspired) {
    auto it = seen.find(v);
    const bool changed = it != seen.end() && it->second.stamp != on_disk.at(v).stamp;
    const bool load = it == seen.end() || it->second.state == VersionState::kUnloaded ||
                      (it->second.state == VersionState::kFailed && changed) ||
                      (it->second.state == VersionState::kReady && changed);
    if (load) loads.push_back(v);
  }
  return loads;
}

std::vector<int64_t> PlanUnloads(const VersionViews& seen, const std::vector<int64_t>& aspired,
                                 const std::map<int64_t, VersionFile>& on_disk, absl::Time now,
                                 absl::Duration removal_grace) {
  auto is_ready = [&](int64_t v) {
    auto it = seen.find(v);
    return it != seen.end() && it->second.state == VersionState::kReady;
  };
  const bool aspired_ready = std::any_of(aspired.begin(), aspired.end(), is_ready);
  // Each aspired version that is not ready (failed, still loading) keeps one
  // unaspired ready version serving in its place, the newest first.
  int64_t stand_ins = static_cast<int64_t>(aspired.size()) -
                      std::count_if(aspired.begin(), aspired.end(), is_ready);
  std::vector<int64_t> unloads;
  for (const auto& [v, view] : seen) {  // newest first
    if (view.state != VersionState::kReady) continue;
    bool unload = false;
    if (on_disk.count(v) > 0) {
      const bool is_aspired = std::find(aspired.begin(), aspired.end(), v) != aspired.end();
      if (!is_aspired && stand_ins > 0) {
        --stand_ins;
      } else {
        unload = !is_aspired && aspired_ready;
      }
    } else {
      bool other_ready_on_disk = false;
      for (const auto& [w, other] : seen) {
        if (w != v && other.state == VersionState::kReady && on_disk.count(w) > 0) {
          other_ready_on_disk = true;
        }
      }
      unload = other_ready_on_disk && view.missing_since.has_value() &&
               now - *view.missing_since >= removal_grace;
    }
    if (unload) unloads.push_back(v);
  }
  return unloads;
}

}  // namespace invariant::server
