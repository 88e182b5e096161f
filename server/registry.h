// registry.h: the versioned model registry with hot reload (ARCHITECTURE decision 4).
//
// ModelRegistry<T> owns every loaded version of every model under a models
// root (layout in core/model/repository.h) as std::shared_ptr<const T>. Rescan()
// lists the root, loads the versions the VersionPolicy wants with the injected
// Loader — off the request path, without holding the lookup lock — and swaps
// each finished load in atomically. Requests take a Handle (a shared_ptr), so a
// version unloaded while a request runs stays alive until the request ends.
//
// Availability-preserving rules (TF Serving's AvailabilityPreservingPolicy):
//  * a failed load leaves the previously ready versions serving; the failure is
//    kept in the status (state kFailed + reason) and retried only when the
//    bundle file changes;
//  * a version the policy no longer wants is unloaded only once a version the
//    policy wants is ready;
//  * a version whose directory disappeared is unloaded only after
//    `removal_grace` and only while another version of the model stays ready
//    on disk — an empty or failing scan never unloads the last good version.
//
// The clock is injected so the grace period is testable without sleeping.
// Thread-safety: all methods are thread-safe; Rescan calls are serialized.
#ifndef INVARIANT_SERVER_REGISTRY_H_
#define INVARIANT_SERVER_REGISTRY_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/model/repository.h"
#include "server/version_policy.h"

namespace invariant::server {

enum class VersionState { kLoading, kReady, kFailed, kUnloaded };

// "loading", "ready", "failed" or "unloaded".
const char* VersionStateName(VersionState state);

struct RegistryOptions {
  std::string root;      // the models directory
  VersionPolicy policy;  // default: latest
  absl::Duration removal_grace = absl::Seconds(30);
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

// What one Rescan did.
struct ScanReport {
  int loaded = 0;
  int failed = 0;
  int unloaded = 0;
};

template <typename T>
class ModelRegistry {
 public:
  using Loader = std::function<absl::StatusOr<std::shared_ptr<const T>>(const std::string& path)>;

  // Observers (each may be empty), called outside the registry lock.
  struct Observers {
    std::function<void(const std::string& name, int64_t version, const T& servable)> on_ready;
    std::function<void(const std::string& name, int64_t version, const absl::Status& error)>
        on_failed;
    std::function<void(const std::string& name, int64_t version)> on_unloaded;
  };

  // A ready version held by a request.
  struct Handle {
    std::string name;
    int64_t version = 0;
    std::shared_ptr<const T> servable;
  };

  // The state of one version (servable set only when ready).
  struct VersionInfo {
    int64_t version = 0;
    VersionState state = VersionState::kLoading;
    std::string error;
    std::shared_ptr<const T> servable;
  };

  ModelRegistry(RegistryOptions options, Loader loader, Observers observers = {})
      : options_(std::move(options)),
        loader_(std::move(loader)),
        observers_(std::move(observers)) {}

  // Scans the root once: loads wanted versions, applies the unload rules.
  ScanReport Rescan();

  // The ready version `version` (> 0), or the one labelled `label`, or the
  // newest ready version (version 0 and empty label or label "latest").
  // NOT_FOUND names the model, the version or label, and what is available.
  absl::StatusOr<Handle> Lookup(const std::string& name, int64_t version = 0,
                                const std::string& label = "") const;

  // Every model seen, each with its versions newest first (ready, loading,
  // failed and unloaded alike).
  std::map<std::string, std::vector<VersionInfo>> Snapshot() const;

  // Version labels of `name` as read by the last scan.
  std::map<std::string, int64_t> Labels(const std::string& name) const;

  // True when at least one model was seen and each has a ready version.
  bool AllModelsReady() const;

 private:
  struct Entry {
    VersionInfo info;
    int64_t stamp = 0;  // of the file last attempted
    std::optional<absl::Time> missing_since;
  };
  struct ModelEntry {
    std::map<int64_t, Entry, std::greater<int64_t>> versions;  // newest first
    std::map<std::string, int64_t> labels;
  };

  void ScanModel(const std::string& name, bool listed, ScanReport& report);

  const RegistryOptions options_;
  const Loader loader_;
  const Observers observers_;
  std::mutex scan_mu_;     // serializes Rescan
  mutable std::mutex mu_;  // guards models_
  std::map<std::string, ModelEntry> models_;
};

// ---------------------------------------------------------------------------
// Implementation.

inline const char* VersionStateName(VersionState state) {
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

template <typename T>
ScanReport ModelRegistry<T>::Rescan() {
  std::lock_guard<std::mutex> scan_lock(scan_mu_);
  ScanReport report;
  absl::StatusOr<std::vector<std::string>> names = ListModelNames(options_.root);
  std::vector<std::string> all_names;
  if (names.ok()) all_names = *names;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, model] : models_) {
      if (std::find(all_names.begin(), all_names.end(), name) == all_names.end()) {
        all_names.push_back(name);
      }
    }
  }
  for (const std::string& name : all_names) {
    const bool listed = names.ok() && std::find(names->begin(), names->end(), name) != names->end();
    ScanModel(name, listed, report);
  }
  return report;
}

template <typename T>
void ModelRegistry<T>::ScanModel(const std::string& name, bool listed, ScanReport& report) {
  const std::map<int64_t, VersionFile> on_disk =
      listed ? ListPublishedVersions(options_.root, name) : std::map<int64_t, VersionFile>{};
  if (listed && on_disk.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (models_.count(name) == 0) return;  // an empty directory is not a model (yet)
  }
  std::vector<int64_t> available;
  for (const auto& [version, file] : on_disk) available.push_back(version);
  const std::vector<int64_t> wanted = options_.policy.Select(available);

  // 1. Decide what to load, marking it kLoading.
  std::vector<int64_t> to_load;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ModelEntry& model = models_[name];
    if (listed) model.labels = ReadLabels(options_.root, name);
    for (int64_t v : wanted) {
      auto it = model.versions.find(v);
      const int64_t stamp = on_disk.at(v).stamp;
      const bool load =
          it == model.versions.end() || it->second.info.state == VersionState::kUnloaded ||
          (it->second.info.state == VersionState::kFailed && it->second.stamp != stamp);
      if (!load) continue;
      Entry& entry = model.versions[v];
      entry.info.version = v;
      entry.info.state = VersionState::kLoading;
      entry.info.error.clear();
      entry.stamp = stamp;
      to_load.push_back(v);
    }
  }
  // 2. Load without holding the lookup lock; swap each result in.
  for (int64_t v : to_load) {
    absl::StatusOr<std::shared_ptr<const T>> loaded = loader_(on_disk.at(v).bundle_path);
    if (loaded.ok() && *loaded == nullptr) {
      loaded = absl::InternalError(
          absl::StrCat("loader returned no model for '", on_disk.at(v).bundle_path, "'"));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      Entry& entry = models_[name].versions[v];
      if (loaded.ok()) {
        entry.info.state = VersionState::kReady;
        entry.info.servable = *loaded;
        ++report.loaded;
      } else {
        entry.info.state = VersionState::kFailed;
        entry.info.error = std::string(loaded.status().message());
        ++report.failed;
      }
    }
    if (loaded.ok()) {
      if (observers_.on_ready) observers_.on_ready(name, v, **loaded);
    } else if (observers_.on_failed) {
      observers_.on_failed(name, v, loaded.status());
    }
  }
  // 3. Unload per the availability-preserving rules.
  std::vector<int64_t> unloaded;
  std::vector<std::shared_ptr<const T>> released;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    ModelEntry& model = models_[name];
    const absl::Time now = options_.clock();
    auto is_ready = [](const Entry& e) { return e.info.state == VersionState::kReady; };
    bool wanted_ready = false;
    for (int64_t v : wanted) {
      auto it = model.versions.find(v);
      if (it != model.versions.end() && is_ready(it->second)) wanted_ready = true;
    }
    for (auto& [v, entry] : model.versions) {
      if (!is_ready(entry)) continue;
      const bool present = on_disk.count(v) > 0;
      bool unload = false;
      if (present) {
        entry.missing_since.reset();
        const bool is_wanted = std::find(wanted.begin(), wanted.end(), v) != wanted.end();
        unload = !is_wanted && wanted_ready;
      } else {
        if (!entry.missing_since) entry.missing_since = now;
        bool other_ready_on_disk = false;
        for (const auto& [w, other] : model.versions) {
          if (w != v && is_ready(other) && on_disk.count(w) > 0) other_ready_on_disk = true;
        }
        unload = other_ready_on_disk && now - *entry.missing_since >= options_.removal_grace;
      }
      if (unload) {
        entry.info.state = VersionState::kUnloaded;
        released.push_back(std::move(entry.info.servable));
        entry.info.servable.reset();
        unloaded.push_back(v);
        ++report.unloaded;
      }
    }
  }
  released.clear();
  for (int64_t v : unloaded) {
    if (observers_.on_unloaded) observers_.on_unloaded(name, v);
  }
}

template <typename T>
absl::StatusOr<typename ModelRegistry<T>::Handle> ModelRegistry<T>::Lookup(
    const std::string& name, int64_t version, const std::string& label) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto model_it = models_.find(name);
  if (model_it == models_.end()) {
    std::vector<std::string> known;
    for (const auto& [n, m] : models_) known.push_back(n);
    return absl::NotFoundError(absl::StrCat("model.name: no model named '", name,
                                            "'; expected one of [", absl::StrJoin(known, ", "),
                                            "]"));
  }
  const ModelEntry& model = model_it->second;
  std::vector<int64_t> ready;
  for (const auto& [v, entry] : model.versions) {
    if (entry.info.state == VersionState::kReady) ready.push_back(v);
  }
  int64_t wanted = version;
  if (wanted == 0 && !label.empty() && label != "latest") {
    auto label_it = model.labels.find(label);
    if (label_it == model.labels.end()) {
      std::vector<std::string> labels;
      for (const auto& [l, v] : model.labels) labels.push_back(l);
      return absl::NotFoundError(absl::StrCat("model.version_label: model '", name,
                                              "' has no label '", label, "'; expected one of [",
                                              absl::StrJoin(labels, ", "), "]"));
    }
    wanted = label_it->second;
  }
  if (wanted == 0) {
    if (ready.empty()) {
      return absl::NotFoundError(
          absl::StrCat("model '", name, "': no ready version (none loaded successfully yet)"));
    }
    wanted = ready.front();
  }
  auto it = model.versions.find(wanted);
  if (it == model.versions.end() || it->second.info.state != VersionState::kReady) {
    std::string state =
        it == model.versions.end() ? "unknown" : VersionStateName(it->second.info.state);
    if (it != model.versions.end() && !it->second.info.error.empty()) {
      absl::StrAppend(&state, ": ", it->second.info.error);
    }
    return absl::NotFoundError(
        absl::StrCat("model.version: model '", name, "' version ", wanted, " is not ready (", state,
                     "); expected one of the ready versions [", absl::StrJoin(ready, ", "), "]"));
  }
  return Handle{name, wanted, it->second.info.servable};
}

template <typename T>
std::map<std::string, std::vector<typename ModelRegistry<T>::VersionInfo>>
ModelRegistry<T>::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::vector<VersionInfo>> out;
  for (const auto& [name, model] : models_) {
    std::vector<VersionInfo>& versions = out[name];
    for (const auto& [v, entry] : model.versions) versions.push_back(entry.info);
  }
  return out;
}

template <typename T>
std::map<std::string, int64_t> ModelRegistry<T>::Labels(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  return it == models_.end() ? std::map<std::string, int64_t>{} : it->second.labels;
}

template <typename T>
bool ModelRegistry<T>::AllModelsReady() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (models_.empty()) return false;
  for (const auto& [name, model] : models_) {
    bool any_ready = false;
    for (const auto& [v, entry] : model.versions) {
      if (entry.info.state == VersionState::kReady) any_ready = true;
    }
    if (!any_ready) return false;
  }
  return true;
}

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_REGISTRY_H_
