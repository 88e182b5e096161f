// The one table of gRPC code names, used by the server's metrics and the tools.
#include "client/grpc_code_name.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace invariant {
namespace {

TEST(GrpcCodeNameTest, NamesEveryCanonicalCode) {
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::NOT_FOUND), "NOT_FOUND");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
  std::set<std::string> names;
  for (int code = 0; code <= 16; ++code) {
    names.insert(GrpcCodeName(code));
  }
  EXPECT_EQ(names.size(), 17u);  // distinct names, none missing
}

TEST(GrpcCodeNameTest, OutOfRangeIsUnknownSoLabelsStayBounded) {
  EXPECT_STREQ(GrpcCodeName(99), "UNKNOWN");
  EXPECT_STREQ(GrpcCodeName(-1), "UNKNOWN");
}

}  // namespace
}  // namespace invariant
