// A REAL Prometheus (/usr/bin/prometheus) scrapes the REAL invariant-server;
// the count of Predict calls it reports must equal the calls made.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "absl/strings/str_cat.h"
#include "tests/integration/integration_env.h"

extern char** environ;

namespace invariant::testing_server {
namespace {

constexpr char kPrometheusBinary[] = "/usr/bin/prometheus";

// Runs prometheus with a config scraping `metrics_port` every second; killed on destruction.
class PrometheusProcess {
 public:
  ~PrometheusProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }

  absl::Status Start(const std::filesystem::path& dir, int metrics_port) {
    port_ = FreePort();
    const std::string config = (dir / "prometheus.yml").string();
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                          << "scrape_configs:\n  - job_name: invariant\n"
                          << "    scrape_interval: 1s\n    scrape_timeout: 900ms\n"
                          << "    static_configs:\n      - targets: ['127.0.0.1:" << metrics_port
                          << "']\n";
    std::vector<std::string> args = {kPrometheusBinary, "--config.file=" + config,
                                     "--storage.tsdb.path=" + (dir / "tsdb").string(),
                                     absl::StrCat("--web.listen-address=127.0.0.1:", port_),
                                     "--log.level=warn"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = (dir / "prometheus.log").string();
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return absl::InternalError(absl::StrCat("posix_spawn prometheus failed: ", rc));
    return absl::OkStatus();
  }

  // The scalar value of instant `query` (already URL-encoded), or an error
  // while Prometheus has no sample yet.
  absl::StatusOr<double> Query(const std::string& encoded_query) {
    auto body = HttpGet(port_, "/api/v1/query?query=" + encoded_query, absl::Seconds(5));
    if (!body.ok()) return body.status();
    static const std::regex kValue(R"re("value":\[[0-9.e+]+,"([^"]+)"\])re");
    std::smatch match;
    if (!std::regex_search(*body, match, kValue)) {
      return absl::UnavailableError("no sample yet: " + *body);
    }
    return std::stod(match[1].str());
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

class PrometheusTest : public ServerTestBase {};

TEST_F(PrometheusTest, ScrapedPredictCountEqualsCallsMade) {
  ASSERT_EQ(access(kPrometheusBinary, X_OK), 0) << "prometheus is not installed";
  testing_models::TestModelSpec spec;
  spec.name = "clf";
  spec.input_dim = 16;
  WriteModel(spec);
  StartServer({});
  constexpr int kCalls = 37;
  constexpr int kBadCalls = 3;
  const std::vector<float> x = RandomRows(1, 16, 2);
  std::vector<float> scores;
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(client_->Predict("clf", 1, x, &scores).ok());
  for (int i = 0; i < kBadCalls; ++i) {
    EXPECT_EQ(client_->Predict("missing", 1, x, &scores).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  // Every call has completed: any scrape from now on sees the final counts.
  PrometheusProcess prometheus;
  ASSERT_TRUE(prometheus.Start(dir_, server_->metrics_port()).ok());
  const std::string total = "sum(grpc_server_handled_total%7Bgrpc_method%3D%22Predict%22%7D)";
  absl::StatusOr<double> value = absl::UnavailableError("not queried");
  for (int i = 0; i < 600 && !value.ok(); ++i) {  // bounded: ≤ 600 polls, 100 ms apart
    value = prometheus.Query(total);
    if (!value.ok()) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, kCalls + kBadCalls);
  auto ok = prometheus.Query(
      "sum(grpc_server_handled_total%7Bgrpc_method%3D%22Predict%22%2Cgrpc_code%3D%22OK%22%7D)");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, kCalls);
  auto not_found = prometheus.Query(
      "sum(grpc_server_handled_total%7Bgrpc_method%3D%22Predict%22%2Cgrpc_code%3D%22NOT_FOUND%22%"
      "7D)");
  ASSERT_TRUE(not_found.ok()) << not_found.status();
  EXPECT_EQ(*not_found, kBadCalls);
  auto rows = prometheus.Query("sum(invariant_rows_total%7Bmodel%3D%22clf%22%7D)");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, kCalls);
  auto info = prometheus.Query("invariant_model_info%7Bmodel%3D%22clf%22%7D");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(*info, 1);
}

}  // namespace
}  // namespace invariant::testing_server
