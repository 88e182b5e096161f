#include "core/model/repository.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace invariant {
namespace fs = std::filesystem;
namespace {

std::mutex& StagedMutex() {
  static std::mutex m;
  return m;
}
std::set<std::string>& Staged() {
  static auto* s = new std::set<std::string>();
  return *s;
}

// The staging folders of `model_dir` (.tmp-<version>-<pid>) left by a
// writer that was killed: its process no longer exists on this machine and
// the folder has not changed for an hour (a writer in another container on
// a shared volume has a pid of its own namespace; the hour keeps its live
// staging). Removed; errors are ignored (the next writer tries again).
void RemoveAbandonedStaging(const std::string& model_dir) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(model_dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
    int64_t version = 0, pid = 0;
    if (parts.size() != 3 || parts[0] != ".tmp" || !absl::SimpleAtoi(parts[1], &version) ||
        !absl::SimpleAtoi(parts[2], &pid) || pid <= 0 || pid > INT32_MAX) {
      continue;
    }
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours
    std::error_code time_ec;
    const auto changed = fs::last_write_time(it->path(), time_ec);
    if (time_ec || now - changed < std::chrono::hours(1)) continue;
    std::error_code remove_ec;
    fs::remove_all(it->path(), remove_ec);
  }
}

}  // namespace

std::optional<int64_t> ParseVersion(absl::string_view dir_name) {
  if (dir_name.empty() || dir_name.size() > 18 || dir_name[0] == '0' ||
      !std::all_of(dir_name.begin(), dir_name.end(), absl::ascii_isdigit)) {
    return std::nullopt;
  }
  int64_t version = 0;
  if (!absl::SimpleAtoi(dir_name, &version) || version < 1) return std::nullopt;
  return version;
}

std::string ModelDir(const std::string& root, const std::string& name) {
  return (fs::path(root) / name).string();
}

std::string BundlePath(const std::string& root, const std::string& name, int64_t version) {
  return (fs::path(root) / name / std::to_string(version) / kBundleFileName).string();
}

absl::StatusOr<std::vector<std::string>> ListModelNames(const std::string& root) {
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat("models root '", root, "': cannot list: ", ec.message()));
  }
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code type_ec;
    std::string name = it->path().filename().string();
    if (name[0] == '.') continue;  // hidden: staging, editors' and tools' own folders
    if (it->is_directory(type_ec)) names.push_back(std::move(name));
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("models root '", root, "': listing failed: ", ec.message()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::vector<int64_t>> ListVersionDirs(const std::string& model_dir) {
  std::vector<int64_t> out;
  std::error_code ec;
  if (!fs::exists(model_dir, ec)) return out;
  if (!fs::is_directory(model_dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(model_dir, ": not a directory"));
  }
  for (const auto& e : fs::directory_iterator(model_dir, ec)) {
    std::optional<int64_t> version = ParseVersion(e.path().filename().string());
    std::error_code type_ec;
    if (version.has_value() && e.is_directory(type_ec)) out.push_back(*version);
  }
  if (ec) return absl::UnavailableError(absl::StrCat(model_dir, ": ", ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<int64_t> NextVersion(const std::string& model_dir) {
  absl::StatusOr<std::vector<int64_t>> versions = ListVersionDirs(model_dir);
  if (!versions.ok()) return versions.status();
  if (versions->empty()) return 1;
  if (versions->back() >= kMaxVersion) {
    return absl::OutOfRangeError(absl::StrCat(
        model_dir, ": the highest version is ", versions->back(),
        "; no version can follow it (a version has at most 18 digits): pass --version"));
  }
  return versions->back() + 1;
}

int64_t FileStamp(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  // Every field that a replacement can change: a rename gives a new inode, a
  // rewrite in place a new size or change time (cp -p keeps size and mtime,
  // but the kernel sets ctime on every write and no caller can set it back).
  const uint64_t fields[] = {
      static_cast<uint64_t>(st.st_dev),
      static_cast<uint64_t>(st.st_ino),
      static_cast<uint64_t>(st.st_size),
      static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
          static_cast<uint64_t>(st.st_mtim.tv_nsec),
      static_cast<uint64_t>(st.st_ctim.tv_sec) * 1000000000u +
          static_cast<uint64_t>(st.st_ctim.tv_nsec),
  };
  uint64_t hash = 14695981039346656037u;  // FNV-1a over the fields' bytes
  for (uint64_t field : fields) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (field >> (8 * byte)) & 0xffu;
      hash *= 1099511628211u;
    }
  }
  return static_cast<int64_t>(hash);
}

std::map<int64_t, VersionFile> ListPublishedVersions(const std::string& root,
                                                     const std::string& name) {
  std::map<int64_t, VersionFile> versions;
  std::error_code ec;
  fs::directory_iterator it(fs::path(root) / name, ec);
  if (ec) return versions;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::optional<int64_t> version = ParseVersion(it->path().filename().string());
    if (!version.has_value()) continue;
    const fs::path bundle = it->path() / kBundleFileName;
    std::error_code stat_ec;
    if (!fs::is_regular_file(bundle, stat_ec)) continue;
    VersionFile file;
    file.bundle_path = bundle.string();
    file.stamp = FileStamp(file.bundle_path);
    versions[*version] = std::move(file);
  }
  return versions;
}

absl::StatusOr<std::string> ResolveInsideRoot(const std::string& root, const std::string& path) {
  std::error_code ec;
  const fs::path real_root = fs::canonical(root, ec);
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat("models root '", root, "': cannot resolve: ", ec.message()));
  }
  const fs::path real = fs::canonical(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("'", path, "': cannot resolve: ", ec.message()));
  const fs::path relative = real.lexically_relative(real_root);
  if (relative.empty() || relative == "." || *relative.begin() == "..") {
    return absl::PermissionDeniedError(
        absl::StrCat("'", path, "' resolves to '", real.string(), "', outside the models root '",
                     real_root.string(), "': symlinks out of the models root are refused"));
  }
  return real.string();
}

std::map<std::string, int64_t> ReadLabels(const std::string& root, const std::string& name) {
  std::map<std::string, int64_t> labels;
  std::ifstream in(fs::path(root) / name / kLabelsFileName);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string label;
    int64_t version = 0;
    if (!(fields >> label) || label[0] == '#') continue;
    if (fields >> version && version > 0) labels[label] = version;
  }
  return labels;
}

absl::StatusOr<StagedVersion> StagedVersion::Create(const std::string& model_dir, int64_t version) {
  if (version < 1 || version > kMaxVersion) {
    return absl::InvalidArgumentError(absl::StrCat("--version must be 1 to ", kMaxVersion,
                                                   " (a version directory name), got ", version));
  }
  const std::string final_path = (fs::path(model_dir) / std::to_string(version)).string();
  std::error_code ec;
  if (fs::exists(final_path, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat(final_path, ": version ", version, " exists and is never overwritten"));
  }
  fs::create_directories(model_dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(model_dir, ": ", ec.message()));
  RemoveAbandonedStaging(model_dir);
  const std::string tmp =
      (fs::path(model_dir) / absl::StrCat(".tmp-", version, "-", static_cast<int64_t>(getpid())))
          .string();
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(tmp, ": ", ec.message()));
  {
    std::lock_guard<std::mutex> lock(StagedMutex());
    Staged().insert(tmp);
  }
  return StagedVersion(tmp, final_path);
}

StagedVersion::StagedVersion(StagedVersion&& o) noexcept
    : tmp_path_(std::move(o.tmp_path_)),
      final_path_(std::move(o.final_path_)),
      published_(o.published_) {
  o.published_ = true;  // the moved-from object owns nothing
}

StagedVersion::~StagedVersion() {
  if (published_ || tmp_path_.empty()) return;
  std::error_code ec;
  fs::remove_all(tmp_path_, ec);
  std::lock_guard<std::mutex> lock(StagedMutex());
  Staged().erase(tmp_path_);
}

absl::Status StagedVersion::Publish() {
  std::error_code ec;
  // rename(2) of a directory fails if the target exists and is non-empty, so a
  // concurrent writer of the same version cannot be overwritten.
  if (fs::exists(final_path_, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(final_path_, ": appeared while training"));
  }
  fs::rename(tmp_path_, final_path_, ec);
  if (ec) return absl::InternalError(absl::StrCat("rename to ", final_path_, ": ", ec.message()));
  published_ = true;
  std::lock_guard<std::mutex> lock(StagedMutex());
  Staged().erase(tmp_path_);
  return absl::OkStatus();
}

void RemoveStagedVersions() {
  std::lock_guard<std::mutex> lock(StagedMutex());
  std::error_code ec;
  for (const auto& p : Staged()) fs::remove_all(p, ec);
  Staged().clear();
}

}  // namespace invariant
