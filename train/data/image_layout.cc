#include "train/data/image_layout.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace invariant::train {
namespace {

constexpr char kChannelLetters[] = "rgba";
// How to fix a channels-first file; `example` is a header in the right order.
std::string TransposeHint(absl::string_view example) {
  return absl::StrCat(
      "the image group reads height x width x channels rows, channels last: reorder the columns "
      "pixel by pixel, all channels of pixel 0, then of pixel 1, ... (",
      example,
      "); with numpy, x.reshape(n, channels, height, width).transpose(0, 2, 3, "
      "1).reshape(n, -1)");
}

bool IsSeparator(char c) { return c == '_' || c == '-' || c == '.'; }

// Parses the digits s[begin, end) (1..18 of them) into *value.
bool ParseDigits(absl::string_view s, size_t begin, size_t end, int64_t* value) {
  if (begin >= end || end - begin > 18) return false;
  for (size_t i = begin; i < end; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return absl::SimpleAtoi(s.substr(begin, end - begin), value);
}

// Form (a): a channel word, an optional separator, a pixel number.
struct ChannelName {
  int channel;    // 0..3 for r, g, b, a
  int64_t pixel;  // as written
};

std::optional<ChannelName> ParseChannelName(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  size_t i = 0;
  while (i < lower.size() && absl::ascii_isalpha(static_cast<unsigned char>(lower[i]))) ++i;
  const std::string word = lower.substr(0, i);
  static const std::array<std::array<const char*, 2>, 4> kWords = {
      {{"r", "red"}, {"g", "green"}, {"b", "blue"}, {"a", "alpha"}}};
  int channel = -1;
  for (int c = 0; c < 4; ++c) {
    if (word == kWords[c][0] || word == kWords[c][1]) channel = c;
  }
  if (channel < 0) return std::nullopt;
  if (i < lower.size() && IsSeparator(lower[i])) ++i;
  int64_t pixel = 0;
  if (!ParseDigits(lower, i, lower.size(), &pixel)) return std::nullopt;
  return ChannelName{channel, pixel};
}

// Form (b): three numbers at the end, each after a separator (the first may
// start the name).
std::optional<std::array<int64_t, 3>> ParseTriple(absl::string_view name) {
  std::array<int64_t, 3> out{};
  size_t end = name.size();
  for (int t = 2; t >= 0; --t) {
    size_t begin = end;
    while (begin > 0 && absl::ascii_isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
    if (!ParseDigits(name, begin, end, &out[t])) return std::nullopt;
    if (begin == 0) {
      if (t != 0) return std::nullopt;
    } else if (!IsSeparator(name[begin - 1])) {
      return std::nullopt;
    }
    end = begin == 0 ? 0 : begin - 1;
  }
  return out;
}

std::string ShapeText(const ImageShape& s) {
  return absl::StrCat(s.height, " x ", s.width, " x ", s.channels);
}

absl::Status CheckChannelWords(const std::vector<std::string>& names,
                               const std::vector<ChannelName>& parsed, const ImageShape& shape,
                               absl::string_view field, absl::string_view source) {
  const int64_t n = static_cast<int64_t>(parsed.size());
  const int64_t c = shape.channels, pixels = shape.height * shape.width;
  const int64_t base = parsed[0].pixel;
  // Channels last: pixel k / C, channel words repeating with period C.
  int64_t bad_last = -1;
  for (int64_t k = 0; k < n && bad_last < 0; ++k) {
    const bool distinct =
        k >= c || std::none_of(parsed.begin(), parsed.begin() + k, [&](const ChannelName& p) {
          return p.channel == parsed[k].channel;
        });
    if (!distinct || parsed[k].pixel - base != k / c ||
        parsed[k].channel != parsed[k % c].channel) {
      bad_last = k;
    }
  }
  if (bad_last < 0 && (base == 0 || base == 1)) return absl::OkStatus();
  if (bad_last < 0) bad_last = 0;
  // Channels first: pixel k mod (H·W), one channel word per block.
  bool first = base == 0 || base == 1;
  for (int64_t k = 0; k < n && first; ++k) {
    const int64_t block = k / pixels;
    const bool distinct = k % pixels != 0 || std::none_of(parsed.begin(), parsed.begin() + k,
                                                          [&](const ChannelName& p) {
                                                            return p.channel == parsed[k].channel;
                                                          });
    first = distinct && parsed[k].pixel - base == k % pixels &&
            parsed[k].channel == parsed[block * pixels].channel;
  }
  // The channels in order of first appearance (the order a pixel should
  // list them in), else r, g, b, a.
  std::vector<int> order;
  for (const ChannelName& p : parsed) {
    if (std::find(order.begin(), order.end(), p.channel) == order.end()) order.push_back(p.channel);
  }
  if (static_cast<int64_t>(order.size()) != c) {
    order.clear();
    for (int k = 0; k < c && k < 4; ++k) order.push_back(k);
  }
  auto letter = [&](int64_t k) {
    return std::string(1, kChannelLetters[order[static_cast<size_t>(k % order.size())]]);
  };
  const ChannelName& got = parsed[bad_last];
  const int64_t first_pixel = base == 1 ? 1 : 0;
  const std::string expected =
      absl::StrCat("channel ", letter(bad_last), " of pixel ", bad_last / c + first_pixel);
  std::string example;
  for (int64_t k = 0; k < std::min<int64_t>(2 * c, n); ++k) {
    absl::StrAppend(&example, letter(k), k / c + first_pixel, ", ");
  }
  absl::StrAppend(&example, "...");
  const std::string where =
      absl::StrCat("column '", names[bad_last], "' (input ", bad_last, ") is channel ",
                   std::string(1, kChannelLetters[got.channel]), " of pixel ", got.pixel,
                   "; channels last has ", expected, " there");
  if (first) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": ", field, ".channels is ", c,
        " and the header lists the values channels first (", where, "); ", TransposeHint(example)));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": ", field, " is ", ShapeText(shape),
      " and the header names channels and pixels, but not channels last, numbered from 0 or 1 (",
      where, "); reorder the columns or rename them"));
}

absl::Status CheckTriples(const std::vector<std::string>& names,
                          const std::vector<std::array<int64_t, 3>>& parsed,
                          const ImageShape& shape, absl::string_view field,
                          absl::string_view source) {
  const int64_t n = static_cast<int64_t>(parsed.size());
  const int64_t h = shape.height, w = shape.width, c = shape.channels;
  // (row, col, channel) of position k in each order.
  auto last = [&](int64_t k) { return std::array<int64_t, 3>{k / (w * c), (k / c) % w, k % c}; };
  auto first = [&](int64_t k) { return std::array<int64_t, 3>{(k / w) % h, k % w, k / (h * w)}; };
  // The names spelled (row, col, channel) or (channel, row, col), from 0 or 1.
  auto matches = [&](auto position, bool channel_first_spelling, int64_t base) {
    for (int64_t k = 0; k < n; ++k) {
      const std::array<int64_t, 3> p = position(k);
      const std::array<int64_t, 3> want =
          channel_first_spelling ? std::array<int64_t, 3>{p[2] + base, p[0] + base, p[1] + base}
                                 : std::array<int64_t, 3>{p[0] + base, p[1] + base, p[2] + base};
      if (parsed[k] != want) return k;
    }
    return int64_t{-1};
  };
  int64_t bad_last = n;
  bool is_first = false;
  for (const bool spelling : {false, true}) {
    for (const int64_t base : {0, 1}) {
      const int64_t bad = matches(last, spelling, base);
      if (bad < 0) return absl::OkStatus();
      if (!spelling && base == (parsed[0][0] == 1 ? 1 : 0)) bad_last = bad;
      if (matches(first, spelling, base) < 0) is_first = true;
    }
  }
  if (bad_last >= n) bad_last = 0;
  const std::array<int64_t, 3> want = last(bad_last);
  const std::string where = absl::StrCat("column '", names[bad_last], "' (input ", bad_last,
                                         ") names (", absl::StrJoin(parsed[bad_last], ", "),
                                         "); channels last has (row, col, channel) = (",
                                         absl::StrJoin(want, ", "), ") there, counting from 0");
  if (is_first) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", field, ".channels is ", c,
                                                   " and the header lists the values channels "
                                                   "first (",
                                                   where, "); ",
                                                   TransposeHint("pixel_0_0_0, pixel_0_0_1, ...")));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": ", field, " is ", ShapeText(shape),
      " and the header names pixel indices, but not in channels-last order (", where,
      "); name the columns <prefix>_<row>_<col>_<channel> in that order, or reorder them"));
}

}  // namespace

absl::StatusOr<ImageShape> ImageShapeFromConfig(const v1::ImageLayout& layout,
                                                absl::string_view field) {
  if (layout.height() <= 0 || layout.width() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, layout.height() <= 0 ? ".height" : ".width", " must be > 0, got ",
                     layout.height() <= 0 ? layout.height() : layout.width()));
  }
  if (layout.channels() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".channels must be >= 1 (0 means 1), got ", layout.channels()));
  }
  ImageShape shape;
  shape.height = layout.height();
  shape.width = layout.width();
  shape.channels = layout.channels() == 0 ? 1 : layout.channels();
  return shape;
}

absl::Status CheckImageLayout(const RowSchema& schema, const ImageShape& shape,
                              absl::string_view field) {
  if (schema.dim != shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " is ", ShapeText(shape), " = ", shape.size(), " values per row but '", schema.name,
        "' has rows of ", schema.dim, schema.column_names.empty() ? "" : " (its input columns)"));
  }
  const std::vector<int64_t>& s = schema.input_shape;
  if (s.size() == 2 || s.size() == 3) {
    const int64_t channels = s.size() == 3 ? s[2] : 1;
    const struct {
      const char* name;
      int64_t want, got;
    } sides[] = {{"height", shape.height, s[0]},
                 {"width", shape.width, s[1]},
                 {"channels", shape.channels, channels}};
    for (const auto& side : sides) {
      if (side.want != side.got) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".", side.name, " is ", side.want, " but '", schema.name, "' has images of ",
            side.name, " ", side.got, " (", absl::StrJoin(s, " x "), ")"));
      }
    }
  }
  if (!schema.column_names.empty()) {
    return CheckChannelsLastColumns(schema.column_names, shape, field, schema.name);
  }
  return absl::OkStatus();
}

absl::Status CheckChannelsLastColumns(const std::vector<std::string>& names,
                                      const ImageShape& shape, absl::string_view field,
                                      absl::string_view source) {
  if (static_cast<int64_t>(names.size()) != shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", field, " is ", ShapeText(shape),
                                                   " = ", shape.size(),
                                                   " values per row but the "
                                                   "header names ",
                                                   names.size(), " input columns"));
  }
  if (shape.channels <= 1 || names.empty()) return absl::OkStatus();
  std::vector<ChannelName> words;
  std::vector<std::array<int64_t, 3>> triples;
  for (const std::string& name : names) {
    if (std::optional<ChannelName> w = ParseChannelName(name)) words.push_back(*w);
    if (std::optional<std::array<int64_t, 3>> t = ParseTriple(name)) triples.push_back(*t);
  }
  if (words.size() == names.size()) return CheckChannelWords(names, words, shape, field, source);
  if (triples.size() == names.size()) return CheckTriples(names, triples, shape, field, source);
  return absl::OkStatus();  // the names say nothing: channels last is assumed
}

}  // namespace invariant::train
