#include "client/loadgen/rest_client.h"

#include <curl/curl.h>

#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/loadgen/oip_codec.h"

namespace invariant::loadgen {
namespace {

std::string CurlCodeName(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
      return "CURLE_COULDNT_RESOLVE_HOST";
    case CURLE_COULDNT_CONNECT:
      return "CURLE_COULDNT_CONNECT";
    case CURLE_OPERATION_TIMEDOUT:
      return "CURLE_OPERATION_TIMEDOUT";
    case CURLE_GOT_NOTHING:
      return "CURLE_GOT_NOTHING";
    case CURLE_SEND_ERROR:
      return "CURLE_SEND_ERROR";
    case CURLE_RECV_ERROR:
      return "CURLE_RECV_ERROR";
    case CURLE_PARTIAL_FILE:
      return "CURLE_PARTIAL_FILE";
    case CURLE_WEIRD_SERVER_REPLY:
      return "CURLE_WEIRD_SERVER_REPLY";
    case CURLE_URL_MALFORMAT:
      return "CURLE_URL_MALFORMAT";
    case CURLE_OUT_OF_MEMORY:
      return "CURLE_OUT_OF_MEMORY";
    case CURLE_WRITE_ERROR:
      return "CURLE_WRITE_ERROR";
    case CURLE_READ_ERROR:
      return "CURLE_READ_ERROR";
    case CURLE_HTTP2:
      return "CURLE_HTTP2";
    case CURLE_BAD_CONTENT_ENCODING:
      return "CURLE_BAD_CONTENT_ENCODING";
    default:
      return absl::StrCat("CURLE_", static_cast<int>(code));
  }
}

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  static_cast<RestCallResult*>(user)->body.append(data, size * count);
  return size * count;
}

size_t ReadHeader(char* data, size_t size, size_t count, void* user) {
  auto* result = static_cast<RestCallResult*>(user);
  const absl::string_view line(data, size * count);
  if (absl::StartsWith(line, "HTTP/")) {
    result->inference_header_length = -1;  // a new header block (e.g. after 100 Continue)
    return line.size();
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return line.size();
  if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(line.substr(0, colon)),
                             kInferenceHeaderContentLength)) {
    int64_t value = -1;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(colon + 1)), &value) &&
        value >= 0) {
      result->inference_header_length = value;
    }
  }
  return line.size();
}

}  // namespace

void RestInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

RestConnection::RestConnection(std::string target, std::string bearer_token, absl::Duration timeout)
    : base_url_(absl::StrCat("http://", target)),
      authorization_(bearer_token.empty() ? ""
                                          : absl::StrCat("Authorization: Bearer ", bearer_token)),
      timeout_(timeout),
      curl_(curl_easy_init()) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return;
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_PROXY, "");  // loopback benchmarks never go through a proxy
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &ReadHeader);
  if (timeout_ > absl::ZeroDuration()) {
    const long ms = static_cast<long>(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout_)));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, ms);
  }
}

RestConnection::~RestConnection() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

absl::Status RestConnection::Post(const std::string& path, absl::string_view body,
                                  const std::string& content_type, int64_t inference_header_length,
                                  RestCallResult* result) {
  if (curl_ == nullptr) return absl::InternalError("CURLE_FAILED_INIT: curl_easy_init failed");
  CURL* curl = static_cast<CURL*>(curl_);
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, absl::StrCat("Content-Type: ", content_type).c_str());
  headers = curl_slist_append(headers, "Expect:");
  if (inference_header_length >= 0) {
    headers = curl_slist_append(
        headers,
        absl::StrCat(kInferenceHeaderContentLength, ": ", inference_header_length).c_str());
  }
  if (!authorization_.empty()) headers = curl_slist_append(headers, authorization_.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  absl::Status status = Perform(path, result);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  return status;
}

absl::Status RestConnection::Get(const std::string& path, RestCallResult* result) {
  if (curl_ == nullptr) return absl::InternalError("CURLE_FAILED_INIT: curl_easy_init failed");
  CURL* curl = static_cast<CURL*>(curl_);
  curl_slist* headers = nullptr;
  if (!authorization_.empty()) headers = curl_slist_append(headers, authorization_.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  absl::Status status = Perform(path, result);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  return status;
}

absl::Status RestConnection::Perform(const std::string& path, RestCallResult* result) {
  CURL* curl = static_cast<CURL*>(curl_);
  result->http_status = 0;
  result->body.clear();
  result->inference_header_length = -1;
  const std::string url = base_url_ + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, result);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, result);
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  long connects = 0;
  if (curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK) {
    connections_opened_ += connects;
  }
  if (code != CURLE_OK) {
    const std::string message = absl::StrCat(
        CurlCodeName(code), ": ", error[0] != 0 ? error : curl_easy_strerror(code), " (", url, ")");
    return code == CURLE_OPERATION_TIMEDOUT ? absl::DeadlineExceededError(message)
                                            : absl::UnavailableError(message);
  }
  long http_status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
  result->http_status = static_cast<int>(http_status);
  return absl::OkStatus();
}

std::string TransportErrorName(const absl::Status& status) {
  const absl::string_view message = status.message();
  const size_t colon = message.find(':');
  return std::string(colon == absl::string_view::npos ? message : message.substr(0, colon));
}

std::string EscapePathSegment(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(c);
    } else {
      const auto b = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    }
  }
  return out;
}

}  // namespace invariant::loadgen
