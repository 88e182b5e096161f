// Access decisions (auth.h): constant-time token comparison, bearer token
// checks, loopback hosts, the admin access plan and token files.
#include "server/common/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ConstantTimeEqualsTest, EqualOnlyForTheSameBytes) {
  EXPECT_TRUE(ConstantTimeEquals("Bearer s3cret", "Bearer s3cret"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  // Same length, one byte different: first, middle, last.
  EXPECT_FALSE(ConstantTimeEquals("Xearer s3cret", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s4cret", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3creT", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST(ConstantTimeEqualsTest, DifferentLengthsNeverMatch) {
  // A prefix, an extension, and a value that repeats the expected one (the
  // comparison cycles through the expected bytes: the length must still count).
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3cre", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3crett", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("abcabc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcabc"));
  // Lengths that differ in a high bit only, with equal bytes where both exist.
  EXPECT_FALSE(ConstantTimeEquals(std::string(256 + 1, 'a'), "a"));
}

TEST(ConstantTimeEqualsTest, EmptyMatchesOnlyEmpty) {
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_FALSE(ConstantTimeEquals("x", ""));
  EXPECT_FALSE(ConstantTimeEquals(std::string(1, '\0'), ""));
  EXPECT_FALSE(ConstantTimeEquals("", std::string(1, '\0')));
}

TEST(CheckBearerTokenTest, AcceptsOnlyTheExactCredentialAndNeverEchoesIt) {
  const std::string token = "s3cret-token";
  const std::string good = "Bearer " + token;
  EXPECT_TRUE(CheckBearerToken(token, &good, "data token").ok());
  for (const std::string& bad :
       {std::string("Bearer s3cret-tokem"), std::string("Bearer s3cret-toke"),
        std::string("Bearer s3cret-token "), std::string("bearer s3cret-token"), std::string(),
        std::string("Bearer "), token}) {
    const absl::Status status = CheckBearerToken(token, &bad, "data token");
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated) << bad;
    EXPECT_THAT(std::string(status.message()), ::testing::Not(HasSubstr(token))) << bad;
  }
  EXPECT_EQ(CheckBearerToken(token, nullptr, "data token").code(),
            absl::StatusCode::kUnauthenticated);
  // No token configured: everything passes.
  EXPECT_TRUE(CheckBearerToken("", &good).ok());
}

TEST(IsLoopbackHostTest, OnlyLocalAddressesAreLoopback) {
  for (const char* host :
       {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "[::]", "", "10.0.0.1", "192.168.1.2", "128.0.0.1",
                           "example.com", "localhost.example.com", "::ffff:10.0.0.1"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

bool Mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const auto& w : warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(PlanAccessTest, AdminWithoutTokenIsOpenOnLoopbackOnly) {
  AccessInputs in;
  in.host = "127.0.0.1";
  AccessPlan plan = PlanAccess(in);
  EXPECT_EQ(plan.admin, AdminAccess::kOpen);
  EXPECT_THAT(plan.warnings, IsEmpty());

  in.host = "0.0.0.0";
  plan = PlanAccess(in);
  EXPECT_EQ(plan.admin, AdminAccess::kDisabled);
  EXPECT_TRUE(Mentions(plan.warnings, "ModelAdmin is DISABLED")) << plan.warnings.size();

  in.insecure_admin = true;
  plan = PlanAccess(in);
  EXPECT_EQ(plan.admin, AdminAccess::kOpen);
  EXPECT_TRUE(Mentions(plan.warnings, "ModelAdmin is OPEN"));
}

TEST(PlanAccessTest, TokensOverPlaintextOnANonLoopbackBindAreWarnedAbout) {
  AccessInputs in;
  in.host = "0.0.0.0";
  in.has_admin_token = true;
  AccessPlan plan = PlanAccess(in);
  EXPECT_EQ(plan.admin, AdminAccess::kToken);
  EXPECT_TRUE(Mentions(plan.warnings, "PLAINTEXT"));

  in.has_admin_token = false;
  in.has_data_token = true;
  EXPECT_TRUE(Mentions(PlanAccess(in).warnings, "PLAINTEXT"));

  in.tls = true;  // TLS: no plaintext warning
  EXPECT_FALSE(Mentions(PlanAccess(in).warnings, "PLAINTEXT"));

  in.tls = false;  // loopback: the token never leaves the machine
  in.host = "127.0.0.1";
  EXPECT_THAT(PlanAccess(in).warnings, IsEmpty());
}

TEST(ReadTokenFileTest, TrimsAndRefusesEmptyOrMissingFiles) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / ("token_" + std::to_string(getpid())))
          .string();
  std::ofstream(path) << "  s3cret\n";
  absl::StatusOr<std::string> token = ReadTokenFile("admin_token_file", path);
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "s3cret");
  std::ofstream(path) << " \n";
  EXPECT_THAT(ReadTokenFile("data_token_file", path).status().message(),
              HasSubstr("data_token_file: expected a readable file holding a token"));
  std::filesystem::remove(path);
  EXPECT_EQ(ReadTokenFile("data_token_file", path).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckBearerTokenTest, NamesTheTokenButNeverItsValue) {
  const std::string wrong = "Bearer nope";
  const absl::Status status = CheckBearerToken("s3cret", &wrong, "data token");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(status.message(), HasSubstr("Bearer <data token>"));
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("s3cret")));
}

}  // namespace
}  // namespace invariant::server
