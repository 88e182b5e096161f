// output.h: how invariant-client's commands write: result lines to stdout,
// errors to stderr, each error with the exit code that goes with it
// (client/cli/format.h).
//
//   ReportUsageError   "invariant-client: MESSAGE" and a pointer to --help;
//                      returns kExitUsage
//   ReportServerError  "invariant-client: WHAT: CODE_NAME: server message";
//                      returns kExitServerError
//   Output             result lines, buffered; Finish() flushes them and
//                      reports a failed write ("cannot write the output",
//                      kExitFailure)
//
// Thread-safety: stdout and stderr are the process's; one writer at a time.
#ifndef INVARIANT_CLIENT_CLI_COMMANDS_OUTPUT_H_
#define INVARIANT_CLIENT_CLI_COMMANDS_OUTPUT_H_

#include <grpcpp/support/status.h>

#include <string>

namespace invariant::cli {

int ReportUsageError(const std::string& message);
int ReportServerError(const std::string& what, const grpc::Status& status);

// Buffered stdout lines.
class Output {
 public:
  // Appends `line` and a newline; writes the buffer out past 64 KiB.
  void Line(const std::string& line);
  // Writes the buffer out now.
  void Flush();
  // Flushes stdout; kExitOk, or kExitFailure (with a message on stderr) when
  // any write failed.
  int Finish();

 private:
  std::string buffer_;
  bool failed_ = false;
};

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_COMMANDS_OUTPUT_H_
