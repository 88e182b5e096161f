#include "server/model_directory.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace invariant::server {

namespace fs = std::filesystem;

std::vector<int64_t> VersionPolicy::Select(std::vector<int64_t> available) const {
  std::sort(available.begin(), available.end(), std::greater<int64_t>());
  if (kind == Kind::kLatest && static_cast<int64_t>(available.size()) > count) {
    available.resize(static_cast<size_t>(count));
  }
  return available;
}

absl::StatusOr<VersionPolicy> ParseVersionPolicy(absl::string_view text) {
  VersionPolicy policy;
  if (text == "all") {
    policy.kind = VersionPolicy::Kind::kAll;
    return policy;
  }
  if (text == "latest") return policy;
  absl::string_view rest = text;
  int count = 0;
  if (absl::ConsumePrefix(&rest, "latest:") && absl::SimpleAtoi(rest, &count) && count >= 1) {
    policy.count = count;
    return policy;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "version_policy: expected 'latest', 'latest:N' with N >= 1, or 'all', received '", text,
      "'"));
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
    if (it->is_directory(type_ec)) names.push_back(it->path().filename().string());
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("models root '", root, "': listing failed: ", ec.message()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::map<int64_t, VersionFile> ListVersions(const std::string& root, const std::string& name,
                                            const std::string& bundle_file_name) {
  std::map<int64_t, VersionFile> versions;
  std::error_code ec;
  const fs::path model_dir = fs::path(root) / name;
  fs::directory_iterator it(model_dir, ec);
  if (ec) return versions;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    int64_t version = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &version) || version <= 0) continue;
    const fs::path bundle = it->path() / bundle_file_name;
    std::error_code stat_ec;
    if (!fs::is_regular_file(bundle, stat_ec)) continue;
    const auto size = fs::file_size(bundle, stat_ec);
    const auto mtime = fs::last_write_time(bundle, stat_ec);
    VersionFile file;
    file.bundle_path = bundle.string();
    file.stamp =
        static_cast<int64_t>(mtime.time_since_epoch().count()) ^ static_cast<int64_t>(size);
    versions[version] = std::move(file);
  }
  return versions;
}

std::map<std::string, int64_t> ReadLabels(const std::string& root, const std::string& name) {
  std::map<std::string, int64_t> labels;
  std::ifstream in(fs::path(root) / name / "labels.txt");
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

}  // namespace invariant::server
