// model_directory.h: what is on disk under the models root, and the version policy.
//
// Layout (ARCHITECTURE decision 1): ROOT/<name>/<version>/model.bundle, where
// <version> is a positive decimal integer. Optional ROOT/<name>/labels.txt
// holds lines "<label> <version>" (blank lines and '#' comments ignored).
// A version directory without its bundle file yet is not listed (a writer may
// still be producing it). These functions only read the file system.
#ifndef INVARIANT_SERVER_MODEL_DIRECTORY_H_
#define INVARIANT_SERVER_MODEL_DIRECTORY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace invariant::server {

// Which versions of a model the server keeps loaded.
struct VersionPolicy {
  enum class Kind { kLatest, kAll };
  Kind kind = Kind::kLatest;
  int count = 1;  // kLatest: the newest `count` versions

  // The versions to serve among `available` (any order), newest first.
  std::vector<int64_t> Select(std::vector<int64_t> available) const;
};

// Parses "latest", "latest:N" (N ≥ 1) or "all"; the error names the value.
absl::StatusOr<VersionPolicy> ParseVersionPolicy(absl::string_view text);

// One version's bundle file on disk, with a stamp that changes when the file does.
struct VersionFile {
  std::string bundle_path;
  int64_t stamp = 0;  // modification time (ns) xor size
};

// Model names (sub-directories of `root`), sorted. Error when `root` cannot be listed.
absl::StatusOr<std::vector<std::string>> ListModelNames(const std::string& root);

// The versions of model `name` whose bundle file named `bundle_file_name` exists.
std::map<int64_t, VersionFile> ListVersions(const std::string& root, const std::string& name,
                                            const std::string& bundle_file_name);

// Labels from ROOT/<name>/labels.txt; empty when the file is absent.
// Malformed lines are skipped.
std::map<std::string, int64_t> ReadLabels(const std::string& root, const std::string& name);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_MODEL_DIRECTORY_H_
