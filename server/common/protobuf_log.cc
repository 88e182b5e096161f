#include "server/common/protobuf_log.h"

#include <google/protobuf/stubs/logging.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

LogThrottle& ProtobufThrottle() {
  static auto* throttle = new LogThrottle();
  return *throttle;
}

const char* LevelName(google::protobuf::LogLevel level) {
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      return "INFO";
    case google::protobuf::LOGLEVEL_WARNING:
      return "WARNING";
    case google::protobuf::LOGLEVEL_ERROR:
      return "ERROR";
    case google::protobuf::LOGLEVEL_FATAL:
      return "FATAL";
  }
  return "LOG";
}

void ThrottledHandler(google::protobuf::LogLevel level, const char* filename, int line,
                      const std::string& message) {
  int64_t occurrence = 1;
  if (level != google::protobuf::LOGLEVEL_FATAL) {
    occurrence = ProtobufThrottle().Admit(message);
    if (occurrence == 0) return;
  }
  const std::string text =
      occurrence == 1
          ? absl::StrCat("[libprotobuf ", LevelName(level), " ", filename, ":", line, "] ", message,
                         "\n")
          : absl::StrCat("[libprotobuf ", LevelName(level), " ", filename, ":", line, "] ", message,
                         " (occurrence ", occurrence, "; repeats are logged at powers of two)\n");
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

int64_t LogThrottle::Admit(absl::string_view key) {
  key = key.substr(0, kMaxKeyBytes);
  absl::MutexLock lock(&mu_);
  int64_t* count = nullptr;
  auto it = counts_.find(key);
  if (it != counts_.end()) {
    count = &it->second;
  } else if (counts_.size() < kMaxKeys) {
    count = &counts_.emplace(std::string(key), 0).first->second;
  } else {
    count = &overflow_;
  }
  ++*count;
  return IsPowerOfTwo(*count) ? *count : 0;
}

void InstallProtobufLogThrottle() { google::protobuf::SetLogHandler(&ThrottledHandler); }

}  // namespace invariant::server
