// registry.h: the versioned model registry with hot reload.
//
// ModelRegistry<T> owns every loaded version of every model under a models
// root (layout in core/model/repository.h) as std::shared_ptr<const T>.
// Rescan() lists the root and, per model, asks the VersionPolicy which
// versions are aspired (version_policy.h), plans loads and unloads
// (registry_plan.h: the availability-preserving rules), loads with the
// injected Loader — off the request path, without holding the lookup lock —
// and swaps each finished load in atomically. Requests take a Handle (a
// shared_ptr), so a version unloaded while a request runs stays alive until
// the request ends.
//
// A ready version whose bundle file changed in place (overwritten or
// truncated: its stamp moved) is loaded again from the new file; the bits
// loaded before keep serving meanwhile. The new file replaces them when it
// loads; when it does not, it is refused (on_failed, a failed load in the
// report, the reason in the version's `error`) and the old bits keep serving
// until the file changes again. Loaded bits never depend on the file (the
// loader owns a private copy: core/bundle/bundle.h).
//
// Retired versions (unloaded, or failed and no longer aspired) are kept for
// status reports up to kMaxRetiredVersions per model, newest first.
//
// Readiness: the registry is Serving() once some model has a ready version
// and as long as every model that has ever been ready still has one; a model
// that never loaded does not take the registry out. ModelReady(name) is the
// per-model answer.
//
// The work is done by VersionRegistry (registry.cc) over type-erased
// servables; ModelRegistry<T> only restores the type. The clock is injected
// so the grace period is testable without sleeping.
// Thread-safety: all methods are thread-safe; Rescan calls are serialized.
#ifndef INVARIANT_SERVER_LIFECYCLE_REGISTRY_H_
#define INVARIANT_SERVER_LIFECYCLE_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/lifecycle/registry_plan.h"
#include "server/lifecycle/version_policy.h"

namespace invariant::server {

struct RegistryOptions {
  std::string root;      // the models directory
  VersionPolicy policy;  // default: latest
  absl::Duration removal_grace = absl::Seconds(30);
  std::function<absl::Time()> clock = [] { return absl::Now(); };
  // Model control (Triton's --model-control-mode): false = poll, every model
  // directory under the root is served; true = explicit, only the models
  // named here at start and those loaded by LoadModel are (a Rescan
  // refreshes those alone), until UnloadModel.
  bool explicit_control = false;
  std::vector<std::string> startup_models;
};

// One entry of the repository's index (RepositoryIndex): a model version on
// disk or known to the registry, or a model with no version at all.
struct RepositoryEntry {
  std::string name;
  int64_t version = 0;  // 0: the model has no version on disk nor in memory
  std::string state;    // "READY", "LOADING" or "UNAVAILABLE"
  std::string reason;   // why UNAVAILABLE (the load error, unloaded, not loaded)
  // The reason is the version's load error, which names files and may quote
  // their bytes (admin answers and the log only, never the data path).
  bool load_error = false;
};

// What one Rescan did.
struct ScanReport {
  int loaded = 0;
  int failed = 0;
  int unloaded = 0;
};

// Observers (each may be empty), called outside the registry lock; the
// servable argument of on_ready is `ServableArg`.
template <typename ServableArg>
struct RegistryObservers {
  std::function<void(const std::string& name, int64_t version, const ServableArg& servable)>
      on_ready;
  std::function<void(const std::string& name, int64_t version, const absl::Status& error)>
      on_failed;
  std::function<void(const std::string& name, int64_t version)> on_unloaded;
  // Every Lookup, found or not, with the name asked for (the handler tests
  // count the lookups of one request with it).
  std::function<void(const std::string& name)> on_lookup;
};

// A ready version held by a request.
template <typename ServablePtr>
struct RegistryHandle {
  std::string name;
  int64_t version = 0;
  ServablePtr servable;
};

// The state of one version (servable set only when ready).
template <typename ServablePtr>
struct RegistryVersionInfo {
  int64_t version = 0;
  VersionState state = VersionState::kLoading;
  std::string error;
  ServablePtr servable;
};

// Retired versions (unloaded, or failed and not aspired) kept per model.
inline constexpr int kMaxRetiredVersions = 8;

// How the caller's API names the model's fields in Lookup's errors
// (invariant.v1's by default; the Open Inference Protocol's "model_name",
// "model_version").
struct LookupFieldNames {
  std::string name = "model.name";
  std::string version = "model.version";
  std::string label = "model.version_label";
};

// The registry over servables of any type (std::shared_ptr<const void>).
class VersionRegistry {
 public:
  using Servable = std::shared_ptr<const void>;
  using Loader = std::function<absl::StatusOr<Servable>(const std::string& path)>;
  using Observers = RegistryObservers<Servable>;
  using Handle = RegistryHandle<Servable>;
  using VersionInfo = RegistryVersionInfo<Servable>;

  VersionRegistry(RegistryOptions options, Loader loader, Observers observers)
      : options_(std::move(options)),
        loader_(std::move(loader)),
        observers_(std::move(observers)),
        wanted_(options_.startup_models.begin(), options_.startup_models.end()) {}

  ScanReport Rescan() ABSL_LOCKS_EXCLUDED(scan_mu_, mu_);
  absl::StatusOr<Handle> Lookup(const std::string& name, int64_t version, const std::string& label,
                                const LookupFieldNames& fields) const ABSL_LOCKS_EXCLUDED(mu_);
  std::map<std::string, std::vector<VersionInfo>> Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);
  std::map<std::string, int64_t> Labels(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);
  bool Serving() const ABSL_LOCKS_EXCLUDED(mu_);
  bool ModelReady(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);
  bool explicit_control() const { return options_.explicit_control; }
  absl::Status LoadModel(const std::string& name) ABSL_LOCKS_EXCLUDED(scan_mu_, mu_);
  absl::Status UnloadModel(const std::string& name,
                           std::vector<std::weak_ptr<const void>>* in_use = nullptr)
      ABSL_LOCKS_EXCLUDED(scan_mu_, mu_);
  std::vector<RepositoryEntry> Index(bool ready_only) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    VersionInfo info;
    int64_t stamp = 0;  // of the bundle file last attempted
    std::optional<absl::Time> missing_since;
  };
  struct ModelEntry {
    std::map<int64_t, Entry, std::greater<int64_t>> versions;  // newest first
    std::map<std::string, int64_t> labels;
    bool ever_ready = false;  // some version of it has been ready
  };

  // One model's scan: plan (under mu_), load (without it), unload (under mu_).
  void ScanModel(const std::string& name, bool listed, ScanReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(scan_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<int64_t> PlanModelLoads(const std::string& name, bool listed,
                                      const std::vector<int64_t>& aspired,
                                      const std::map<int64_t, VersionFile>& on_disk)
      ABSL_LOCKS_EXCLUDED(mu_);
  void LoadVersions(const std::string& name, const std::vector<int64_t>& versions,
                    const std::map<int64_t, VersionFile>& on_disk, ScanReport& report)
      ABSL_LOCKS_EXCLUDED(mu_);
  void UnloadVersions(const std::string& name, const std::vector<int64_t>& aspired,
                      const std::map<int64_t, VersionFile>& on_disk, ScanReport& report)
      ABSL_LOCKS_EXCLUDED(mu_);
  static VersionViews Views(const ModelEntry& model);
  // Forgets the oldest retired versions beyond kMaxRetiredVersions.
  static void PruneRetired(ModelEntry& model, const std::vector<int64_t>& aspired);

  // Explicit control: whether `name` is to be served.
  bool Wanted(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);

  const RegistryOptions options_;
  const Loader loader_;
  const Observers observers_;
  absl::Mutex scan_mu_;  // serializes Rescan, LoadModel, UnloadModel
  mutable absl::Mutex mu_;
  std::map<std::string, ModelEntry> models_ ABSL_GUARDED_BY(mu_);
  // Explicit control: the models to serve (startup_models, LoadModel).
  std::set<std::string> wanted_ ABSL_GUARDED_BY(mu_);
};

template <typename T>
class ModelRegistry {
 public:
  using Loader = std::function<absl::StatusOr<std::shared_ptr<const T>>(const std::string& path)>;

  using Observers = RegistryObservers<T>;
  using Handle = RegistryHandle<std::shared_ptr<const T>>;
  using VersionInfo = RegistryVersionInfo<std::shared_ptr<const T>>;

  ModelRegistry(RegistryOptions options, Loader loader, Observers observers = {})
      : core_(std::move(options), EraseLoader(std::move(loader)),
              EraseObservers(std::move(observers))) {}

  // Scans the root once: loads aspired versions, applies the unload rules.
  ScanReport Rescan() { return core_.Rescan(); }

  // The ready version `version` (> 0), or the one labelled `label`, or the
  // newest ready version (version 0 and empty label or label "latest").
  // NOT_FOUND names the model, the version or label, and what is available.
  // A version together with a label (other than "latest") must agree with
  // it: INVALID_ARGUMENT naming model.version_label when the label is
  // unknown or names another version. Errors name the fields as `fields` does.
  absl::StatusOr<Handle> Lookup(const std::string& name, int64_t version = 0,
                                const std::string& label = "",
                                const LookupFieldNames& fields = {}) const {
    absl::StatusOr<VersionRegistry::Handle> h = core_.Lookup(name, version, label, fields);
    if (!h.ok()) return h.status();
    return Handle{h->name, h->version, std::static_pointer_cast<const T>(h->servable)};
  }

  // Every model seen, each with its versions newest first (ready, loading,
  // failed and unloaded alike).
  std::map<std::string, std::vector<VersionInfo>> Snapshot() const {
    std::map<std::string, std::vector<VersionInfo>> out;
    for (auto& [name, versions] : core_.Snapshot()) {
      for (auto& v : versions) {
        out[name].push_back(
            {v.version, v.state, v.error, std::static_pointer_cast<const T>(v.servable)});
      }
    }
    return out;
  }

  // Version labels of `name` as read by the last scan.
  std::map<std::string, int64_t> Labels(const std::string& name) const {
    return core_.Labels(name);
  }

  // True when some model has a ready version and every model that has ever
  // had one still has one (a model that never loaded does not count).
  bool Serving() const { return core_.Serving(); }
  // True when model `name` has a ready version.
  bool ModelReady(const std::string& name) const { return core_.ModelReady(name); }

  // Explicit control only (FAILED_PRECONDITION naming --model_control
  // otherwise). LoadModel: serve the model `name` (a directory under the
  // root; NOT_FOUND naming model_name otherwise): its aspired versions are
  // loaded now, by the same staged path as a Rescan (a bundle that does not
  // load is refused and the versions serving keep serving); OK once a
  // version is ready and none failed, FAILED_PRECONDITION with the reason
  // (and what still serves) otherwise. Loading a loaded model loads what
  // changed on disk. UnloadModel: stop serving `name`: every version leaves
  // the registry at once (Lookup answers NOT_FOUND) while calls that already
  // hold a Handle finish on it; the bits are freed when the last such call
  // ends (so unloading drains, never fails, the calls in flight). OK for a
  // model that is not loaded; NOT_FOUND for a name the registry never saw
  // and the root does not hold.
  absl::Status LoadModel(const std::string& name) { return core_.LoadModel(name); }
  // `in_use` (may be null) receives the unloaded versions' bits, which stay
  // alive while a call holds them: a caller may wait for them to expire to
  // know the model has drained.
  absl::Status UnloadModel(const std::string& name,
                           std::vector<std::weak_ptr<const void>>* in_use = nullptr) {
    return core_.UnloadModel(name, in_use);
  }
  // Every model directory under the root and every model the registry
  // knows, each version with its state: READY, LOADING, or UNAVAILABLE with
  // the reason (the load error, "unloaded", or not loaded: not aspired by
  // the version policy, or not loaded under explicit control). A model with
  // no version gets one entry of version 0. `ready_only`: READY entries only.
  std::vector<RepositoryEntry> Index(bool ready_only = false) const {
    return core_.Index(ready_only);
  }
  bool explicit_control() const { return core_.explicit_control(); }

 private:
  static VersionRegistry::Loader EraseLoader(Loader loader) {
    return [loader = std::move(loader)](
               const std::string& path) -> absl::StatusOr<VersionRegistry::Servable> {
      absl::StatusOr<std::shared_ptr<const T>> loaded = loader(path);
      if (!loaded.ok()) return loaded.status();
      return VersionRegistry::Servable(*std::move(loaded));
    };
  }
  static VersionRegistry::Observers EraseObservers(Observers o) {
    VersionRegistry::Observers erased;
    if (o.on_ready) {
      erased.on_ready = [f = std::move(o.on_ready)](const std::string& name, int64_t version,
                                                    const VersionRegistry::Servable& servable) {
        f(name, version, *static_cast<const T*>(servable.get()));
      };
    }
    erased.on_failed = std::move(o.on_failed);
    erased.on_unloaded = std::move(o.on_unloaded);
    erased.on_lookup = std::move(o.on_lookup);
    return erased;
  }

  VersionRegistry core_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_LIFECYCLE_REGISTRY_H_
