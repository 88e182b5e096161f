#include "server/access_log/access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "core/base/json.h"
#include "core/base/status_code_name.h"

namespace invariant::server {
namespace {

// How long a stopping log still waits for a full sink before it drops the
// lines left.
constexpr absl::Duration kStopGrace = absl::Seconds(2);
// The writer's batches: at most this long a line waits, this many make a batch.
constexpr absl::Duration kFlushInterval = absl::Milliseconds(100);
constexpr int64_t kBatchLines = 256;  // or half the queue, when smaller

// ,"name":M.MMM (milliseconds with three decimals, rounded from ns).
void AppendMilliseconds(const char* name, int64_t nanoseconds, std::string* out) {
  const int64_t micros = (std::max<int64_t>(0, nanoseconds) + 500) / 1000;
  const int64_t fraction = micros % 1000;
  absl::StrAppend(out, ",\"", name, "\":", micros / 1000, ".", fraction < 100 ? "0" : "",
                  fraction < 10 ? "0" : "", fraction);
}

// `t` as 2026-12-02T17:41:30.900601 (UTC), without absl::FormatTime's time
// zone machinery (days to a civil date: H. Hinnant's civil_from_days).
void AppendUtcMicros(absl::Time t, std::string* out) {
  const int64_t micros = absl::ToUnixMicros(t);
  int64_t seconds = micros >= 0 ? micros / 1'000'000 : (micros - 999'999) / 1'000'000;
  const int64_t sub = micros - seconds * 1'000'000;
  int64_t days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
  const int64_t of_day = seconds - days * 86400;
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2);
  char text[] = "0000-00-00T00:00:00.000000Z";
  const auto put = [&text](int at, int digits, int64_t value) {
    for (int i = at + digits - 1; i >= at; --i, value /= 10)
      text[i] = static_cast<char>('0' + value % 10);
  };
  put(0, 4, year);
  put(5, 2, month);
  put(8, 2, day);
  put(11, 2, of_day / 3600);
  put(14, 2, of_day / 60 % 60);
  put(17, 2, of_day % 60);
  put(20, 6, sub);
  out->append(text, sizeof(text) - 1);
}

// The trace id's last 16 hex digits as a fraction of 2^64 (OpenTelemetry's
// TraceIdRatioBased reads the same 8 bytes).
double TraceIdFraction(const std::string& trace_id) {
  uint64_t value = 0;
  if (trace_id.size() != 32 || !absl::SimpleHexAtoi(trace_id.substr(16), &value)) return 1.0;
  return static_cast<double>(value) / 18446744073709551616.0;
}

// ,"name":"text" for text that needs no escaping (hex ids, fixed names).
void AppendPlainField(const char* name, absl::string_view text, std::string* out) {
  absl::StrAppend(out, ",\"", name, "\":\"", text, "\"");
}

void AppendField(const char* name, absl::string_view text, std::string* out) {
  absl::StrAppend(out, ",\"", name, "\":");
  AppendJsonString(text, out);
}

}  // namespace

absl::Status ParseAccessLogMode(absl::string_view flag, AccessLogOptions* options) {
  options->sample_rate = 0;
  if (flag == "off") {
    options->mode = AccessLogMode::kOff;
  } else if (flag == "errors") {
    options->mode = AccessLogMode::kErrors;
  } else if (flag == "all") {
    options->mode = AccessLogMode::kAll;
  } else if (absl::ConsumePrefix(&flag, "sampled:") &&
             absl::SimpleAtod(flag, &options->sample_rate) && options->sample_rate >= 0 &&
             options->sample_rate <= 1) {
    options->mode = AccessLogMode::kSampled;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--access_log: expected off, errors, sampled:RATE (0 <= RATE <= 1) or all, "
                     "received '",
                     flag, "'"));
  }
  return absl::OkStatus();
}

std::string AccessLogLine(const RequestRecord& record, const CallOutcome& outcome) {
  const bool ok = outcome.code == absl::StatusCode::kOk;
  std::string line;
  line.reserve(512);
  line += "{\"time\":\"";
  AppendUtcMicros(record.start, &line);
  absl::StrAppend(&line, "\",\"level\":\"", ok ? "info" : "error", "\"");
  const TraceContext& trace = record.trace;
  AppendPlainField("trace_id", trace.trace_id, &line);
  AppendPlainField("span_id", trace.span_id, &line);
  if (!trace.parent_span_id.empty())
    AppendPlainField("parent_span_id", trace.parent_span_id, &line);
  AppendPlainField("trace_flags", trace.Flags(), &line);
  if (!trace.tracestate.empty()) AppendField("tracestate", trace.tracestate, &line);
  AppendPlainField("protocol", record.protocol, &line);
  AppendField("method", record.method, &line);
  if (const std::string model = record.model(); !model.empty()) {
    AppendField("model", model, &line);
    absl::StrAppend(&line, ",\"version\":", record.version());
  }
  absl::StrAppend(&line, ",\"rows\":", record.rows.load(), ",\"inputs\":", record.inputs.load());
  AppendPlainField("status", StatusCodeName(static_cast<int>(outcome.code)), &line);
  if (outcome.http_status != 0) absl::StrAppend(&line, ",\"http_status\":", outcome.http_status);
  if (!ok) AppendField("error", outcome.message, &line);
  const BatchJobTimes& times = *record.batch_times;
  absl::StrAppend(&line, ",\"bytes_in\":", record.bytes_in.load(),
                  ",\"bytes_out\":", record.bytes_out.load());
  if (record.wait_ns >= 0) AppendMilliseconds("wait_ms", record.wait_ns, &line);
  AppendMilliseconds("queue_ms", times.queue_ns.load(), &line);
  AppendMilliseconds("decode_ms", record.decode_ns.load(), &line);
  AppendMilliseconds("compute_ms", times.compute_ns.load(), &line);
  AppendMilliseconds("total_ms", absl::ToInt64Nanoseconds(outcome.end - record.start), &line);
  AppendField("peer", record.peer, &line);
  if (const std::string admission = record.admission(); !admission.empty()) {
    AppendField("admission", admission, &line);
  }
  line += '}';
  return line;
}

absl::StatusOr<std::unique_ptr<AccessLog>> AccessLog::Open(AccessLogOptions options) {
  if (options.mode == AccessLogMode::kOff) {
    return absl::InvalidArgumentError("--access_log: off opens no log");
  }
  if (options.max_queued_lines < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--access_log_queue_lines: expected at least 1, received ", options.max_queued_lines));
  }
  // Non-blocking, so a stuck sink cannot hold a shutdown (WriteAll). A
  // stderr that is a pipe (a container's log driver) is opened anew
  // (/proc/self/fd/2: a description of its own, so the server's other
  // writes to stderr stay blocking); any other stderr (a file, whose offset
  // a second description would not share; a socket) is written as it is.
  const bool to_stderr = options.path.empty() || options.path == "-";
  struct stat err {};
  if (to_stderr && (::fstat(STDERR_FILENO, &err) != 0 || !S_ISFIFO(err.st_mode))) {
    return std::unique_ptr<AccessLog>(new AccessLog(std::move(options), STDERR_FILENO, false));
  }
  const std::string path = to_stderr ? "/proc/self/fd/2" : options.path;
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0 && to_stderr) {
    return std::unique_ptr<AccessLog>(new AccessLog(std::move(options), STDERR_FILENO, false));
  }
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--access_log_file: cannot open '", options.path,
                                                   "': ", std::strerror(errno)));
  }
  return std::unique_ptr<AccessLog>(new AccessLog(std::move(options), fd, true));
}

AccessLog::AccessLog(AccessLogOptions options, int fd, bool owns_fd)
    : options_(std::move(options)),
      fd_(fd),
      owns_fd_(owns_fd),
      batch_lines_(std::clamp<int64_t>(options_.max_queued_lines / 2, 1, kBatchLines)) {
  writer_ = std::thread([this] { WriterLoop(); });
}

AccessLog::~AccessLog() {
  give_up_at_ns_.store(absl::ToUnixNanos(absl::Now() + kStopGrace), std::memory_order_relaxed);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    paused_ = false;
  }
  writer_.join();
  if (owns_fd_) ::close(fd_);
}

bool AccessLog::Logged(const RequestRecord& record, bool ok) const {
  switch (options_.mode) {
    case AccessLogMode::kOff:
      return false;
    case AccessLogMode::kAll:
      return true;
    case AccessLogMode::kErrors:
      return !ok;
    case AccessLogMode::kSampled:
      if (!ok) return true;
      if (!record.trace.parent_span_id.empty()) return record.trace.sampled;
      return TraceIdFraction(record.trace.trace_id) < options_.sample_rate;
  }
  return false;
}

void AccessLog::Close(const RequestRecord& record, CallOutcome outcome) {
  if (!Logged(record, outcome.code == absl::StatusCode::kOk)) return;
  std::string line = AccessLogLine(record, outcome);
  line += '\n';
  {
    absl::MutexLock lock(&mu_);
    if (static_cast<int64_t>(queue_.size()) < options_.max_queued_lines) {
      queue_.push_back(std::move(line));
      return;
    }
  }
  Drop(1);
}

void AccessLog::Drop(int64_t lines) {
  dropped_.fetch_add(lines, std::memory_order_relaxed);
  if (options_.on_dropped) options_.on_dropped(lines);
}

void AccessLog::PauseWriter() {
  absl::MutexLock lock(&mu_);
  paused_ = true;
}

void AccessLog::ResumeWriter() {
  absl::MutexLock lock(&mu_);
  paused_ = false;
}

void AccessLog::WriterLoop() {
  // A closed pipe must fail the write (EPIPE), not end the process.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  while (true) {
    std::deque<std::string> lines;
    {
      absl::MutexLock lock(&mu_);
      // Lines are written in batches: once kBatchLines are queued or the
      // oldest has waited kFlushInterval, so a busy server pays one write
      // (and one wake-up) per batch, not per line.
      mu_.AwaitWithTimeout(
          absl::Condition(
              +[](AccessLog* log) ABSL_EXCLUSIVE_LOCKS_REQUIRED(log->mu_) {
                return log->stopping_ ||
                       (!log->paused_ &&
                        static_cast<int64_t>(log->queue_.size()) >= log->batch_lines_);
              },
              this),
          kFlushInterval);
      if (paused_ && !stopping_) continue;
      if (queue_.empty() && stopping_) return;
      if (queue_.empty()) continue;
      lines.swap(queue_);
    }
    std::string text;
    for (const std::string& line : lines) text += line;
    const auto count = static_cast<int64_t>(lines.size());
    if (WriteAll(text)) {
      written_.fetch_add(count, std::memory_order_relaxed);
      if (options_.on_written) options_.on_written(count);
    } else {
      Drop(count);
    }
  }
}

bool AccessLog::WriteAll(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The sink is full: wait for room, until a stop's grace runs out.
      if (absl::ToUnixNanos(absl::Now()) > give_up_at_ns_.load(std::memory_order_relaxed)) {
        return false;
      }
      pollfd room{fd_, POLLOUT, 0};
      ::poll(&room, 1, 200);
      continue;
    }
    if (n <= 0) {
      if (errno == EPIPE) {  // take the blocked signal, so it is not left pending
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        const timespec zero{0, 0};
        sigtimedwait(&pipe, nullptr, &zero);
      }
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace invariant::server
