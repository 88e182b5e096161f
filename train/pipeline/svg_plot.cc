#include "train/pipeline/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace invariant::train {
namespace {

// The drawing area inside a plot of kWidth × kHeight.
constexpr double kWidth = 560, kHeight = 340;
constexpr double kLeft = 72, kRight = 20, kTop = 38, kBottom = 52;
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c",
                                    "#9467bd", "#ff7f0e", "#8c564b"};

std::string Px(double v) { return absl::StrFormat("%.1f", v); }

// A data range mapped onto pixels [p0, p1], linear or log10.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double p0 = 0, p1 = 1;
  bool integer = false;  // ticks at whole numbers only
  double At(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double t = ((log ? std::log10(v) : v) - a) / (b - a);
    return p0 + t * (p1 - p0);
  }
};

// lo < hi, widened when the data are one value.
void Widen(double& lo, double& hi, bool log) {
  if (!(lo < hi)) {
    const double pad = log ? 0 : std::max(1e-9, std::fabs(lo) * 0.1 + (lo == 0 ? 1 : 0));
    lo = log ? lo / 10 : lo - pad;
    hi = log ? hi * 10 : hi + pad;
  }
}

// About five round ticks in [lo, hi] (1, 2 or 5 × 10^k apart), or the
// decades for a log axis.
std::vector<double> Ticks(const Axis& a) {
  std::vector<double> t;
  if (a.log) {
    for (double e = std::ceil(std::log10(a.lo) - 1e-9); e <= std::log10(a.hi) + 1e-9; ++e) {
      t.push_back(std::pow(10.0, e));
    }
    return t;
  }
  const double raw = (a.hi - a.lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = raw / mag < 1.5   ? mag
                : raw / mag < 3.5 ? 2 * mag
                : raw / mag < 7.5 ? 5 * mag
                                  : 10 * mag;
  if (a.integer) step = std::max(1.0, std::round(step));
  for (double v = std::ceil(a.lo / step - 1e-9) * step; v <= a.hi + step * 1e-9; v += step) {
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  }
  return t;
}

std::string Text(double x, double y, std::string_view text, const char* extra = "") {
  return absl::StrCat("<text x=\"", Px(x), "\" y=\"", Px(y), "\" ", extra, ">", EscapeXml(text),
                      "</text>");
}

// The svg element's opening, its title and its axis labels.
std::string Open(const PlotFrame& f, double width, double height) {
  std::string s =
      absl::StrCat("<svg class=\"plot\" id=\"", EscapeXml(f.id), "\" ", "width=\"", Px(width),
                   "\" height=\"", Px(height), "\" viewBox=\"0 0 ", Px(width), " ", Px(height),
                   "\" role=\"img\" aria-label=\"", EscapeXml(f.title), "\" font-size=\"12\">");
  absl::StrAppend(&s, Text(width / 2, 20, f.title, "text-anchor=\"middle\" font-weight=\"bold\""));
  absl::StrAppend(&s, Text(width / 2, height - 10, f.x_label, "text-anchor=\"middle\""));
  absl::StrAppend(&s, "<text transform=\"translate(16 ", Px(height / 2),
                  ") rotate(-90)\" text-anchor=\"middle\">", EscapeXml(f.y_label), "</text>");
  return s;
}

// Axis lines, ticks and their labels.
std::string Axes(const Axis& x, const Axis& y) {
  std::string s = absl::StrCat("<g class=\"axes\" stroke=\"#444\">", "<line x1=\"", Px(x.p0),
                               "\" y1=\"", Px(y.p0), "\" x2=\"", Px(x.p1), "\" y2=\"", Px(y.p0),
                               "\"/><line x1=\"", Px(x.p0), "\" y1=\"", Px(y.p0), "\" x2=\"",
                               Px(x.p0), "\" y2=\"", Px(y.p1), "\"/></g>");
  for (double t : Ticks(x)) {
    const double px = x.At(t);
    absl::StrAppend(&s, "<line x1=\"", Px(px), "\" y1=\"", Px(y.p0), "\" x2=\"", Px(px), "\" y2=\"",
                    Px(y.p0 + 5), "\" stroke=\"#444\"/>",
                    Text(px, y.p0 + 18, PlotNumber(t), "text-anchor=\"middle\""));
  }
  for (double t : Ticks(y)) {
    const double py = y.At(t);
    absl::StrAppend(&s, "<line x1=\"", Px(x.p0), "\" y1=\"", Px(py), "\" x2=\"", Px(x.p1),
                    "\" y2=\"", Px(py), "\" stroke=\"#ddd\"/>",
                    Text(x.p0 - 6, py + 4, PlotNumber(t), "text-anchor=\"end\""));
  }
  return s;
}

bool Usable(double x, double y, bool log_x) {
  return std::isfinite(x) && std::isfinite(y) && (!log_x || x > 0);
}

}  // namespace

std::string PlotNumber(double v) { return absl::StrFormat("%.4g", v); }

std::string DrawLines(const LinePlot& plot) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Axis x{kInf, -kInf, plot.log_x, kLeft, kWidth - kRight};
  Axis y{plot.y_from_zero ? 0 : kInf, plot.y_from_zero ? 0 : -kInf, false, kHeight - kBottom, kTop};
  for (const Series& s : plot.series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!Usable(s.x[i], s.y[i], plot.log_x)) continue;
      x.lo = std::min(x.lo, s.x[i]), x.hi = std::max(x.hi, s.x[i]);
      y.lo = std::min(y.lo, s.y[i]), y.hi = std::max(y.hi, s.y[i]);
    }
  }
  if (plot.marker_x && Usable(*plot.marker_x, 0, plot.log_x)) {
    x.lo = std::min(x.lo, *plot.marker_x), x.hi = std::max(x.hi, *plot.marker_x);
  }
  if (!(x.lo <= x.hi)) x.lo = 1, x.hi = 1;
  if (!(y.lo <= y.hi)) y.lo = 0, y.hi = 1;
  if (plot.y_from_zero && y.lo == 0 && y.hi == 0) y.hi = 1;  // all zero: [0, 1]
  x.integer = plot.integer_x;
  Widen(x.lo, x.hi, plot.log_x);
  Widen(y.lo, y.hi, false);
  y.hi += (y.hi - y.lo) * 0.05;  // room above the highest point
  std::string svg = Open(plot.frame, kWidth, kHeight) + Axes(x, y);
  if (plot.marker_x && Usable(*plot.marker_x, 0, plot.log_x)) {
    const double px = x.At(*plot.marker_x);
    absl::StrAppend(&svg, "<line class=\"marker\" x1=\"", Px(px), "\" y1=\"", Px(y.p0), "\" x2=\"",
                    Px(px), "\" y2=\"", Px(y.p1),
                    "\" stroke=\"#555\" stroke-dasharray=\"4 3\"><title>",
                    EscapeXml(plot.marker_label), "</title></line>",
                    Text(px + 4, y.p1 + 12, plot.marker_label, "fill=\"#555\""));
  }
  for (size_t k = 0; k < plot.series.size(); ++k) {
    const Series& s = plot.series[k];
    const char* colour = kPalette[k % std::size(kPalette)];
    std::string points, dots;
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!Usable(s.x[i], s.y[i], plot.log_x)) continue;
      const std::string px = Px(x.At(s.x[i])), py = Px(y.At(s.y[i]));
      absl::StrAppend(&points, points.empty() ? "" : " ", px, ",", py);
      absl::StrAppend(&dots, "<circle class=\"point\" cx=\"", px, "\" cy=\"", py, "\" r=\"3.5\" ",
                      "fill=\"", colour, "\"><title>", EscapeXml(s.name), ": ", PlotNumber(s.x[i]),
                      " → ", PlotNumber(s.y[i]), "</title></circle>");
    }
    absl::StrAppend(&svg, "<polyline class=\"series\" fill=\"none\" stroke=\"", colour,
                    "\" stroke-width=\"2\"", s.dashed ? " stroke-dasharray=\"6 4\"" : "",
                    " points=\"", points, "\"/>", dots);
    if (plot.series.size() < 2) continue;
    // The legend, top left (curves of invariance rise to the right).
    const double ly = kTop + 8 + 16 * static_cast<double>(k);
    absl::StrAppend(&svg, "<line x1=\"", Px(kLeft + 12), "\" y1=\"", Px(ly), "\" x2=\"",
                    Px(kLeft + 32), "\" y2=\"", Px(ly), "\" stroke=\"", colour,
                    "\" stroke-width=\"2\"", s.dashed ? " stroke-dasharray=\"6 4\"" : "", "/>",
                    Text(kLeft + 38, ly + 4, s.name));
  }
  return svg + "</svg>";
}

std::string DrawHeatMap(const HeatMap& map) {
  const size_t c = map.labels.size();
  const double cell = c > 0 ? std::clamp(420.0 / static_cast<double>(c), 6.0, 64.0) : 64;
  const double left = 110, top = kTop + 6;
  const double width = std::max(kWidth, left + cell * static_cast<double>(c) + kRight);
  const double height = top + cell * static_cast<double>(c) + 96;
  PlotFrame f = map.frame;
  std::string svg = Open(f, width, height);
  for (size_t r = 0; r < c; ++r) {
    int64_t total = 0;
    for (int64_t v : map.counts[r]) total += v;
    const double y = top + cell * static_cast<double>(r);
    absl::StrAppend(&svg, Text(left - 6, y + cell / 2 + 4, map.labels[r], "text-anchor=\"end\""));
    for (size_t k = 0; k < c; ++k) {
      const int64_t v = k < map.counts[r].size() ? map.counts[r][k] : 0;
      const double share = total > 0 ? static_cast<double>(v) / static_cast<double>(total) : 0;
      const double x = left + cell * static_cast<double>(k);
      // Diagonal (right) in blue, confusions in red; darker for a larger share.
      const int shade = static_cast<int>(std::lround(255 * (1 - share)));
      const std::string fill = r == k ? absl::StrFormat("#%02x%02xff", shade, shade)
                                      : absl::StrFormat("#ff%02x%02x", shade, shade);
      absl::StrAppend(&svg, "<rect class=\"cell\" x=\"", Px(x), "\" y=\"", Px(y), "\" width=\"",
                      Px(cell), "\" height=\"", Px(cell), "\" fill=\"", fill,
                      "\" stroke=\"#fff\"><title>true ", EscapeXml(map.labels[r]), ", predicted ",
                      EscapeXml(map.labels[k]), ": ", v, " of ", total, "</title></rect>");
      if (cell >= 20 && v > 0) {
        absl::StrAppend(&svg, Text(x + cell / 2, y + cell / 2 + 4, absl::StrCat(v),
                                   share > 0.6 ? "text-anchor=\"middle\" fill=\"#fff\""
                                               : "text-anchor=\"middle\""));
      }
    }
  }
  const double below = top + cell * static_cast<double>(c) + 8;
  for (size_t k = 0; k < c; ++k) {
    const double x = left + cell * (static_cast<double>(k) + 0.5);
    absl::StrAppend(&svg, "<text transform=\"translate(", Px(x), " ", Px(below),
                    ") rotate(45)\" font-size=\"11\">", EscapeXml(map.labels[k]), "</text>");
  }
  return svg + "</svg>";
}

std::string DrawScatter(const Scatter& plot) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Axis x{kInf, -kInf, false, kLeft, kWidth - kRight};
  Axis y{0, 0, false, kHeight - kBottom, kTop};  // y = 0 always shown
  for (const auto& [px, py] : plot.points) {
    if (!Usable(px, py, false)) continue;
    x.lo = std::min(x.lo, px), x.hi = std::max(x.hi, px);
    y.lo = std::min(y.lo, py), y.hi = std::max(y.hi, py);
  }
  if (!(x.lo <= x.hi)) x.lo = 0, x.hi = 1;
  Widen(x.lo, x.hi, false);
  Widen(y.lo, y.hi, false);
  std::string svg = Open(plot.frame, kWidth, kHeight) + Axes(x, y);
  absl::StrAppend(&svg, "<line class=\"reference\" x1=\"", Px(x.p0), "\" y1=\"", Px(y.At(0)),
                  "\" x2=\"", Px(x.p1), "\" y2=\"", Px(y.At(0)), "\" stroke=\"#555\"/>");
  for (const auto& [px, py] : plot.points) {
    if (!Usable(px, py, false)) continue;
    absl::StrAppend(&svg, "<circle class=\"point\" cx=\"", Px(x.At(px)), "\" cy=\"", Px(y.At(py)),
                    "\" r=\"2.5\" fill=\"#1f77b4\" fill-opacity=\"0.55\"><title>",
                    EscapeXml(plot.tooltip_x), " ", PlotNumber(px), ", ", EscapeXml(plot.tooltip_y),
                    " ", PlotNumber(py), "</title></circle>");
  }
  return svg + "</svg>";
}

}  // namespace invariant::train
