// version_policy.h: which versions of a model the server keeps loaded.
//
// The versions on disk come from the model repository (core/model/repository.h);
// the policy picks among them: the newest one ("latest"), the newest N
// ("latest:N") or every one ("all").
#ifndef INVARIANT_SERVER_LIFECYCLE_VERSION_POLICY_H_
#define INVARIANT_SERVER_LIFECYCLE_VERSION_POLICY_H_

#include <cstdint>
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

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_LIFECYCLE_VERSION_POLICY_H_
