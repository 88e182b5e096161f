// markup.h: text made safe inside HTML and XML (SVG) documents.
//
// EscapeXml replaces & < > " ' by their entities, so the result may stand in
// element text and in a quoted attribute value of either language. Every
// string the pages of this project show that a person or a file supplied
// (model and class names, descriptions, load reasons) goes through it.
// PercentEncodePathSegment makes such a string one segment of a link's path.
// Pure; thread-safe.
#ifndef INVARIANT_CORE_BASE_MARKUP_H_
#define INVARIANT_CORE_BASE_MARKUP_H_

#include <string>
#include <string_view>

namespace invariant {

std::string EscapeXml(std::string_view text);

// `text` as one segment of a URL path (RFC 3986): every byte but the
// unreserved A-Z a-z 0-9 - . _ ~ becomes %XX (upper-case hex), so "p%41"
// stays "p%41" once decoded and "a/b" stays one segment.
std::string PercentEncodePathSegment(std::string_view text);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_MARKUP_H_
