#include "server/admission/model_memory_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace invariant::server {
namespace {

using ::testing::HasSubstr;

TEST(ModelMemoryBudgetTest, GrantsWhileTheVersionsFitAndGivesBackWhenOneGoes) {
  std::vector<int64_t> changes;
  ModelMemoryBudget budget(1000, [&changes](int64_t held) { changes.push_back(held); });
  absl::StatusOr<std::shared_ptr<const void>> a = budget.Reserve("a", 600, "bundle 600");
  ASSERT_TRUE(a.ok());
  const absl::StatusOr<std::shared_ptr<const void>> b =
      budget.Reserve("b/1/model.bundle", 500, "bundle 400, packed 100");
  ASSERT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(b.status().message(),
              HasSubstr("max_model_bytes: b/1/model.bundle states 500 bytes (bundle 400, packed "
                        "100) and the loaded versions hold 600 of max_model_bytes=1000"));
  std::shared_ptr<const void> copy = *a;
  a->reset();
  EXPECT_EQ(budget.held(), 600);  // a copy still holds it (a call in flight)
  copy.reset();
  EXPECT_EQ(budget.held(), 0);
  EXPECT_TRUE(budget.Reserve("b", 500, "").ok());
  EXPECT_THAT(changes, ::testing::ElementsAre(600, 0, 500, 0));
}

TEST(ModelMemoryBudgetTest, AVersionAloneOverTheLimitSaysSo) {
  ModelMemoryBudget budget(100);
  const auto refused = budget.Reserve("huge", 101, "bundle 101");
  EXPECT_THAT(refused.status().message(), HasSubstr("the version alone is over the limit"));
}

TEST(ModelMemoryBudgetTest, NoLimitGrantsAndCounts) {
  ModelMemoryBudget budget(0);
  const auto a = budget.Reserve("a", int64_t{1} << 40, "");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(budget.held(), int64_t{1} << 40);
}

}  // namespace
}  // namespace invariant::server
