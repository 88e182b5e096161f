// svg_plot.h: a small SVG writer for the model page (report_html.h). Three
// plot types, each one self-contained <svg class="plot"> element of fixed
// size with axes, ticks, axis labels and <title> tooltips; no script, no
// style sheet and no external reference (colours are attributes):
//   * DrawLines: series of (x, y) points joined by lines, x linear or
//     logarithmic, with an optional marked x (a vertical line) and, for two
//     series or more, a legend (top left);
//   * DrawHeatMap: a square matrix of counts (a confusion matrix), shaded by
//     each count's share of its row, with row and column labels;
//   * DrawScatter: (x, y) points with a horizontal reference line at y = 0.
// The elements tests count: every data point is one <circle class="point">,
// every matrix entry one <rect class="cell">, every series one
// <polyline class="series">, the marked x one <line class="marker">.
// Every text (titles, labels, names) is XML-escaped (EscapeXml). Values that
// are not finite are left out (a point of a series, a scatter point).
// Thread-safety: pure functions.
#ifndef INVARIANT_TRAIN_PIPELINE_SVG_PLOT_H_
#define INVARIANT_TRAIN_PIPELINE_SVG_PLOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/markup.h"

namespace invariant::train {

using ::invariant::EscapeXml;  // core/base/markup.h

// A number as the page writes it, in plots and tables: "%.4g".
std::string PlotNumber(double v);

struct PlotFrame {
  std::string id;  // the svg element's id
  std::string title;
  std::string x_label;
  std::string y_label;
};

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  bool dashed = false;
};

struct LinePlot {
  PlotFrame frame;
  bool log_x = false;        // x > 0 only; other points are left out
  bool y_from_zero = false;  // the y axis starts at 0 (or below, for negative y)
  bool integer_x = false;    // x ticks at whole numbers only
  std::vector<Series> series;
  std::optional<double> marker_x;
  std::string marker_label;
};

struct HeatMap {
  PlotFrame frame;  // x: predicted, y: true
  std::vector<std::string> labels;
  std::vector<std::vector<int64_t>> counts;  // counts[row][column]
};

struct Scatter {
  PlotFrame frame;
  std::vector<std::pair<double, double>> points;
  std::string tooltip_x = "x";  // names in each point's tooltip
  std::string tooltip_y = "y";
};

std::string DrawLines(const LinePlot& plot);
std::string DrawHeatMap(const HeatMap& map);
std::string DrawScatter(const Scatter& plot);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_SVG_PLOT_H_
