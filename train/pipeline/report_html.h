// report_html.h: the model page, report.html, written next to report.json by
// invariant-train (publish.h): one self-contained HTML file (style and script
// inline, plots as inline SVG from svg_plot.h; no network, no other file)
// drawn from a TrainReport:
//   * #invariance: one plot per generator of the certified group (id
//     "invariance-<k>", k = 1, 2, …), the relative mean discrepancy
//     mean |f(x) − f(g·x)| / mean |f(x) − f(x')| against the size of g
//     (certificate.curve), the baseline's curve dashed beside it when the
//     run has one (certificate.baseline);
//   * #validation: the validation metric over λ (log scale), the chosen λ
//     marked (svg id "validation-curve");
//   * #test: the confusion matrix of the test rows (svg id "confusion") or,
//     for regression, the residuals target − prediction against the
//     prediction (svg id "residuals"); k-fold: every row, in its round;
//   * #summary and #data-timing: the model, rows, dimensions, test metrics,
//     certificate figures, seconds per stage, featurize rate, solver,
//     warnings.
// A plot without data (an identity group, a run without a λ grid, a model
// without a head) is a sentence saying why instead. Every text from the run
// (names, class names, description, warnings, paths) is escaped.
// The inline script, installed before anything else, counts uncaught errors
// and console.error calls into <body data-errors="N"> and, once loaded, sets
// data-plots (the svg.plot elements) and data-rendered-plots (those with a
// non-empty layout box), so a headless browser's DOM dump shows both.
// Thread-safety: a pure function.
#ifndef INVARIANT_TRAIN_PIPELINE_REPORT_HTML_H_
#define INVARIANT_TRAIN_PIPELINE_REPORT_HTML_H_

#include <string>

#include "train/pipeline/report.h"

namespace invariant::train {

std::string ReportToHtml(const TrainReport& report);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_REPORT_HTML_H_
