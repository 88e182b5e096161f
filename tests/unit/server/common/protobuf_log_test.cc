#include "server/common/protobuf_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace invariant::server {
namespace {

TEST(LogThrottleTest, WritesOccurrencesAtPowersOfTwo) {
  LogThrottle throttle;
  std::vector<int64_t> written;
  for (int i = 0; i < 3000; ++i) {
    if (const int64_t n = throttle.Admit("String field 'x' contains invalid UTF-8"); n > 0) {
      written.push_back(n);
    }
  }
  EXPECT_EQ(written, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}));
}

TEST(LogThrottleTest, DistinctMessagesAreCountedApart) {
  LogThrottle throttle;
  EXPECT_EQ(throttle.Admit("a"), 1);
  EXPECT_EQ(throttle.Admit("b"), 1);
  EXPECT_EQ(throttle.Admit("a"), 2);
  EXPECT_EQ(throttle.Admit("a"), 0);
  EXPECT_EQ(throttle.Admit("b"), 2);
}

TEST(LogThrottleTest, KeysAreBoundedInNumberAndLength) {
  LogThrottle throttle;
  for (size_t i = 0; i < LogThrottle::kMaxKeys; ++i) {
    EXPECT_EQ(throttle.Admit("key " + std::to_string(i)), 1);
  }
  // Every further key shares one counter: 1, 2, 0, 4, ...
  EXPECT_EQ(throttle.Admit("new 1"), 1);
  EXPECT_EQ(throttle.Admit("new 2"), 2);
  EXPECT_EQ(throttle.Admit("new 3"), 0);
  // Keys differing only after kMaxKeyBytes are one key.
  LogThrottle fresh;
  const std::string prefix(LogThrottle::kMaxKeyBytes, 'p');
  EXPECT_EQ(fresh.Admit(prefix + "1"), 1);
  EXPECT_EQ(fresh.Admit(prefix + "2"), 2);
}

}  // namespace
}  // namespace invariant::server
