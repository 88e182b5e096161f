#include "server/common/status_util.h"

#include <gtest/gtest.h>

#include <utility>

namespace invariant::server {
namespace {

TEST(StatusUtilTest, OkMapsToOk) { EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok()); }

TEST(StatusUtilTest, EveryCanonicalCodeKeepsItsNumberAndMessage) {
  const absl::StatusCode codes[] = {
      absl::StatusCode::kCancelled,          absl::StatusCode::kUnknown,
      absl::StatusCode::kInvalidArgument,    absl::StatusCode::kDeadlineExceeded,
      absl::StatusCode::kNotFound,           absl::StatusCode::kAlreadyExists,
      absl::StatusCode::kPermissionDenied,   absl::StatusCode::kResourceExhausted,
      absl::StatusCode::kFailedPrecondition, absl::StatusCode::kAborted,
      absl::StatusCode::kOutOfRange,         absl::StatusCode::kUnimplemented,
      absl::StatusCode::kInternal,           absl::StatusCode::kUnavailable,
      absl::StatusCode::kDataLoss,           absl::StatusCode::kUnauthenticated};
  for (absl::StatusCode code : codes) {
    const grpc::Status g = ToGrpcStatus(absl::Status(code, "the message"));
    EXPECT_EQ(static_cast<int>(g.error_code()), static_cast<int>(code));
    EXPECT_EQ(g.error_message(), "the message");
    const absl::Status back = FromGrpcStatus(g);
    EXPECT_EQ(back.code(), code);
    EXPECT_EQ(back.message(), "the message");
  }
}

TEST(StatusUtilTest, NamedCodesMatchGrpc) {
  EXPECT_EQ(ToGrpcStatus(absl::InvalidArgumentError("x")).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError("x")).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ToGrpcStatus(absl::ResourceExhaustedError("x")).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ToGrpcStatus(absl::FailedPreconditionError("x")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(ToGrpcStatus(absl::UnauthenticatedError("x")).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST(StatusUtilTest, NonCanonicalCodeBecomesUnknown) {
  const grpc::Status g = ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(42), "odd"));
  EXPECT_EQ(g.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(g.error_message(), "odd");
}

TEST(StatusUtilTest, HttpStatusOfEveryCanonicalCode) {
  const std::pair<absl::StatusCode, int> expected[] = {{absl::StatusCode::kOk, 200},
                                                       {absl::StatusCode::kCancelled, 499},
                                                       {absl::StatusCode::kUnknown, 500},
                                                       {absl::StatusCode::kInvalidArgument, 400},
                                                       {absl::StatusCode::kDeadlineExceeded, 504},
                                                       {absl::StatusCode::kNotFound, 404},
                                                       {absl::StatusCode::kAlreadyExists, 409},
                                                       {absl::StatusCode::kPermissionDenied, 403},
                                                       {absl::StatusCode::kResourceExhausted, 429},
                                                       {absl::StatusCode::kFailedPrecondition, 400},
                                                       {absl::StatusCode::kAborted, 409},
                                                       {absl::StatusCode::kOutOfRange, 400},
                                                       {absl::StatusCode::kUnimplemented, 501},
                                                       {absl::StatusCode::kInternal, 500},
                                                       {absl::StatusCode::kUnavailable, 503},
                                                       {absl::StatusCode::kDataLoss, 500},
                                                       {absl::StatusCode::kUnauthenticated, 401}};
  for (const auto& [code, http] : expected) {
    EXPECT_EQ(HttpStatusCode(absl::Status(code, "m")), http) << absl::StatusCodeToString(code);
  }
}

}  // namespace
}  // namespace invariant::server
