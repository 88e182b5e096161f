#include "server/access_log/trace_context.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace invariant::server {
namespace {

constexpr char kTrace[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr char kParent[] = "00f067aa0ba902b7";

bool IsHex(const std::string& text, size_t length) {
  return text.size() == length && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(TraceContextTest, AValidTraceparentIsContinuedWithASpanOfOurOwn) {
  const TraceContext context =
      NewTraceContext(std::string("00-") + kTrace + "-" + kParent + "-01", "congo=t61rcWkgMzE");
  EXPECT_EQ(context.trace_id, kTrace);
  EXPECT_EQ(context.parent_span_id, kParent);
  EXPECT_TRUE(context.sampled);
  EXPECT_EQ(context.tracestate, "congo=t61rcWkgMzE");
  EXPECT_TRUE(IsHex(context.span_id, 16));
  EXPECT_NE(context.span_id, kParent);
  EXPECT_EQ(context.Traceparent(), std::string("00-") + kTrace + "-" + context.span_id + "-01");
}

TEST(TraceContextTest, TheSampledFlagIsBitZeroOfTheFlags) {
  for (const auto& [flags, sampled] :
       {std::pair<const char*, bool>{"00", false}, {"01", true}, {"03", true}, {"fe", false}}) {
    const TraceContext context =
        NewTraceContext(std::string("00-") + kTrace + "-" + kParent + "-" + flags, "");
    EXPECT_EQ(context.sampled, sampled) << flags;
    EXPECT_EQ(context.trace_id, kTrace) << flags;
  }
}

TEST(TraceContextTest, AMalformedTraceparentStartsANewTraceAndDropsItsState) {
  const std::string t = kTrace, p = kParent;
  for (const std::string& bad : std::vector<std::string>{
           "", "garbage", "00-" + t + "-" + p,                           // too short
           "00-" + t + "-" + p + "-01-extra",                            // extra in 00
           "ff-" + t + "-" + p + "-01",                                  // version ff
           "00-" + std::string(32, '0') + "-" + p + "-01",               // zero trace
           "00-" + t + "-" + std::string(16, '0') + "-01",               // zero parent
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + p + "-01",           // upper case
           "00_" + t + "-" + p + "-01", "00-" + t + "-" + p + "-0g"}) {  // separators, hex
    EXPECT_FALSE(ValidTraceparent(bad)) << bad;
    const TraceContext context = NewTraceContext(bad, "congo=t61rcWkgMzE");
    EXPECT_TRUE(IsHex(context.trace_id, 32)) << bad;
    EXPECT_NE(context.trace_id, kTrace) << bad;
    EXPECT_TRUE(context.parent_span_id.empty()) << bad;
    EXPECT_TRUE(context.tracestate.empty()) << bad;
    EXPECT_FALSE(context.sampled) << bad;
  }
}

TEST(TraceContextTest, ALaterVersionIsReadByItsFirstFourFields) {
  const std::string later =
      std::string("cc-") + kTrace + "-" + kParent + "-01-what-the-future-holds";
  EXPECT_TRUE(ValidTraceparent(later));
  EXPECT_EQ(NewTraceContext(later, "").trace_id, kTrace);
  EXPECT_FALSE(ValidTraceparent(std::string("cc-") + kTrace + "-" + kParent + "-01x"));
}

TEST(TraceContextTest, AnOverlongTracestateIsDropped) {
  const std::string traceparent = std::string("00-") + kTrace + "-" + kParent + "-01";
  EXPECT_EQ(NewTraceContext(traceparent, std::string(512, 'a')).tracestate.size(), 512u);
  EXPECT_TRUE(NewTraceContext(traceparent, std::string(513, 'a')).tracestate.empty());
}

TEST(TraceContextTest, NewTracesAndSpansDiffer) {
  const TraceContext a = NewTraceContext("", ""), b = NewTraceContext("", "");
  EXPECT_NE(a.trace_id, b.trace_id);
  EXPECT_NE(a.span_id, b.span_id);
  EXPECT_EQ(a.Flags(), "00");
}

}  // namespace
}  // namespace invariant::server
