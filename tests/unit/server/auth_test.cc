// Access decisions (auth.h) and ModelAdmin's reload coalescing and access
// modes on a real in-process gRPC server.
#include "server/common/auth.h"

#include <gmock/gmock.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "server/grpc/admin_service.h"
#include "server/grpc/data_auth.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

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

// ModelAdmin on an in-process server over an empty registry.
class AdminServiceTest : public ::testing::Test {
 protected:
  void Start(AdminAccess access, const std::string& token, std::function<ScanReport()> reload,
             std::function<void(size_t)> on_queued = nullptr) {
    RegistryOptions options;
    options.root = ::testing::TempDir();
    registry_ = std::make_unique<Registry>(options, [](const std::string&) {
      return absl::StatusOr<std::shared_ptr<const Model>>(absl::UnimplementedError("no models"));
    });
    admin_ = std::make_unique<ModelAdminImpl>(access, token, std::move(reload), registry_.get(),
                                              std::move(on_queued));
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(admin_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::ModelAdmin::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  grpc::Status Reload(const std::string& token = "") {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    v1::ReloadModelsResponse response;
    return stub_->ReloadModels(&context, v1::ReloadModelsRequest(), &response);
  }

  std::unique_ptr<Registry> registry_;
  std::unique_ptr<ModelAdminImpl> admin_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ModelAdmin::Stub> stub_;
};

TEST_F(AdminServiceTest, ConcurrentReloadsShareOneRescanAtATime) {
  // The first rescan waits at a gate until every later call is queued behind
  // it: the later calls must then cost ONE more rescan, not one each.
  constexpr int kCalls = 64;
  absl::Notification entered, release;
  std::atomic<int> runs{0};
  std::atomic<int> in_flight{0}, max_in_flight{0};
  std::atomic<int> queued{0};
  absl::BlockingCounter all_queued(kCalls);
  Start(
      AdminAccess::kOpen, "",
      [&] {
        const int now = ++in_flight;
        max_in_flight = std::max(max_in_flight.load(), now);
        const int run = ++runs;
        if (run == 1) {
          entered.Notify();
          release.WaitForNotification();
        }
        --in_flight;
        ScanReport report;
        report.loaded = run;
        return report;
      },
      [&](size_t) {
        ++queued;
        all_queued.DecrementCount();
      });

  struct Call {
    grpc::ClientContext context;
    v1::ReloadModelsRequest request;
    v1::ReloadModelsResponse response;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Call>> calls;
  absl::BlockingCounter finished(kCalls);
  auto send = [&] {
    calls.push_back(std::make_unique<Call>());
    Call* call = calls.back().get();
    stub_->async()->ReloadModels(&call->context, &call->request, &call->response,
                                 [call, &finished](grpc::Status status) {
                                   call->status = std::move(status);
                                   finished.DecrementCount();
                                 });
  };
  send();
  entered.WaitForNotification();
  for (int i = 1; i < kCalls; ++i) send();
  all_queued.Wait();
  release.Notify();
  finished.Wait();

  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(admin_->reload_runs(), 2);
  EXPECT_EQ(max_in_flight.load(), 1);
  EXPECT_EQ(queued.load(), kCalls);
  int first = 0, second = 0;
  for (const auto& call : calls) {
    ASSERT_TRUE(call->status.ok()) << call->status.error_message();
    (call->response.versions_loaded() == 1 ? first : second)++;
  }
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, kCalls - 1);
}

TEST_F(AdminServiceTest, DisabledAdminRefusesEveryCallWithoutRescanning) {
  std::atomic<int> runs{0};
  Start(AdminAccess::kDisabled, "", [&] {
    ++runs;
    return ScanReport();
  });
  const grpc::Status reload = Reload();
  EXPECT_EQ(reload.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(reload.error_message(), HasSubstr("--admin_token_file"));
  grpc::ClientContext context;
  v1::GetModelStatusResponse status;
  EXPECT_EQ(stub_->GetModelStatus(&context, v1::GetModelStatusRequest(), &status).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(runs.load(), 0);
}

TEST_F(AdminServiceTest, TokenAccessNeedsTheToken) {
  std::atomic<int> runs{0};
  Start(AdminAccess::kToken, "s3cret", [&] {
    ++runs;
    return ScanReport();
  });
  EXPECT_EQ(Reload().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Reload("wrong").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(runs.load(), 0);
  EXPECT_TRUE(Reload("s3cret").ok());
  EXPECT_EQ(runs.load(), 1);
}

// The data-token gate (data_auth.h) on the headers core hands it.
class DataTokenGateTest : public ::testing::Test {
 protected:
  using Headers = std::vector<DataTokenGate::Header>;

  static DataTokenPolicy Policy(ServerMetrics* metrics = nullptr) {
    DataTokenPolicy policy;
    policy.token = "data-secret";
    policy.open_services = {"grpc.health.v1.Health", "invariant.v1.ModelAdmin"};
    policy.labelled = {google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
        "invariant.v1.FeatureService")};
    policy.metrics = metrics;
    return policy;
  }
  static Headers Call(absl::string_view path, absl::string_view authorization = "") {
    Headers headers = {{":path", path}, {":authority", "x"}, {"user-agent", "test"}};
    if (!authorization.empty()) headers.emplace_back("authorization", authorization);
    return headers;
  }
  // The value of the first series of `name` whose line holds every label, or -1.
  static double Value(const std::string& text, const std::string& name,
                      const std::vector<std::string>& labels) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (!absl::StartsWith(line, name + "{")) continue;
      bool all = true;
      for (const std::string& label : labels) all = all && absl::StrContains(line, label);
      if (all) return std::stod(line.substr(line.rfind(' ') + 1));
    }
    return -1;
  }
};

TEST_F(DataTokenGateTest, EveryPathButTheOpenServicesNeedsTheToken) {
  const DataTokenGate gate(Policy());
  for (const char* path :
       {"/invariant.v1.FeatureService/Predict", "/inference.GRPCInferenceService/ModelInfer",
        "/some.New/Method", "/no.Such/Method", "/grpc.health.v1.HealthX/Check",
        "/grpc.health.v1/Health/Check", "/grpc.health.v1.Health", "/grpc.health.v1.Health/",
        "grpc.health.v1.Health/Check", "/x/grpc.health.v1.Health/Check", "", "/"}) {
    const absl::Status none = gate.Check(Call(path));
    EXPECT_EQ(none.code(), absl::StatusCode::kUnauthenticated) << path;
    EXPECT_THAT(none.message(), HasSubstr("data token")) << path;
    const absl::Status wrong = gate.Check(Call(path, "Bearer data-secreT"));
    EXPECT_EQ(wrong.code(), absl::StatusCode::kUnauthenticated) << path;
    EXPECT_THAT(wrong.message(), Not(HasSubstr("data-secret")));
    EXPECT_TRUE(gate.Check(Call(path, "Bearer data-secret")).ok()) << path;
  }
  for (const char* path : {"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
                           "/invariant.v1.ModelAdmin/ReloadModels"}) {
    EXPECT_TRUE(gate.Check(Call(path)).ok()) << path;
    EXPECT_TRUE(gate.Check(Call(path, "Bearer admin-token")).ok()) << path;
  }
}

TEST_F(DataTokenGateTest, RefusesAmbiguousHeaders) {
  const DataTokenGate gate(Policy());
  Headers two_tokens = Call("/invariant.v1.FeatureService/Predict", "Bearer data-secret");
  two_tokens.emplace_back("authorization", "Bearer data-secret");
  EXPECT_EQ(gate.Check(two_tokens).code(), absl::StatusCode::kUnauthenticated);
  Headers two_paths = Call("/grpc.health.v1.Health/Check");
  two_paths.emplace_back(":path", "/invariant.v1.FeatureService/Predict");
  EXPECT_EQ(gate.Check(two_paths).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(gate.Check(Headers{{"authorization", "Bearer data-secret"}}).code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(DataTokenGateTest, CountsRefusalsUnderServedMethodsOrUnknown) {
  ServerMetrics metrics("test");
  const DataTokenGate gate(Policy(&metrics));
  EXPECT_FALSE(gate.Admit(Call("/invariant.v1.FeatureService/Predict")).ok());
  EXPECT_TRUE(gate.Admit(Call("/invariant.v1.FeatureService/Predict", "Bearer data-secret")).ok());
  EXPECT_TRUE(gate.Admit(Call("/grpc.health.v1.Health/Check")).ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(gate.Admit(Call(absl::StrCat("/client.Chosen", i, "/Name"))).ok());
  }
  const std::string text = metrics.Serialize();
  const std::vector<std::string> predict = {"grpc_service=\"invariant.v1.FeatureService\"",
                                            "grpc_method=\"Predict\"", "grpc_type=\"unary\""};
  std::vector<std::string> unknown = {"grpc_service=\"unknown\"", "grpc_method=\"unknown\"",
                                      "grpc_type=\"unknown\""};
  EXPECT_EQ(Value(text, "grpc_server_started_total", predict), 1) << text;
  EXPECT_EQ(Value(text, "grpc_server_started_total", unknown), 3);
  std::vector<std::string> refused = predict;
  refused.push_back("grpc_code=\"UNAUTHENTICATED\"");
  EXPECT_EQ(Value(text, "grpc_server_handled_total", refused), 1);
  unknown.push_back("grpc_code=\"UNAUTHENTICATED\"");
  EXPECT_EQ(Value(text, "grpc_server_handled_total", unknown), 3);
  EXPECT_THAT(text, Not(HasSubstr("Chosen")));
  EXPECT_THAT(text, Not(HasSubstr("Health")));
}

}  // namespace
}  // namespace invariant::server
