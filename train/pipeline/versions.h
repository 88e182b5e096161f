// versions.h: the model repository layout MODELS/<name>/<version>/ and how a
// new version is written without ever exposing a half-written one.
//
// A version directory is created as MODELS/<name>/.tmp-<version>-<pid> and
// renamed into place only when complete, so the server's poller (which only
// looks at all-digit directory names) and an interrupted run (Ctrl-C) never
// see a partial version. An existing version is never overwritten.
#ifndef INVARIANT_TRAIN_PIPELINE_VERSIONS_H_
#define INVARIANT_TRAIN_PIPELINE_VERSIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace invariant {

// All-digit subdirectory names of MODELS/<name>, ascending. A missing
// directory yields an empty list.
absl::StatusOr<std::vector<int64_t>> ListVersions(const std::string& model_dir);

// One above the highest existing version (1 when there is none).
absl::StatusOr<int64_t> NextVersion(const std::string& model_dir);

// A version being written. Files go into path(); Commit() renames it to
// MODELS/<name>/<version>. Destroying an uncommitted StagedVersion removes it.
class StagedVersion {
 public:
  // Fails with ALREADY_EXISTS when the version exists, and creates parents.
  static absl::StatusOr<StagedVersion> Create(const std::string& model_dir, int64_t version);
  StagedVersion(StagedVersion&& other) noexcept;
  StagedVersion& operator=(StagedVersion&&) = delete;
  ~StagedVersion();

  const std::string& path() const { return tmp_path_; }
  const std::string& final_path() const { return final_path_; }
  absl::Status Commit();

 private:
  StagedVersion(std::string tmp, std::string final_path)
      : tmp_path_(std::move(tmp)), final_path_(std::move(final_path)) {}
  std::string tmp_path_;
  std::string final_path_;
  bool committed_ = false;
};

// Removes every staged directory registered by a live StagedVersion; safe to
// call from a signal handler's deferred path (called on SIGINT by main).
void RemoveStagedVersions();

}  // namespace invariant

#endif  // INVARIANT_TRAIN_PIPELINE_VERSIONS_H_
