// The data-token gate (data_auth.h): which paths need the token, ambiguous
// headers, and the refusals' metrics.
#include "server/grpc/data_auth.h"

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/metrics/metrics.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
