// ModelAdmin (admin_service.h) on a real in-process gRPC server: reload
// coalescing and the access modes.
#include "server/grpc/admin_service.h"

#include <gmock/gmock.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace invariant::server
