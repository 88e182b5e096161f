// cli_test_support.h: helpers of the CLI and load-generator tests — run a tool
// binary and capture its exit code and output, parse JSON with protobuf's
// JSON parser, read a sample from a Prometheus text exposition.
#ifndef INVARIANT_TESTS_CLI_CLI_TEST_SUPPORT_H_
#define INVARIANT_TESTS_CLI_CLI_TEST_SUPPORT_H_

#include <fcntl.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace invariant::cli_test {

struct ToolResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Runs `binary args...` with stdin from `stdin_path` ("" = /dev/null);
// stdout/stderr are captured through files in `scratch_dir`. The child gets
// `timeout` (coreutils) as a bound so a hung tool cannot hang the test.
inline ToolResult RunTool(const std::string& binary, const std::vector<std::string>& args,
                          const std::string& scratch_dir, const std::string& stdin_path = "") {
  static int counter = 0;
  const std::string base = scratch_dir + "/run" + std::to_string(counter++);
  const std::string out_path = base + ".out", err_path = base + ".err";
  std::vector<std::string> argv_strings = {"timeout", "60", binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open(stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  ToolResult result;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

// Non-empty lines of `text`.
inline std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// Parses one JSON object; false when it is not valid JSON.
inline bool ParseJson(const std::string& text, google::protobuf::Struct* out) {
  return google::protobuf::util::JsonStringToMessage(text, out).ok();
}

// The value of the first sample of `name` whose label set contains every
// `labels` entry (each written as key="value"); 0 when there is none.
inline double MetricValue(const std::string& exposition, const std::string& name,
                          const std::vector<std::string>& labels) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (!absl::StartsWith(line, name + "{")) continue;
    const size_t close = line.rfind('}');
    if (close == absl::string_view::npos) continue;
    const absl::string_view label_set = line.substr(0, close + 1);
    bool all = true;
    for (const std::string& l : labels) all = all && absl::StrContains(label_set, l);
    if (!all) continue;
    double value = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(close + 1)), &value)) return value;
  }
  return 0;
}

}  // namespace invariant::cli_test

#endif  // INVARIANT_TESTS_CLI_CLI_TEST_SUPPORT_H_
