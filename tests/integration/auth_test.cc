// Security defaults of the REAL invariant-server (issue 11, item 9): the data
// token on every data method, checked from the request headers before a
// message is read (issue 32, point 5), ModelAdmin's access on loopback and
// non-loopback binds, no paths or file bytes in data-path errors, symlinks
// out of the models root refused, bounded echo of client strings, and a
// throttled libprotobuf log under invalid UTF-8.
#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "core/base/file.h"
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

// A call through the generic stub that sends its request headers at once and
// a message only when told: what a client that never sends its body looks
// like to the server. Any method, unary or streaming, goes over the wire the
// same way.
class RawCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // A generous deadline: a server that waited for the message would answer
  // DEADLINE_EXCEEDED after it, never UNAUTHENTICATED.
  RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
          const std::string& token)
      : stub_(channel) {
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    if (!token.empty()) context_.AddMetadata("authorization", "Bearer " + token);
    stub_.PrepareBidiStreamingCall(&context_, method, grpc::StubOptions(), this);
    StartRead(&response_);
    StartCall();
  }
  ~RawCall() override {
    context_.TryCancel();
    done_.WaitForNotification();
  }

  // Sends `message` as the only request message and half-closes.
  void SendLast(const std::string& message) {
    grpc::Slice slice(message);
    request_ = grpc::ByteBuffer(&slice, 1);
    StartWriteLast(&request_, grpc::WriteOptions());
  }
  void Cancel() { context_.TryCancel(); }
  // The call's status (waits for it) and the first response message.
  grpc::Status Finish() {
    done_.WaitForNotification();
    return status_;
  }
  const std::string& response() const { return response_bytes_; }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    std::vector<grpc::Slice> slices;
    if (!response_.Dump(&slices).ok()) return;
    for (const grpc::Slice& slice : slices) {
      response_bytes_.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }

 private:
  grpc::GenericStub stub_;
  grpc::ClientContext context_;
  grpc::ByteBuffer request_, response_;
  std::string response_bytes_;
  grpc::Status status_;
  absl::Notification done_;
};

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

  // The server's /metrics text.
  std::string Metrics() {
    absl::StatusOr<std::string> text = HttpGet(server_->metrics_port(), "/metrics");
    EXPECT_TRUE(text.ok()) << text.status();
    return text.value_or("");
  }

  // "/<service>/<method>" of every method of the two data-path services.
  // Every method of both data services but the repository extension's,
  // which take the admin token instead (AdminMethods).
  static std::vector<std::string> DataMethods() { return Methods(false); }
  static std::vector<std::string> AdminMethods() { return Methods(true); }
  static std::vector<std::string> Methods(bool admin) {
    std::vector<std::string> paths;
    for (const google::protobuf::ServiceDescriptor* service :
         {v1::FeaturizeRequest::descriptor()->file()->FindServiceByName("FeatureService"),
          inference::ModelInferRequest::descriptor()->file()->FindServiceByName(
              "GRPCInferenceService")}) {
      EXPECT_NE(service, nullptr);
      if (service == nullptr) continue;
      for (int i = 0; i < service->method_count(); ++i) {
        const std::string& name = service->method(i)->name();
        if (absl::StartsWith(name, "Repository") != admin) continue;
        paths.push_back(absl::StrCat("/", service->full_name(), "/", name));
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
  // The repository extension passes the data gate: its handlers check the
  // admin token (open here: a loopback bind without one).
  ASSERT_EQ(AdminMethods().size(), 3u);
  for (const std::string& method : AdminMethods()) {
    const grpc::Status status = CallEmpty(method, "");
    EXPECT_THAT(status.error_message(), Not(HasSubstr("data token"))) << method;
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

constexpr char kPredict[] = "/invariant.v1.FeatureService/Predict";
constexpr char kModelInfer[] = "/inference.GRPCInferenceService/ModelInfer";

// A serialized PredictRequest for "clf" (16 inputs per row).
std::string PredictBytes(const std::vector<float>& x) {
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  request.mutable_inputs()->mutable_values()->Add(x.begin(), x.end());
  return request.SerializeAsString();
}

TEST_F(AuthTest, DataCallsWithoutTheTokenAreRefusedFromTheirHeadersBeforeAnyMessage) {
  WriteModel(Classifier());
  StartServer({"--data_token_file=" + WriteToken("data_token", "data-secret")});
  // Headers only, never a message: without the check on the headers the
  // unary methods would wait for the message until the 60 s deadline.
  for (const char* method :
       {kPredict, kModelInfer, "/invariant.v1.FeatureService/StreamPredict", "/no.Such/Method"}) {
    for (const std::string& token : {std::string(), std::string("wrong")}) {
      RawCall call(client_->channel(), method, token);
      const grpc::Status status = call.Finish();
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << method << " with token '" << token << "': " << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr("data token"));
      EXPECT_THAT(status.error_message(), Not(HasSubstr("data-secret")));
    }
  }
  // Core refused them, so no interceptor saw them; the gate counted each
  // once, under the method's labels or "unknown" for a path the server
  // does not serve.
  const std::string text = Metrics();
  const auto refused = [&text](const std::string& service, const std::string& method) {
    return MetricValue(text, "grpc_server_handled_total",
                       {"grpc_service=\"" + service + "\"", "grpc_method=\"" + method + "\"",
                        "grpc_code=\"UNAUTHENTICATED\""});
  };
  EXPECT_EQ(refused("invariant.v1.FeatureService", "Predict"), 2) << text;
  EXPECT_EQ(refused("invariant.v1.FeatureService", "StreamPredict"), 2);
  EXPECT_EQ(refused("inference.GRPCInferenceService", "ModelInfer"), 2);
  EXPECT_EQ(refused("unknown", "unknown"), 2);
  EXPECT_EQ(
      MetricValue(text, "grpc_server_started_total",
                  {"grpc_service=\"invariant.v1.FeatureService\"", "grpc_method=\"Predict\""}),
      2);
  EXPECT_THAT(text, Not(HasSubstr("no.Such")));
}

TEST_F(AuthTest, HeadersOnlyDataCallsWithTheTokenWaitForTheirMessage) {
  WriteModel(Classifier());
  StartServer({"--data_token_file=" + WriteToken("data_token", "data-secret")});
  RawCall predict(client_->channel(), kPredict, "data-secret");
  RawCall infer(client_->channel(), kModelInfer, "data-secret");
  // Complete calls on the same connection are served meanwhile: Predict,
  // ModelInfer and a stream.
  ClientOptions options;
  options.bearer_token = "data-secret";
  auto authorized = Client::Create(server_->target(), options);
  const std::vector<float> x = RandomRows(3, 16, 7);
  std::vector<float> scores;
  ASSERT_TRUE(authorized->Predict("clf", 3, x, &scores).ok());
  EXPECT_EQ(scores.size(), 9u);
  {
    inference::ModelInferRequest request;
    request.set_model_name("clf");
    auto* input = request.add_inputs();
    input->set_name("input");
    input->set_datatype("FP32");
    input->add_shape(3);
    input->add_shape(16);
    input->mutable_contents()->mutable_fp32_contents()->Add(x.begin(), x.end());
    inference::ModelInferResponse response;
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer data-secret");
    const grpc::Status status = inference::GRPCInferenceService::NewStub(authorized->channel())
                                    ->ModelInfer(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_GT(response.outputs_size(), 0);
  }
  auto stream = authorized->OpenPredictStream();
  v1::PredictRequest one;
  one.mutable_model()->set_name("clf");
  one.mutable_inputs()->mutable_values()->Add(x.begin(), x.begin() + 16);
  v1::PredictResponse one_response;
  EXPECT_TRUE(stream->Call(one, &one_response));
  EXPECT_TRUE(stream->Finish().ok());
  // The headers-only calls were let through and are waiting: one gets its
  // message now and is answered, the other is cancelled by its client.
  predict.SendLast(PredictBytes(x));
  const grpc::Status served = predict.Finish();
  ASSERT_TRUE(served.ok()) << served.error_message();
  v1::PredictResponse response;
  ASSERT_TRUE(response.ParseFromString(predict.response()));
  EXPECT_EQ(response.scores_size(), 9);
  infer.Cancel();
  EXPECT_EQ(infer.Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(AuthTest, HealthReflectionAndModelAdminNeedNoDataToken) {
  WriteModel(Classifier());
  ClientOptions admin;
  admin.bearer_token = "admin-secret";
  StartServer({"--data_token_file=" + WriteToken("data_token", "data-secret"),
               "--admin_token_file=" + WriteToken("admin_token", "admin-secret")},
              admin);
  // Health and both reflection services, no token at all.
  auto anonymous = Client::Create(server_->target(), ClientOptions());
  bool serving = false;
  ASSERT_TRUE(anonymous->Health("invariant.v1.FeatureService", &serving).ok());
  EXPECT_TRUE(serving);
  for (const char* method : {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                             "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"}) {
    RawCall call(anonymous->channel(), method, "");
    call.SendLast(std::string("\x3a\x00", 2));  // ServerReflectionRequest{list_services: ""}
    const grpc::Status status = call.Finish();
    EXPECT_TRUE(status.ok()) << method << ": " << status.error_message();
    EXPECT_THAT(call.response(), HasSubstr("invariant.v1.FeatureService")) << method;
  }
  // ModelAdmin passes the data-token check and still wants the admin token,
  // which is a different one: the gate leaves "authorization" in place.
  v1::ReloadModelsResponse reload;
  EXPECT_TRUE(client_->ReloadModels(&reload).ok());
  const grpc::Status none = anonymous->ReloadModels(&reload);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(), HasSubstr("admin token"));
  ClientOptions data;
  data.bearer_token = "data-secret";
  const grpc::Status wrong = Client::Create(server_->target(), data)->ReloadModels(&reload);
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(wrong.error_message(), HasSubstr("admin token"));
  // And the admin token opens no data method.
  std::vector<float> scores;
  const grpc::Status predict = client_->Predict("clf", 1, RandomRows(1, 16, 1), &scores);
  EXPECT_EQ(predict.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(predict.error_message(), HasSubstr("data token"));
}

TEST_F(AuthTest, DataTokenOverTlsIsCheckedFromTheHeadersToo) {
  WriteModel(Classifier());
  const std::filesystem::path certs = dir_ / "certs";
  std::filesystem::create_directories(certs);
  const std::string command =
      absl::StrCat("cd '", certs.string(),
                   "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes",
                   " -keyout server.key -out server.pem -days 2 -subj /CN=localhost",
                   " -addext subjectAltName=DNS:localhost,IP:127.0.0.1 > openssl.log 2>&1");
  ASSERT_EQ(std::system(command.c_str()), 0)
      << ReadWholeFile((certs / "openssl.log").string()).value_or("");
  ClientOptions options;
  options.tls = true;
  options.tls_root_certs_pem = ReadWholeFile((certs / "server.pem").string()).value_or("");
  options.tls_server_name_override = "localhost";
  StartServer({"--data_token_file=" + WriteToken("data_token", "data-secret"),
               "--tls_cert=" + (certs / "server.pem").string(),
               "--tls_key=" + (certs / "server.key").string()},
              options);
  for (const char* method : {kPredict, kModelInfer}) {
    RawCall call(client_->channel(), method, "");
    const grpc::Status status = call.Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
        << method << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("data token"));
  }
  RawCall waiting(client_->channel(), kPredict, "data-secret");
  options.bearer_token = "data-secret";
  std::vector<float> scores;
  EXPECT_TRUE(Client::Create(server_->target(), options)
                  ->Predict("clf", 1, RandomRows(1, 16, 5), &scores)
                  .ok());
  waiting.SendLast(PredictBytes(RandomRows(1, 16, 5)));
  EXPECT_TRUE(waiting.Finish().ok());
  bool serving = false;
  EXPECT_TRUE(client_->Health("", &serving).ok());
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
