// The registry's planning rules as pure functions: which versions load, and
// which unload, for given states and files on disk.
#include "server/lifecycle/registry_plan.h"

#include "gtest/gtest.h"

namespace invariant::server {
namespace {

std::map<int64_t, VersionFile> OnDisk(std::map<int64_t, int64_t> stamps) {
  std::map<int64_t, VersionFile> files;
  for (const auto& [v, stamp] : stamps) files[v] = VersionFile{"v" + std::to_string(v), stamp};
  return files;
}

TEST(RegistryPlanTest, LoadsNewAndUnloadedVersionsAndRetriesFailuresOnlyForANewFile) {
  VersionViews seen;
  seen[4] = VersionView{VersionState::kReady, 1, {}};
  seen[3] = VersionView{VersionState::kFailed, 7, {}};
  seen[2] = VersionView{VersionState::kUnloaded, 1, {}};
  const std::vector<int64_t> aspired = {5, 4, 3, 2};
  EXPECT_EQ(PlanLoads(seen, aspired, OnDisk({{5, 1}, {4, 1}, {3, 7}, {2, 1}})),
            (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(PlanLoads(seen, aspired, OnDisk({{5, 1}, {4, 1}, {3, 8}, {2, 1}})),
            (std::vector<int64_t>{5, 3, 2}));
  // A ready version whose file changed in place is loaded again.
  EXPECT_EQ(PlanLoads(seen, aspired, OnDisk({{5, 1}, {4, 2}, {3, 7}, {2, 1}})),
            (std::vector<int64_t>{5, 4, 2}));
}

TEST(RegistryPlanTest, UnaspiredVersionUnloadsOnlyOnceAnAspiredOneIsReady) {
  VersionViews seen;
  seen[1] = VersionView{VersionState::kReady, 1, {}};
  seen[2] = VersionView{VersionState::kFailed, 1, {}};
  const absl::Time now = absl::FromUnixSeconds(100);
  const auto disk = OnDisk({{1, 1}, {2, 1}});
  EXPECT_TRUE(PlanUnloads(seen, {2}, disk, now, absl::Seconds(30)).empty());
  seen[2].state = VersionState::kReady;
  EXPECT_EQ(PlanUnloads(seen, {2}, disk, now, absl::Seconds(30)), std::vector<int64_t>{1});
}

TEST(RegistryPlanTest, AFailedAspiredVersionKeepsTheNewestUnaspiredOneServingInItsPlace) {
  // latest:2 with versions 1 and 2 serving; version 3 arrives corrupt.
  VersionViews seen;
  seen[3] = VersionView{VersionState::kFailed, 1, {}};
  seen[2] = VersionView{VersionState::kReady, 1, {}};
  seen[1] = VersionView{VersionState::kReady, 1, {}};
  seen[0] = VersionView{VersionState::kReady, 1, {}};  // one more: not needed as a stand-in
  const absl::Time now = absl::FromUnixSeconds(100);
  const auto disk = OnDisk({{0, 1}, {1, 1}, {2, 1}, {3, 1}});
  EXPECT_EQ(PlanUnloads(seen, {3, 2}, disk, now, absl::Seconds(30)), std::vector<int64_t>{0});
  // Version 3 fixed and loaded: 1 is no longer needed.
  seen.erase(0);
  seen[3].state = VersionState::kReady;
  EXPECT_EQ(PlanUnloads(seen, {3, 2}, disk, now, absl::Seconds(30)), std::vector<int64_t>{1});
}

TEST(RegistryPlanTest, MissingVersionUnloadsAfterTheGraceAndNeverAsTheLastOnDisk) {
  const absl::Time t0 = absl::FromUnixSeconds(100);
  VersionViews seen;
  seen[2] = VersionView{VersionState::kReady, 1, t0};  // directory gone at t0
  seen[1] = VersionView{VersionState::kReady, 1, {}};
  const auto disk = OnDisk({{1, 1}});
  EXPECT_TRUE(PlanUnloads(seen, {1}, disk, t0 + absl::Seconds(29), absl::Seconds(30)).empty());
  EXPECT_EQ(PlanUnloads(seen, {1}, disk, t0 + absl::Seconds(30), absl::Seconds(30)),
            std::vector<int64_t>{2});
  // Nothing left on disk: the last good versions keep serving.
  seen[1].missing_since = t0;
  EXPECT_TRUE(PlanUnloads(seen, {}, OnDisk({}), t0 + absl::Hours(1), absl::Seconds(30)).empty());
}

}  // namespace
}  // namespace invariant::server
