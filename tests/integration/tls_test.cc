// TLS and mTLS on the REAL invariant-server, with certificates made by the
// openssl CLI in the test's temp directory.
#include <gmock/gmock.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/base/file.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

std::string ReadText(const std::filesystem::path& path) {
  return ReadWholeFile(path.string()).value_or("");
}

class TlsTest : public ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    certs_ = dir_ / "certs";
    std::filesystem::create_directories(certs_);
    MakeCa("ca");
    MakeCa("rogue_ca");
    MakeLeaf("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
    MakeLeaf("client", "ca", "extendedKeyUsage=clientAuth\n");
    MakeLeaf("rogue_client", "rogue_ca", "extendedKeyUsage=clientAuth\n");
    testing_models::TestModelSpec spec;
    spec.name = "clf";
    WriteModel(spec);
  }

  void Run(const std::string& command) {
    const std::string full =
        absl::StrCat("cd '", certs_.string(), "' && ", command, " >> openssl.log 2>&1");
    ASSERT_EQ(std::system(full.c_str()), 0) << command << "\n" << ReadText(certs_ / "openssl.log");
  }
  void MakeCa(const std::string& name) {
    Run(absl::StrCat("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ",
                     "-keyout ", name, ".key -out ", name, ".pem -days 2 -subj /CN=", name));
  }
  void MakeLeaf(const std::string& name, const std::string& ca, const std::string& extension) {
    std::ofstream(certs_ / (name + ".ext")) << extension;
    Run(absl::StrCat("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ",
                     "-keyout ", name, ".key -out ", name, ".csr -subj /CN=", name));
    Run(absl::StrCat("openssl x509 -req -in ", name, ".csr -CA ", ca, ".pem -CAkey ", ca,
                     ".key -CAcreateserial -out ", name, ".pem -days 2 -extfile ", name, ".ext"));
  }
  std::string Pem(const std::string& file) { return ReadText(certs_ / file); }

  ClientOptions TlsOptions(const std::string& root, const std::string& client = "") {
    ClientOptions options;
    options.deadline = std::chrono::seconds(5);
    options.tls = true;
    options.tls_root_certs_pem = Pem(root + ".pem");
    options.tls_server_name_override = "localhost";
    if (!client.empty()) {
      options.tls_client_cert_pem = Pem(client + ".pem");
      options.tls_client_key_pem = Pem(client + ".key");
    }
    return options;
  }

  grpc::Status PredictWith(const ClientOptions& options) {
    auto client = Client::Create(server_->target(), options);
    std::vector<float> scores;
    return client->Predict("clf", 1, RandomRows(1, 16, 1), &scores);
  }

  std::filesystem::path certs_;
};

TEST_F(TlsTest, ServerTlsAcceptsTrustingClientsOnly) {
  StartServer({"--tls_cert=" + (certs_ / "server.pem").string(),
               "--tls_key=" + (certs_ / "server.key").string()},
              TlsOptions("ca"));
  std::vector<float> scores;
  const grpc::Status ok = client_->Predict("clf", 1, RandomRows(1, 16, 1), &scores);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(scores.size(), 3u);
  ClientOptions plaintext;
  plaintext.deadline = std::chrono::seconds(5);
  EXPECT_EQ(PredictWith(plaintext).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(PredictWith(TlsOptions("rogue_ca")).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificateFromTheCa) {
  StartServer({"--tls_cert=" + (certs_ / "server.pem").string(),
               "--tls_key=" + (certs_ / "server.key").string(),
               "--tls_client_ca=" + (certs_ / "ca.pem").string()},
              TlsOptions("ca", "client"));
  std::vector<float> scores;
  const grpc::Status ok = client_->Predict("clf", 1, RandomRows(1, 16, 1), &scores);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_FALSE(PredictWith(TlsOptions("ca")).ok());  // no client certificate
  EXPECT_FALSE(PredictWith(TlsOptions("ca", "rogue_client")).ok());
  bool serving = false;
  EXPECT_TRUE(client_->Health("", &serving).ok());
  EXPECT_TRUE(serving);
}

}  // namespace
}  // namespace invariant::testing_server
