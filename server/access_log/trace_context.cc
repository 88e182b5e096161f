#include "server/access_log/trace_context.h"

#include <cstdint>
#include <random>

#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

bool IsLowerHex(absl::string_view text) {
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZeros(absl::string_view text) { return text.find_first_not_of('0') == text.npos; }

// `digits` random lower-case hex digits, not all zero.
std::string RandomHex(int digits) {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  do {
    uint64_t bits = 0;
    for (int i = 0; i < digits; ++i) {
      if (i % 16 == 0) bits = engine();
      out[static_cast<size_t>(i)] = kHex[bits & 15];
      bits >>= 4;
    }
  } while (AllZeros(out));
  return out;
}

}  // namespace

std::string TraceContext::Traceparent() const {
  return absl::StrCat("00-", trace_id, "-", span_id, "-", Flags());
}

bool ValidTraceparent(absl::string_view tp) {
  // 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters in version 00.
  if (tp.size() < 55) return false;
  const absl::string_view version = tp.substr(0, 2);
  const absl::string_view trace_id = tp.substr(3, 32);
  const absl::string_view parent_id = tp.substr(36, 16);
  const absl::string_view flags = tp.substr(53, 2);
  if (tp[2] != '-' || tp[35] != '-' || tp[52] != '-') return false;
  if (!IsLowerHex(version) || version == "ff") return false;
  if (!IsLowerHex(trace_id) || AllZeros(trace_id)) return false;
  if (!IsLowerHex(parent_id) || AllZeros(parent_id)) return false;
  if (!IsLowerHex(flags)) return false;
  if (version == "00") return tp.size() == 55;
  return tp.size() == 55 || tp[55] == '-';  // a later version may add fields
}

TraceContext NewTraceContext(absl::string_view traceparent, absl::string_view tracestate) {
  TraceContext context;
  context.span_id = RandomHex(16);
  if (!ValidTraceparent(traceparent)) {
    context.trace_id = RandomHex(32);
    return context;
  }
  context.trace_id = std::string(traceparent.substr(3, 32));
  context.parent_span_id = std::string(traceparent.substr(36, 16));
  const char flags_low = traceparent[54];
  const int low = flags_low <= '9' ? flags_low - '0' : flags_low - 'a' + 10;
  context.sampled = (low & 1) != 0;
  if (tracestate.size() <= kMaxTracestateBytes) context.tracestate = std::string(tracestate);
  return context;
}

}  // namespace invariant::server
