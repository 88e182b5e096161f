#include "core/base/markup.h"

#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(MarkupTest, EscapeXmlReplacesTheFiveSpecialCharacters) {
  EXPECT_EQ(EscapeXml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

// Issue 50: an index link to model "p%41" led to "pA".
TEST(MarkupTest, PercentEncodePathSegmentKeepsOnlyUnreservedBytes) {
  EXPECT_EQ(PercentEncodePathSegment("p%41"), "p%2541");
  EXPECT_EQ(PercentEncodePathSegment("a/b c?#"), "a%2Fb%20c%3F%23");
  EXPECT_EQ(PercentEncodePathSegment("Az09-._~"), "Az09-._~");
  EXPECT_EQ(PercentEncodePathSegment("\xc3\xa9"), "%C3%A9");  // é in UTF-8
}

}  // namespace
}  // namespace invariant
