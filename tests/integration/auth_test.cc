// Security defaults of the REAL invariant-server (issue 11, item 9): the data
// token on every data method, ModelAdmin's access on loopback and
// non-loopback binds, no paths or file bytes in data-path errors, symlinks
// out of the models root refused, bounded echo of client strings, and a
// throttled libprotobuf log under invalid UTF-8.
#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "inference/grpc_service.grpc.pb.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

testing_models::TestModelSpec Classifier(int64_t version = 1) {
  testing_models::TestModelSpec spec;
  spec.name = "clf";
  spec.version = version;
  return spec;
}

int CountLines(const std::string& text, const std::string& needle) {
  std::istringstream lines(text);
  int count = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) ++count;
  }
  return count;
}

class AuthTest : public ServerTestBase {
 protected:
  std::string WriteToken(const std::string& name, const std::string& token) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << token << "\n";
    return path;
  }

  // Calls `method` ("/package.Service/Method") with an empty request message,
  // bypassing the typed stubs; the call's status.
  grpc::Status CallEmpty(const std::string& method, const std::string& token) {
    grpc::GenericStub stub(client_->channel());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    grpc::ByteBuffer request, response;
    grpc::Slice empty;
    request = grpc::ByteBuffer(&empty, 1);
    grpc::Status status;
    absl::Notification done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
    done.WaitForNotification();
    return status;
  }

  // "/<service>/<method>" of every method of the two data-path services.
  static std::vector<std::string> DataMethods() {
    std::vector<std::string> paths;
    for (const google::protobuf::ServiceDescriptor* service :
         {v1::FeaturizeRequest::descriptor()->file()->FindServiceByName("FeatureService"),
          inference::ModelInferRequest::descriptor()->file()->FindServiceByName(
              "GRPCInferenceService")}) {
      EXPECT_NE(service, nullptr);
      if (service == nullptr) continue;
      for (int i = 0; i < service->method_count(); ++i) {
        paths.push_back(absl::StrCat("/", service->full_name(), "/", service->method(i)->name()));
      }
    }
    return paths;
  }
};

TEST_F(AuthTest, DataTokenGuardsEveryMethodOfBothDataServices) {
  WriteModel(Classifier());
  StartServer({"--data_token_file=" + WriteToken("data_token", "data-secret")});
  const std::vector<std::string> methods = DataMethods();
  ASSERT_GE(methods.size(), 12u);
  for (const std::string& method : methods) {
    for (const std::string& token : {std::string(), std::string("wrong")}) {
      const grpc::Status status = CallEmpty(method, token);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << method << " with token '" << token << "': " << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr("data token"));
      EXPECT_THAT(status.error_message(), Not(HasSubstr("data-secret")));
    }
    // With the token every method is served (reached the real handler).
    const grpc::Status served = CallEmpty(method, "data-secret");
    EXPECT_NE(served.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method;
    EXPECT_NE(served.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
  }
  // Streams are refused before anything is read.
  auto stream = client_->OpenPredictStream();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // Health needs no token (Kubernetes probes cannot send one).
  bool serving = false;
  ASSERT_TRUE(client_->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_TRUE(serving);
  // The client library sends the token on unary and streaming data calls.
  ClientOptions options;
  options.bearer_token = "data-secret";
  auto authorized = Client::Create(server_->target(), options);
  const std::vector<float> x = RandomRows(3, 16, 7);
  std::vector<float> scores;
  ASSERT_TRUE(authorized->Predict("clf", 3, x, &scores).ok());
  EXPECT_EQ(scores.size(), 9u);
  auto good_stream = authorized->OpenPredictStream();
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  request.mutable_inputs()->mutable_values()->Add(x.begin(), x.begin() + 16);
  v1::PredictResponse response;
  EXPECT_TRUE(good_stream->Call(request, &response));
  EXPECT_TRUE(good_stream->Finish().ok());
  // Loopback bind: no plaintext warning, ModelAdmin open.
  EXPECT_THAT(server_->Log(), Not(HasSubstr("PLAINTEXT")));
  v1::ReloadModelsResponse reload;
  EXPECT_TRUE(client_->ReloadModels(&reload).ok());
}

TEST_F(AuthTest, NonLoopbackBindWithoutAdminTokenDisablesModelAdmin) {
  WriteModel(Classifier());
  StartServer({"--host=0.0.0.0"});
  v1::ReloadModelsResponse reload;
  const grpc::Status status = client_->ReloadModels(&reload);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("--admin_token_file"));
  v1::GetModelStatusResponse model_status;
  EXPECT_EQ(client_->GetModelStatus("clf", &model_status).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(server_->Log(), HasSubstr("WARNING: ModelAdmin is DISABLED"));
  // The data path is unaffected.
  std::vector<float> features;
  EXPECT_TRUE(client_->Featurize("clf", 1, RandomRows(1, 16, 1), &features).ok());
}

TEST_F(AuthTest, InsecureAdminOpensModelAdminOnANonLoopbackBindWithAWarning) {
  WriteModel(Classifier());
  StartServer({"--host=0.0.0.0", "--insecure_admin"});
  v1::ReloadModelsResponse reload;
  EXPECT_TRUE(client_->ReloadModels(&reload).ok());
  EXPECT_THAT(server_->Log(), HasSubstr("WARNING: ModelAdmin is OPEN"));
}

TEST_F(AuthTest, TokenOverPlaintextOnANonLoopbackBindIsWarnedAbout) {
  WriteModel(Classifier());
  ClientOptions options;
  options.bearer_token = "admin-secret";
  StartServer({"--host=0.0.0.0", "--admin_token_file=" + WriteToken("admin", "admin-secret")},
              options);
  EXPECT_THAT(server_->Log(), HasSubstr("WARNING: bearer tokens are accepted over PLAINTEXT"));
  EXPECT_THAT(server_->Log(), Not(HasSubstr("admin-secret")));
  v1::ReloadModelsResponse reload;
  EXPECT_TRUE(client_->ReloadModels(&reload).ok());
}

TEST_F(AuthTest, FailedVersionsShowNoPathsOrFileBytesOnTheDataPath) {
  WriteModel(Classifier(1));
  // Version 2: a symlink to a file outside the models root.
  const std::filesystem::path outside = dir_ / "outside";
  std::filesystem::create_directories(outside);
  std::ofstream(outside / "passwd") << "root:x:0:0:root:/root:/bin/bash\n";
  std::filesystem::create_directories(dir_ / "models" / "clf" / "2");
  std::filesystem::create_symlink(outside / "passwd",
                                  dir_ / "models" / "clf" / "2" / kBundleFileName);
  // Version 3: a corrupt bundle inside the root whose first bytes are text.
  std::filesystem::create_directories(dir_ / "models" / "clf" / "3");
  std::ofstream(dir_ / "models" / "clf" / "3" / kBundleFileName)
      << "root:x:0:0:root:/root:/bin/bash\n";
  StartServer({"--version_policy=all", "--poll_seconds=0"});

  for (int64_t version : {2, 3}) {
    v1::GetModelMetadataResponse metadata;
    const grpc::Status status = client_->GetModelMetadata("clf", version, &metadata);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
    const std::string& message = status.error_message();
    EXPECT_THAT(message, HasSubstr(absl::StrCat("model 'clf' version ", version)));
    EXPECT_THAT(message, HasSubstr("failed to load"));
    for (const std::string& secret : {std::string("root:x"), std::string("passwd"), dir_.string(),
                                      std::string("model.bundle")}) {
      EXPECT_THAT(message, Not(HasSubstr(secret))) << "version " << version;
    }
  }
  // The previous version keeps serving.
  std::vector<float> features;
  EXPECT_TRUE(client_->Featurize("clf", 1, RandomRows(1, 16, 2), &features).ok());
  // The full reasons are in ModelAdmin (loopback: open) and the log.
  v1::GetModelStatusResponse model_status;
  ASSERT_TRUE(client_->GetModelStatus("clf", &model_status).ok());
  std::map<int64_t, std::string> errors;
  for (const auto& v : model_status.models(0).versions()) errors[v.version()] = v.error();
  EXPECT_THAT(errors[2], HasSubstr("outside the models root"));
  EXPECT_THAT(errors[3], HasSubstr((dir_ / "models" / "clf" / "3").string()));
  EXPECT_THAT(server_->Log(), HasSubstr("outside the models root"));
}

TEST_F(AuthTest, LongNamesAndLabelsAreEchoedAsABoundedPrefix) {
  WriteModel(Classifier());
  StartServer({});
  const std::string long_text(8000, 'n');
  std::vector<float> features;
  const grpc::Status name = client_->Featurize(long_text, 1, RandomRows(1, 16, 3), &features);
  EXPECT_EQ(name.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(name.error_message(), HasSubstr("model.name: expected at most 255 bytes"));
  EXPECT_LT(name.error_message().size(), 300u);
  // A name under the length limit but unknown, and an unknown long label.
  const grpc::Status unknown =
      client_->Featurize(std::string(255, 'u'), 1, RandomRows(1, 16, 3), &features);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(unknown.error_message().size(), 300u);
  v1::ModelSpec spec;
  spec.set_name("clf");
  spec.set_version_label(long_text);
  v1::GetModelMetadataResponse metadata;
  const grpc::Status label = client_->GetModelMetadata(spec, &metadata);
  EXPECT_EQ(label.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(label.error_message(), HasSubstr("...(8000 bytes)"));
  EXPECT_LT(label.error_message().size(), 300u);
}

TEST_F(AuthTest, InvalidUtf8NamesDoNotFloodTheLog) {
  WriteModel(Classifier());
  StartServer({});
  constexpr int kCalls = 300;  // lines written: occurrences 1, 2, 4, ..., 256 = 9
  for (int i = 0; i < kCalls; ++i) {
    std::vector<float> features;
    const grpc::Status status =
        client_->Featurize(absl::StrCat("\xff\xfe", i), 1, RandomRows(1, 16, 4), &features);
    EXPECT_FALSE(status.ok());
  }
  std::vector<float> features;
  EXPECT_TRUE(client_->Featurize("clf", 1, RandomRows(1, 16, 4), &features).ok());
  const int lines = CountLines(server_->Log(), "invalid UTF-8");
  EXPECT_GE(lines, 1) << server_->Log();
  EXPECT_LE(lines, 9) << "the libprotobuf log is not throttled";
}

}  // namespace
}  // namespace invariant::testing_server
