// The one name table of status codes (Abseil's), used by the server's metrics
// labels and the tools' error messages, for gRPC and Abseil codes alike.
#include "core/base/status_code_name.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/status/status.h"

namespace invariant {
namespace {

TEST(StatusCodeNameTest, NamesEveryCanonicalCode) {
  // grpc::StatusCode's numbers (grpcpp/support/status_code_enum.h).
  EXPECT_EQ(StatusCodeName(0), "OK");
  EXPECT_EQ(StatusCodeName(3), "INVALID_ARGUMENT");
  EXPECT_EQ(StatusCodeName(5), "NOT_FOUND");
  EXPECT_EQ(StatusCodeName(16), "UNAUTHENTICATED");
  std::set<std::string> names;
  for (int code = 0; code <= 16; ++code) {
    EXPECT_EQ(StatusCodeName(code), absl::StatusCodeToString(static_cast<absl::StatusCode>(code)));
    names.insert(StatusCodeName(code));
  }
  EXPECT_EQ(names.size(), 17u);  // distinct names, none missing
  EXPECT_EQ(StatusCodeName(static_cast<int>(absl::StatusCode::kDataLoss)), "DATA_LOSS");
}

TEST(StatusCodeNameTest, OutOfRangeIsUnknownSoLabelsStayBounded) {
  EXPECT_EQ(StatusCodeName(99), "UNKNOWN");
  EXPECT_EQ(StatusCodeName(-1), "UNKNOWN");
}

}  // namespace
}  // namespace invariant
