#include "core/base/error_text.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace invariant {
namespace {

// The length of the valid UTF-8 character at the start of `s`, or 0.
size_t Utf8CharLength(absl::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // at most U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string ShapeText(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::string EchoInput(absl::string_view input) {
  std::string out;
  size_t i = 0;
  while (i < input.size()) {
    const size_t length = Utf8CharLength(input.substr(i));
    if (i + std::max<size_t>(length, 1) > kMaxEchoBytes) break;
    const unsigned char c = static_cast<unsigned char>(input[i]);
    if (length == 0 || (length == 1 && (c < 0x20 || c == 0x7F))) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
      ++i;
    } else {
      out.append(input.data() + i, length);
      i += length;
    }
  }
  if (i < input.size()) absl::StrAppend(&out, "...(", input.size(), " bytes)");
  return out;
}

std::string EchoShape(absl::Span<const int64_t> shape) {
  constexpr size_t kMaxDims = 8;
  if (shape.size() <= kMaxDims) return ShapeText(shape);
  return absl::StrCat("[", absl::StrJoin(shape.subspan(0, kMaxDims), ", "), ", ...] (",
                      shape.size(), " dimensions)");
}

}  // namespace invariant
