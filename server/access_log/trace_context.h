// trace_context.h: W3C Trace Context (https://www.w3.org/TR/trace-context/)
// for one call: the `traceparent` a caller sent, or a new trace when it sent
// none or a malformed one, and the span id this server gives the call.
//
//   traceparent: {version:2}-{trace-id:32}-{parent-id:16}-{trace-flags:2}, lower-case hex
//
// Accepted as the recommendation says: version 00 exactly as above; a later
// version (not ff) by its first four fields, ignoring what follows a '-';
// a trace id or parent id of all zeros is invalid. A malformed traceparent
// starts a new trace (its tracestate is then dropped, as the spec requires);
// a valid one continues its trace with a new span id of ours, the caller's
// span as the parent and its flags kept. tracestate is passed on as sent
// (at most 512 bytes; longer is dropped, as the spec allows).
//
// Thread-safety: pure functions; NewTraceContext draws from a per-thread
// generator.
#ifndef INVARIANT_SERVER_ACCESS_LOG_TRACE_CONTEXT_H_
#define INVARIANT_SERVER_ACCESS_LOG_TRACE_CONTEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace invariant::server {

inline constexpr char kTraceparentHeader[] = "traceparent";
inline constexpr char kTracestateHeader[] = "tracestate";
inline constexpr size_t kMaxTracestateBytes = 512;

struct TraceContext {
  std::string trace_id;        // 32 lower-case hex digits, never all zero
  std::string span_id;         // 16: this server's span for the call
  std::string parent_span_id;  // 16: the caller's span; empty when the trace started here
  bool sampled = false;        // trace-flags bit 0, as the caller sent it (false for a new trace)
  std::string tracestate;      // as the caller sent it, when its traceparent was valid

  // "00-<trace_id>-<span_id>-<flags>": what the call's answer carries, and
  // what a call this one makes would send.
  std::string Traceparent() const;
  // The two hex digits of the trace flags.
  std::string Flags() const { return sampled ? "01" : "00"; }
};

// Whether `traceparent` is one this server continues (the rules above).
bool ValidTraceparent(absl::string_view traceparent);

// The context of a call whose caller sent `traceparent` and `tracestate`
// (each may be empty: not sent).
TraceContext NewTraceContext(absl::string_view traceparent, absl::string_view tracestate);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_ACCESS_LOG_TRACE_CONTEXT_H_
