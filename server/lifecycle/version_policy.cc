#include "server/lifecycle/version_policy.h"

#include <algorithm>
#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace invariant::server {

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

}  // namespace invariant::server
