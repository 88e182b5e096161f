#include "tests/integration/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/base/file.h"

namespace invariant::testing_server {

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

absl::Status ServerProcess::Start(const std::vector<std::string>& flags,
                                  const std::string& stderr_path, absl::Duration ready_timeout) {
  stderr_path_ = stderr_path;
  int out[2];
  if (pipe(out) != 0) return absl::InternalError("pipe failed");
  std::vector<std::string> args = {INVARIANT_SERVER_BINARY, "--host=127.0.0.1", "--port=0",
                                   "--metrics_port=0"};
  args.insert(args.end(), flags.begin(), flags.end());
  // Everything the child needs is prepared before fork: only async-signal-safe
  // calls happen between fork and exec.
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_ = fork();
  if (pid_ < 0) return absl::InternalError("fork failed");
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close(out[0]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (err >= 0) close(err);
  close(out[1]);
  std::string buffer;
  const absl::Time give_up = absl::Now() + ready_timeout;
  while (absl::Now() < give_up) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char chunk[256];
    const ssize_t n = read(out[0], chunk, sizeof(chunk));
    if (n <= 0) break;  // the server exited
    buffer.append(chunk, static_cast<size_t>(n));
    const size_t at = buffer.find("invariant-server ready");
    if (at != std::string::npos && buffer.find('\n', at) != std::string::npos) {
      const int fields = std::sscanf(
          buffer.c_str() + at, "invariant-server ready grpc_port=%d metrics_port=%d http_port=%d",
          &grpc_port_, &metrics_port_, &http_port_);
      if (fields >= 2) {
        if (fields == 2) http_port_ = -1;
        close(out[0]);
        return absl::OkStatus();
      }
    }
  }
  close(out[0]);
  return absl::UnavailableError(
      absl::StrCat("server not ready; stdout: '", buffer, "'; stderr: ", Log()));
}

void ServerProcess::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

int ServerProcess::WaitForExit(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (pid_ > 0) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (absl::Now() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      return -1;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return -1;
}

std::string ServerProcess::Log() const { return ReadWholeFile(stderr_path_).value_or(""); }

absl::StatusOr<std::string> HttpExchange(int port, const std::string& request,
                                         absl::Duration timeout, bool half_close) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  timeval tv{static_cast<time_t>(absl::ToInt64Seconds(timeout)), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect to 127.0.0.1:", port, " failed"));
  }
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (e.g. 413): read what it said
    sent += static_cast<size_t>(n);
  }
  if (half_close) shutdown(fd, SHUT_WR);
  std::string response;
  char chunk[4096];
  ssize_t n;
  while ((n = recv(fd, chunk, sizeof(chunk), 0)) > 0)
    response.append(chunk, static_cast<size_t>(n));
  close(fd);
  return response;
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path, absl::Duration timeout) {
  absl::StatusOr<std::string> response = HttpExchange(
      port, absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
      timeout, /*half_close=*/false);
  if (!response.ok()) return response.status();
  const size_t body = response->find("\r\n\r\n");
  if (body == std::string::npos) return absl::UnavailableError("no HTTP response");
  if (response->compare(0, 12, "HTTP/1.1 200") != 0 &&
      response->compare(0, 12, "HTTP/1.0 200") != 0) {
    return absl::UnavailableError(absl::StrCat("HTTP error: ", response->substr(0, body)));
  }
  return response->substr(body + 4);
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

double MetricValue(const std::string& text, const std::string& name,
                   const std::vector<std::string>& labels) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const bool unlabelled = labels.empty() && line.rfind(name + " ", 0) == 0;
    if (line.rfind(name + "{", 0) != 0 && !unlabelled) continue;
    bool all = true;
    for (const std::string& label : labels) all = all && line.find(label) != std::string::npos;
    if (all) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

}  // namespace invariant::testing_server
