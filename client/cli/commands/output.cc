#include "client/cli/commands/output.h"

#include <cstdio>
#include <iostream>

#include "client/cli/format.h"

namespace invariant::cli {

int ReportUsageError(const std::string& message) {
  std::cerr << "invariant-client: " << message << "\n"
            << "run 'invariant-client --help' for usage" << std::endl;
  return kExitUsage;
}

int ReportServerError(const std::string& what, const grpc::Status& status) {
  std::cerr << "invariant-client: " << what << ": " << StatusCodeName(status.error_code()) << ": "
            << status.error_message() << std::endl;
  return kExitServerError;
}

void Output::Line(const std::string& line) {
  buffer_ += line;
  buffer_ += '\n';
  if (buffer_.size() > (1 << 16)) Flush();
}

void Output::Flush() {
  if (!buffer_.empty() &&
      std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size()) {
    failed_ = true;
  }
  buffer_.clear();
}

int Output::Finish() {
  Flush();
  if (std::fflush(stdout) != 0 || failed_ || std::ferror(stdout)) {
    std::cerr << "invariant-client: cannot write the output" << std::endl;
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace invariant::cli
