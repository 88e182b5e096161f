#include "train/pipeline/versions.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"

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

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ListVersions(const std::string& model_dir) {
  std::vector<int64_t> out;
  std::error_code ec;
  if (!fs::exists(model_dir, ec)) return out;
  if (!fs::is_directory(model_dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(model_dir, ": not a directory"));
  }
  for (const auto& e : fs::directory_iterator(model_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && AllDigits(name)) out.push_back(std::stoll(name));
  }
  if (ec) return absl::UnavailableError(absl::StrCat(model_dir, ": ", ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<int64_t> NextVersion(const std::string& model_dir) {
  auto versions = ListVersions(model_dir);
  if (!versions.ok()) return versions.status();
  return versions->empty() ? 1 : versions->back() + 1;
}

absl::StatusOr<StagedVersion> StagedVersion::Create(const std::string& model_dir, int64_t version) {
  if (version < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--version must be >= 1, got ", version));
  }
  const std::string final_path = (fs::path(model_dir) / std::to_string(version)).string();
  std::error_code ec;
  if (fs::exists(final_path, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat(final_path, ": version ", version, " exists and is never overwritten"));
  }
  fs::create_directories(model_dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(model_dir, ": ", ec.message()));
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
      committed_(o.committed_) {
  o.committed_ = true;  // the moved-from object owns nothing
}

StagedVersion::~StagedVersion() {
  if (committed_ || tmp_path_.empty()) return;
  std::error_code ec;
  fs::remove_all(tmp_path_, ec);
  std::lock_guard<std::mutex> lock(StagedMutex());
  Staged().erase(tmp_path_);
}

absl::Status StagedVersion::Commit() {
  std::error_code ec;
  // rename(2) of a directory fails if the target exists and is non-empty, so a
  // concurrent writer of the same version cannot be overwritten.
  if (fs::exists(final_path_, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(final_path_, ": appeared while training"));
  }
  fs::rename(tmp_path_, final_path_, ec);
  if (ec) return absl::InternalError(absl::StrCat("rename to ", final_path_, ": ", ec.message()));
  committed_ = true;
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
