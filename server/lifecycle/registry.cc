#include "server/lifecycle/registry.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/error_text.h"

namespace invariant::server {

VersionViews VersionRegistry::Views(const ModelEntry& model) {
  VersionViews views;
  for (const auto& [v, entry] : model.versions) {
    views[v] = VersionView{entry.info.state, entry.stamp, entry.missing_since};
  }
  return views;
}

void VersionRegistry::PruneRetired(ModelEntry& model, const std::vector<int64_t>& aspired) {
  int kept = 0;
  for (auto it = model.versions.begin(); it != model.versions.end();) {  // newest first
    const VersionState state = it->second.info.state;
    const bool retired = (state == VersionState::kUnloaded || state == VersionState::kFailed) &&
                         std::find(aspired.begin(), aspired.end(), it->first) == aspired.end();
    if (retired && ++kept > kMaxRetiredVersions) {
      it = model.versions.erase(it);
    } else {
      ++it;
    }
  }
}

ScanReport VersionRegistry::Rescan() {
  absl::MutexLock scan_lock(&scan_mu_);
  ScanReport report;
  absl::StatusOr<std::vector<std::string>> names = ListModelNames(options_.root);
  std::vector<std::string> all_names;
  if (names.ok()) all_names = *names;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, model] : models_) {
      if (std::find(all_names.begin(), all_names.end(), name) == all_names.end()) {
        all_names.push_back(name);
      }
    }
  }
  for (const std::string& name : all_names) {
    if (options_.explicit_control && !Wanted(name)) continue;
    const bool listed = names.ok() && std::find(names->begin(), names->end(), name) != names->end();
    ScanModel(name, listed, report);
  }
  return report;
}

bool VersionRegistry::Wanted(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  return wanted_.count(name) > 0;
}

namespace {

constexpr char kUnloadedByRequest[] = "unloaded by request";

absl::Status NeedsExplicitControl(const char* what) {
  return absl::FailedPreconditionError(absl::StrCat(
      "model_control: ", what,
      " by request needs --model_control=explicit; under --model_control=poll the models "
      "directory decides what is served (add or remove the model's directory, then reload)"));
}

}  // namespace

absl::Status VersionRegistry::LoadModel(const std::string& name) {
  if (!options_.explicit_control) return NeedsExplicitControl("loading a model");
  absl::MutexLock scan_lock(&scan_mu_);
  absl::StatusOr<std::vector<std::string>> names = ListModelNames(options_.root);
  if (!names.ok()) return names.status();
  if (std::find(names->begin(), names->end(), name) == names->end()) {
    return absl::NotFoundError(absl::StrCat("model_name: no model named '", EchoInput(name),
                                            "' in the models directory; expected one of [",
                                            absl::StrJoin(*names, ", "), "]"));
  }
  {
    absl::MutexLock lock(&mu_);
    wanted_.insert(name);
  }
  ScanReport report;
  ScanModel(name, /*listed=*/true, report);
  absl::MutexLock lock(&mu_);
  auto it = models_.find(name);
  std::vector<int64_t> ready;
  std::vector<std::string> refused;
  if (it != models_.end()) {
    for (const auto& [v, entry] : it->second.versions) {
      if (entry.info.state == VersionState::kReady) ready.push_back(v);
      if (!entry.info.error.empty() && entry.info.state != VersionState::kUnloaded) {
        refused.push_back(absl::StrCat("version ", v, ": ", entry.info.error));
      }
    }
  }
  if (report.failed == 0 && !ready.empty()) return absl::OkStatus();
  if (it == models_.end() || it->second.versions.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("model_name: model '", name,
                                                      "' has no published version (", options_.root,
                                                      "/", name, "/<version>/model.bundle)"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "model_name: model '", name, "' was not loaded: ", absl::StrJoin(refused, "; "),
      ready.empty() ? "; no version serves"
                    : absl::StrCat("; still serving version(s) ", absl::StrJoin(ready, ", "))));
}

absl::Status VersionRegistry::UnloadModel(const std::string& name,
                                          std::vector<std::weak_ptr<const void>>* in_use) {
  if (!options_.explicit_control) return NeedsExplicitControl("unloading a model");
  absl::MutexLock scan_lock(&scan_mu_);
  std::vector<int64_t> unloaded;
  std::vector<Servable> released;  // destroyed outside the lock
  {
    absl::MutexLock lock(&mu_);
    wanted_.erase(name);
    auto it = models_.find(name);
    if (it == models_.end()) {
      absl::StatusOr<std::vector<std::string>> names = ListModelNames(options_.root);
      if (names.ok() && std::find(names->begin(), names->end(), name) != names->end()) {
        return absl::OkStatus();  // on disk, never loaded
      }
      return absl::NotFoundError(
          absl::StrCat("model_name: no model named '", EchoInput(name), "' is known"));
    }
    ModelEntry& model = it->second;
    for (auto& [v, entry] : model.versions) {
      if (entry.info.state != VersionState::kReady && entry.info.state != VersionState::kLoading) {
        continue;
      }
      entry.info.state = VersionState::kUnloaded;
      entry.info.error = kUnloadedByRequest;
      released.push_back(std::move(entry.info.servable));
      entry.info.servable.reset();
      unloaded.push_back(v);
    }
    // Not served by choice: the registry stays Serving without it.
    model.ever_ready = false;
  }
  if (in_use != nullptr) {
    for (const Servable& servable : released) in_use->push_back(servable);
  }
  released.clear();
  for (int64_t v : unloaded) {
    if (observers_.on_unloaded) observers_.on_unloaded(name, v);
  }
  return absl::OkStatus();
}

std::vector<RepositoryEntry> VersionRegistry::Index(bool ready_only) const {
  absl::StatusOr<std::vector<std::string>> listed = ListModelNames(options_.root);
  std::set<std::string> names;
  if (listed.ok()) names.insert(listed->begin(), listed->end());
  std::map<std::string, std::map<int64_t, VersionFile>> on_disk;
  for (const std::string& name : names) on_disk[name] = ListPublishedVersions(options_.root, name);
  std::vector<RepositoryEntry> index;
  absl::MutexLock lock(&mu_);
  for (const auto& [name, model] : models_) names.insert(name);
  for (const std::string& name : names) {
    std::set<int64_t, std::greater<int64_t>> versions;
    for (const auto& [v, file] : on_disk[name]) versions.insert(v);
    auto model = models_.find(name);
    if (model != models_.end()) {
      for (const auto& [v, entry] : model->second.versions) versions.insert(v);
    }
    const bool wanted = !options_.explicit_control || wanted_.count(name) > 0;
    if (versions.empty()) {
      if (!ready_only) index.push_back({name, 0, "UNAVAILABLE", "no published version"});
      continue;
    }
    for (int64_t v : versions) {
      RepositoryEntry entry{name, v, "UNAVAILABLE", ""};
      const Entry* known = nullptr;
      if (model != models_.end()) {
        auto it = model->second.versions.find(v);
        if (it != model->second.versions.end()) known = &it->second;
      }
      if (known == nullptr) {
        entry.reason = wanted ? "not loaded: not aspired by the version policy"
                              : "not loaded (--model_control=explicit: load it by request)";
      } else if (known->info.state == VersionState::kReady) {
        entry.state = "READY";
      } else if (known->info.state == VersionState::kLoading) {
        entry.state = "LOADING";
      } else if (known->info.state == VersionState::kUnloaded) {
        // Unloaded by request, or by a rescan (its last refusal, if any, kept).
        entry.reason = known->info.error.empty() ? "unloaded" : known->info.error;
        entry.load_error = !known->info.error.empty() && known->info.error != kUnloadedByRequest;
      } else {
        entry.reason = known->info.error;
        entry.load_error = true;
      }
      if (ready_only && entry.state != "READY") continue;
      index.push_back(std::move(entry));
    }
  }
  return index;
}

void VersionRegistry::ScanModel(const std::string& name, bool listed, ScanReport& report) {
  const std::map<int64_t, VersionFile> on_disk =
      listed ? ListPublishedVersions(options_.root, name) : std::map<int64_t, VersionFile>{};
  if (listed && on_disk.empty()) {
    absl::MutexLock lock(&mu_);
    if (models_.count(name) == 0) return;  // an empty directory is not a model (yet)
  }
  std::vector<int64_t> available;
  for (const auto& [version, file] : on_disk) available.push_back(version);
  const std::vector<int64_t> aspired = options_.policy.Select(available);
  const std::vector<int64_t> to_load = PlanModelLoads(name, listed, aspired, on_disk);
  LoadVersions(name, to_load, on_disk, report);
  UnloadVersions(name, aspired, on_disk, report);
}

std::vector<int64_t> VersionRegistry::PlanModelLoads(
    const std::string& name, bool listed, const std::vector<int64_t>& aspired,
    const std::map<int64_t, VersionFile>& on_disk) {
  absl::MutexLock lock(&mu_);
  ModelEntry& model = models_[name];
  if (listed) model.labels = ReadLabels(options_.root, name);
  const std::vector<int64_t> to_load = PlanLoads(Views(model), aspired, on_disk);
  for (int64_t v : to_load) {
    Entry& entry = model.versions[v];
    entry.info.version = v;
    entry.stamp = on_disk.at(v).stamp;
    // A ready version whose file changed keeps serving while the file loads.
    if (entry.info.state == VersionState::kReady) continue;
    entry.info.state = VersionState::kLoading;
    entry.info.error.clear();
  }
  return to_load;
}

void VersionRegistry::LoadVersions(const std::string& name, const std::vector<int64_t>& versions,
                                   const std::map<int64_t, VersionFile>& on_disk,
                                   ScanReport& report) {
  for (int64_t v : versions) {
    absl::StatusOr<Servable> loaded = loader_(on_disk.at(v).bundle_path);
    if (loaded.ok() && *loaded == nullptr) {
      loaded = absl::InternalError(
          absl::StrCat("loader returned no model for '", on_disk.at(v).bundle_path, "'"));
    }
    Servable replaced;  // the bits a reload replaced, released outside the lock
    {
      absl::MutexLock lock(&mu_);
      ModelEntry& model = models_[name];
      Entry& entry = model.versions[v];
      if (loaded.ok()) {
        entry.info.state = VersionState::kReady;
        entry.info.error.clear();
        replaced = std::exchange(entry.info.servable, *loaded);
        model.ever_ready = true;
        ++report.loaded;
      } else if (entry.info.state == VersionState::kReady) {
        entry.info.error = absl::StrCat(
            "bundle file changed in place and was refused (still serving the bits "
            "loaded before): ",
            loaded.status().message());
        ++report.failed;
      } else {
        entry.info.state = VersionState::kFailed;
        entry.info.error = std::string(loaded.status().message());
        ++report.failed;
      }
      // A refusal for room (--max_model_bytes) is no fault of the file: the
      // next scan or load tries it again, as if the file were new.
      if (absl::IsResourceExhausted(loaded.status())) entry.stamp = 0;
    }
    replaced.reset();
    if (loaded.ok()) {
      if (observers_.on_ready) observers_.on_ready(name, v, *loaded);
    } else if (observers_.on_failed) {
      observers_.on_failed(name, v, loaded.status());
    }
  }
}

void VersionRegistry::UnloadVersions(const std::string& name, const std::vector<int64_t>& aspired,
                                     const std::map<int64_t, VersionFile>& on_disk,
                                     ScanReport& report) {
  std::vector<int64_t> unloaded;
  std::vector<Servable> released;  // destroyed outside the lock
  {
    absl::MutexLock lock(&mu_);
    ModelEntry& model = models_[name];
    const absl::Time now = options_.clock();
    for (auto& [v, entry] : model.versions) {
      if (entry.info.state != VersionState::kReady) continue;
      if (on_disk.count(v) > 0) {
        entry.missing_since.reset();
      } else if (!entry.missing_since) {
        entry.missing_since = now;
      }
    }
    unloaded = PlanUnloads(Views(model), aspired, on_disk, now, options_.removal_grace);
    for (int64_t v : unloaded) {
      Entry& entry = model.versions[v];
      entry.info.state = VersionState::kUnloaded;
      released.push_back(std::move(entry.info.servable));
      entry.info.servable.reset();
      ++report.unloaded;
    }
    PruneRetired(model, aspired);
  }
  released.clear();
  for (int64_t v : unloaded) {
    if (observers_.on_unloaded) observers_.on_unloaded(name, v);
  }
}

absl::StatusOr<VersionRegistry::Handle> VersionRegistry::Lookup(
    const std::string& name, int64_t version, const std::string& label,
    const LookupFieldNames& fields) const {
  if (observers_.on_lookup) observers_.on_lookup(name);
  absl::MutexLock lock(&mu_);
  auto model_it = models_.find(name);
  if (model_it == models_.end()) {
    std::vector<std::string> known;
    for (const auto& [n, m] : models_) known.push_back(n);
    return absl::NotFoundError(absl::StrCat(fields.name, ": no model named '", EchoInput(name),
                                            "'; expected one of [", absl::StrJoin(known, ", "),
                                            "]"));
  }
  const ModelEntry& model = model_it->second;
  std::vector<int64_t> ready;
  for (const auto& [v, entry] : model.versions) {
    if (entry.info.state == VersionState::kReady) ready.push_back(v);
  }
  int64_t wanted = version;
  if (!label.empty() && label != "latest") {
    auto label_it = model.labels.find(label);
    if (label_it == model.labels.end()) {
      std::vector<std::string> labels;
      for (const auto& [l, v] : model.labels) labels.push_back(l);
      const std::string message =
          absl::StrCat(fields.label, ": model '", name, "' has no label '", EchoInput(label),
                       "'; expected one of [", absl::StrJoin(labels, ", "), "]");
      // With a version as well, the label is a claim about that version that
      // cannot be checked: a bad argument, not a missing model.
      return version == 0 ? absl::NotFoundError(message) : absl::InvalidArgumentError(message);
    }
    if (version != 0 && version != label_it->second) {
      return absl::InvalidArgumentError(
          absl::StrCat(fields.label, ": label '", EchoInput(label), "' of model '", name,
                       "' names version ", label_it->second, ", but ", fields.version, " asks for ",
                       version, "; set one of them, or both in agreement"));
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
    // The load error names paths and may quote file bytes: it goes to the
    // server log and ModelAdmin.GetModelStatus only, never to a data-path reply.
    std::string state =
        it == model.versions.end() ? "unknown" : VersionStateName(it->second.info.state);
    if (it != model.versions.end() && it->second.info.state == VersionState::kFailed) {
      absl::StrAppend(&state, " to load; the reason is in the server log and ModelAdmin");
    }
    return absl::NotFoundError(absl::StrCat(
        fields.version, ": model '", name, "' version ", wanted, " is not ready (", state,
        "); expected one of the ready versions [", absl::StrJoin(ready, ", "), "]"));
  }
  return Handle{name, wanted, it->second.info.servable};
}

std::map<std::string, std::vector<VersionRegistry::VersionInfo>> VersionRegistry::Snapshot() const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, std::vector<VersionInfo>> out;
  for (const auto& [name, model] : models_) {
    std::vector<VersionInfo>& versions = out[name];
    for (const auto& [v, entry] : model.versions) versions.push_back(entry.info);
  }
  return out;
}

std::map<std::string, int64_t> VersionRegistry::Labels(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = models_.find(name);
  return it == models_.end() ? std::map<std::string, int64_t>{} : it->second.labels;
}

namespace {

template <typename Versions>
bool HasReadyVersion(const Versions& versions) {
  for (const auto& [v, entry] : versions) {
    if (entry.info.state == VersionState::kReady) return true;
  }
  return false;
}

}  // namespace

bool VersionRegistry::Serving() const {
  absl::MutexLock lock(&mu_);
  bool any_ready = false;
  for (const auto& [name, model] : models_) {
    const bool ready = HasReadyVersion(model.versions);
    if (model.ever_ready && !ready) return false;
    any_ready = any_ready || ready;
  }
  return any_ready;
}

bool VersionRegistry::ModelReady(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = models_.find(name);
  return it != models_.end() && HasReadyVersion(it->second.versions);
}

}  // namespace invariant::server
