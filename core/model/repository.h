// repository.h: the on-disk model repository, THE one definition of its layout
// for the training job (writer) and the server (reader).
//
// Layout: ROOT/<name>/<version>/model.bundle, where <name> does not start
// with '.' (hidden folders are never models) and <version> is a version
// directory name: 1 to 18 ASCII digits, the first not 0 (the number's one
// spelling: no sign, no spaces, no leading zeros, so "01" is not version 1;
// ParseVersion is the one rule). Optional ROOT/<name>/labels.txt
// holds lines "<label> <version>" (blank lines and '#' comments ignored;
// malformed lines skipped).
//
// Writers never expose a half-written version: a version is staged as
// ROOT/<name>/.tmp-<version>-<pid> (not a version name, so readers skip it)
// and published by renaming the complete directory into place; an existing
// version is never overwritten. A staging folder whose writer was killed
// (its pid gone from this machine, unchanged for an hour) is removed by the
// next writer of the model. Readers list a version only once its bundle
// file exists, and the server loads a bundle only when its real path is
// inside the real models root (ResolveInsideRoot).
#ifndef INVARIANT_CORE_MODEL_REPOSITORY_H_
#define INVARIANT_CORE_MODEL_REPOSITORY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace invariant {

// The file name of the bundle inside a version directory.
inline constexpr char kBundleFileName[] = "model.bundle";
// The file of version labels inside a model directory.
inline constexpr char kLabelsFileName[] = "labels.txt";

// The highest version: 18 digits.
inline constexpr int64_t kMaxVersion = 999999999999999999;

// The version a directory name denotes, or nullopt when it is not a version
// name (see the layout above).
std::optional<int64_t> ParseVersion(absl::string_view dir_name);

// ROOT/<name> and ROOT/<name>/<version>/model.bundle.
std::string ModelDir(const std::string& root, const std::string& name);
std::string BundlePath(const std::string& root, const std::string& name, int64_t version);

// Model names (sub-directories of `root`), sorted. NOT_FOUND when `root`
// cannot be listed, UNAVAILABLE when listing fails midway.
absl::StatusOr<std::vector<std::string>> ListModelNames(const std::string& root);

// Version directories of `model_dir` (bundle present or not), ascending.
// A missing directory yields an empty list; FAILED_PRECONDITION when it is
// not a directory.
absl::StatusOr<std::vector<int64_t>> ListVersionDirs(const std::string& model_dir);

// One above the highest version directory (1 when there is none);
// OUT_OF_RANGE when the highest is kMaxVersion.
absl::StatusOr<int64_t> NextVersion(const std::string& model_dir);

// One published version's bundle file, with a stamp that changes when the file does.
struct VersionFile {
  std::string bundle_path;
  int64_t stamp = 0;  // FileStamp(bundle_path)
};

// A hash of the file's device, inode, size, modification and change times:
// it moves when the file is replaced (rename: new inode) or rewritten in
// place, even by `cp -p` or `touch -r`, which preserve size and mtime but
// not ctime. 0 when the file cannot be stat'ed.
int64_t FileStamp(const std::string& path);

// The versions of model `name` whose bundle file exists.
std::map<int64_t, VersionFile> ListPublishedVersions(const std::string& root,
                                                     const std::string& name);

// The real path of `path` (every symlink resolved) when it lies inside the
// real path of `root`. A version directory or bundle file that is a symlink
// resolving outside the models root is refused with PERMISSION_DENIED naming
// both real paths (for the server log and ModelAdmin, never a data-path
// reply); NOT_FOUND when either cannot be resolved. Symlinks that stay inside
// the root are allowed, and so is a root that is itself a symlink.
absl::StatusOr<std::string> ResolveInsideRoot(const std::string& root, const std::string& path);

// Labels from ROOT/<name>/labels.txt; empty when the file is absent.
std::map<std::string, int64_t> ReadLabels(const std::string& root, const std::string& name);

// A version being written. Files go into path(); Publish() renames it to
// <model_dir>/<version>. Destroying an unpublished StagedVersion removes it.
class StagedVersion {
 public:
  // Fails with ALREADY_EXISTS when the version exists, and creates parents.
  static absl::StatusOr<StagedVersion> Create(const std::string& model_dir, int64_t version);
  StagedVersion(StagedVersion&& other) noexcept;
  StagedVersion& operator=(StagedVersion&&) = delete;
  ~StagedVersion();

  const std::string& path() const { return tmp_path_; }
  const std::string& final_path() const { return final_path_; }
  // Atomic: the version appears complete or not at all. ALREADY_EXISTS when
  // another writer published the same version meanwhile.
  absl::Status Publish();

 private:
  StagedVersion(std::string tmp, std::string final_path)
      : tmp_path_(std::move(tmp)), final_path_(std::move(final_path)) {}
  std::string tmp_path_;
  std::string final_path_;
  bool published_ = false;
};

// Removes every staged directory of a live StagedVersion (the training job
// calls it when interrupted).
void RemoveStagedVersions();

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_REPOSITORY_H_
