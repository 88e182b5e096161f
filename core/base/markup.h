// markup.h: text made safe inside HTML and XML (SVG) documents.
//
// EscapeXml replaces & < > " ' by their entities, so the result may stand in
// element text and in a quoted attribute value of either language. Every
// string the pages of this project show that a person or a file supplied
// (model and class names, descriptions, load reasons) goes through it. Pure;
// thread-safe.
#ifndef INVARIANT_CORE_BASE_MARKUP_H_
#define INVARIANT_CORE_BASE_MARKUP_H_

#include <string>
#include <string_view>

namespace invariant {

std::string EscapeXml(std::string_view text);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_MARKUP_H_
