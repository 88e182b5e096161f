#include "train/pipeline/report_html.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "train/pipeline/clip_certificate.h"
#include "train/pipeline/svg_plot.h"

namespace invariant::train {
namespace {

std::string Esc(std::string_view s) { return EscapeXml(s); }

// First in <head>: errors and console.error calls are counted into
// body[data-errors]; on load, the plots and those with a layout box.
constexpr char kScript[] = R"js(
(function () {
  var errors = [];
  function mark() {
    if (!document.body) return;
    document.body.dataset.errors = String(errors.length);
    document.body.dataset.errorText = errors.join(' | ');
  }
  window.addEventListener('error', function (e) {
    errors.push(String((e && e.message) || 'a resource failed to load')); mark();
  }, true);
  window.addEventListener('unhandledrejection', function () {
    errors.push('unhandled promise rejection'); mark();
  });
  var original = console.error;
  console.error = function () {
    errors.push(Array.prototype.join.call(arguments, ' ')); mark();
    return original.apply(console, arguments);
  };
  window.addEventListener('DOMContentLoaded', function () {
    mark();
    var plots = document.querySelectorAll('svg.plot'), rendered = 0;
    for (var i = 0; i < plots.length; ++i) {
      var box = plots[i].getBoundingClientRect(), inner = plots[i].getBBox();
      if (box.width > 0 && box.height > 0 && inner.width > 0 && inner.height > 0) ++rendered;
    }
    document.body.dataset.plots = String(plots.length);
    document.body.dataset.renderedPlots = String(rendered);
  });
})();
)js";

constexpr char kStyle[] = R"css(
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 16px 24px;
       color: #222; background: #fff; }
h1 { margin-bottom: 4px; } h1 span { color: #666; font-weight: normal; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 32px; }
table { border-collapse: collapse; margin: 8px 0; }
td, th { border: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
.row { display: flex; flex-wrap: wrap; column-gap: 24px; }
.row > section { flex: 0 1 auto; }
#summary table { max-width: 900px; }
svg.plot { border: 1px solid #eee; background: #fff; }
.note { color: #555; max-width: 900px; }
.warnings li { color: #8a4b00; }
.bar { display: inline-block; height: 10px; background: #1f77b4; vertical-align: middle; }
footer { margin-top: 40px; color: #777; font-size: 12px; }
)css";

std::string Row(std::string_view key, std::string_view value) {
  return absl::StrCat("<tr><th>", Esc(key), "</th><td>", Esc(value), "</td></tr>\n");
}

std::string MetricsText(const std::map<std::string, double>& m) {
  std::string s;
  for (const auto& [k, v] : m) absl::StrAppend(&s, s.empty() ? "" : ", ", k, " ", PlotNumber(v));
  return s.empty() ? "—" : s;
}

std::string Summary(const TrainReport& r) {
  const auto& c = r.certificate;
  std::string s = "<section id=\"summary\"><table>\n";
  absl::StrAppend(
      &s, Row("task", r.task), Row("encoder", r.encoder_kind), Row("group", r.group),
      Row("input → features", absl::StrCat(r.input_dim, " → ", r.feature_dim)),
      Row("λ chosen", PlotNumber(r.lambda)),
      Row(r.k_fold > 0 ? "test (mean over the folds)" : "test", MetricsText(r.test_metrics)),
      Row("invariance: relative mean discrepancy", PlotNumber(c.relative_mean_discrepancy())),
      Row("invariance: max / mean |f(x) − f(g·x)|",
          absl::StrCat(PlotNumber(c.max_discrepancy()), " / ", PlotNumber(c.mean_discrepancy()))),
      Row("certificate", absl::StrCat(c.num_points(), " points × ", c.num_group_elements(),
                                      " elements: ", c.method())));
  if (!r.baseline_model.empty()) {
    absl::StrAppend(
        &s, Row("baseline: relative mean discrepancy",
                absl::StrCat(PlotNumber(r.baseline_certificate.relative_mean_discrepancy()), " (",
                             r.baseline_model, ")")));
  }
  return s + "</table></section>\n";
}

// The points of `generator` in a certificate's curve, as one series.
Series CurveSeries(const v1::InvarianceCertificate& c, const std::string& generator,
                   std::string name, bool dashed) {
  Series s{std::move(name), {}, {}, dashed};
  for (const v1::InvarianceCurvePoint& p : c.curve()) {
    if (p.generator() != generator) continue;
    s.x.push_back(p.magnitude());
    s.y.push_back(p.relative_mean_discrepancy());
  }
  return s;
}

std::string Invariance(const TrainReport& r) {
  std::string s = absl::StrCat(
      "<section id=\"invariance\"><h2>Invariance</h2>\n<p class=\"note\">How far the model's "
      "output moves as an input is transformed by g of growing size, along one generator of the "
      "certified group at a time: the relative mean discrepancy mean |f(x) − f(g·x)| / "
      "mean |f(x) − f(x′)| over ",
      r.certificate.num_points(),
      absl::StrContains(r.certificate.method(), kClipCertificateMethod)
          ? " held-out clips, changed as recordings and sent through the model's front end as "
            "the server does"
          : " held-out points",
      " (0: exactly invariant; about 1: g moves f as far as replacing x by another input).",
      r.baseline_model.empty() ? ""
                               : " Dashed: the plain baseline on the same points and elements.",
      "</p>\n<div class=\"plots\">\n");
  std::vector<std::pair<std::string, std::string>> generators;  // (name, unit) in order
  for (const v1::InvarianceCurvePoint& p : r.certificate.curve()) {
    if (generators.empty() || generators.back().first != p.generator()) {
      generators.emplace_back(p.generator(), p.unit());
    }
  }
  for (size_t k = 0; k < generators.size(); ++k) {
    const auto& [name, unit] = generators[k];
    LinePlot plot;
    plot.frame = {absl::StrCat("invariance-", k + 1), absl::StrCat("Invariance along ", name),
                  absl::StrCat(name, " (", unit, ")"), "relative mean |f(x) − f(g·x)|"};
    plot.y_from_zero = true;
    plot.integer_x = unit == "count" || unit == "power" || unit == "samples";
    plot.series.push_back(CurveSeries(r.certificate, name, r.model_name, false));
    if (!r.baseline_model.empty()) {
      plot.series.push_back(CurveSeries(r.baseline_certificate, name, "baseline", true));
    }
    absl::StrAppend(&s, DrawLines(plot), "\n");
  }
  if (generators.empty()) {
    absl::StrAppend(&s,
                    "<p class=\"note\">No curve: the certified group has no generator to "
                    "move along (the identity group).</p>\n");
  }
  return s + "</div></section>\n";
}

std::string Validation(const TrainReport& r) {
  std::string s = "<section id=\"validation\"><h2>Validation over λ</h2>\n";
  if (r.validation_curve.empty()) {
    return s + "<p class=\"note\">No validation curve: this run solved no λ grid.</p></section>\n";
  }
  LinePlot plot;
  plot.frame = {"validation-curve",
                absl::StrCat("Validation ", r.validation_metric, " over λ",
                             r.k_fold > 0 ? " (mean of the rounds' inner curves)" : ""),
                "λ (log scale)", r.validation_metric};
  plot.log_x = true;
  Series curve{r.validation_metric, {}, {}, false};
  for (const auto& [lambda, value] : r.validation_curve) {
    curve.x.push_back(lambda);
    curve.y.push_back(value);
  }
  plot.series.push_back(std::move(curve));
  plot.marker_x = r.lambda;
  plot.marker_label = absl::StrCat("chosen λ = ", PlotNumber(r.lambda));
  return absl::StrCat(s, DrawLines(plot), "\n</section>\n");
}

std::string Test(const TrainReport& r) {
  std::string s = "<section id=\"test\"><h2>Test rows</h2>\n";
  if (!r.confusion.empty()) {
    HeatMap map{{"confusion",
                 absl::StrCat("Confusion matrix on the ", r.test_rows, " test rows",
                              r.k_fold > 0 ? " (each in its round)" : ""),
                 "predicted class", "true class"},
                r.class_names,
                r.confusion};
    return absl::StrCat(s, DrawHeatMap(map), "\n</section>\n");
  }
  if (!r.test_predictions.empty()) {
    Scatter plot{
        {"residuals",
         absl::StrCat("Residuals of ", r.target_name, " (", r.test_predictions.size(), " of ",
                      r.test_rows, " test rows", r.k_fold > 0 ? ", each in its round)" : ")"),
         absl::StrCat("predicted ", r.target_name), "target − prediction"},
        {},
        "predicted",
        "residual"};
    for (const auto& [predicted, target] : r.test_predictions) {
      plot.points.emplace_back(predicted, target - predicted);
    }
    return absl::StrCat(s, DrawScatter(plot), "\n</section>\n");
  }
  return s + "<p class=\"note\">No test predictions: this model has no head.</p></section>\n";
}

std::string DataAndTiming(const TrainReport& r) {
  std::string s = "<section id=\"data-timing\"><h2>Data and timing</h2>\n<table>\n";
  absl::StrAppend(&s,
                  Row("rows train / validation / test",
                      absl::StrCat(r.train_rows, " / ", r.validation_rows, " / ", r.test_rows)),
                  Row("input_dim → feature_dim", absl::StrCat(r.input_dim, " → ", r.feature_dim)),
                  Row("featurize (feature map alone)",
                      absl::StrCat(r.featurized_rows, " rows in ", PlotNumber(r.featurize_seconds),
                                   " s, ", PlotNumber(r.featurize_rows_per_second), " rows/s")),
                  Row("accumulate ΦᵀΦ, ΦᵀY", absl::StrCat(r.accumulated_rows, " rows in ",
                                                          PlotNumber(r.accumulate_seconds), " s")),
                  Row("solver", r.solver.empty() ? "none" : r.solver));
  if (!r.cg_solves.empty()) {
    std::string cg;
    for (const ReportCgSolve& c : r.cg_solves) {
      absl::StrAppend(&cg, cg.empty() ? "" : "; ", "λ ", PlotNumber(c.lambda), ": ", c.iterations,
                      " iterations, residual ", PlotNumber(c.relative_residual));
    }
    absl::StrAppend(&s, Row("conjugate gradients", cg));
  }
  if (r.k_fold > 0) {
    absl::StrAppend(&s, Row("cross-validation",
                            absl::StrCat(r.k_fold, " folds; model written: ", r.written_model)));
  }
  s += "</table>\n<table><tr><th>stage</th><th>seconds</th><th></th></tr>\n";
  double longest = 0;
  for (const auto& [stage, sec] : r.stage_seconds) longest = std::max(longest, sec);
  for (const auto& [stage, sec] : r.stage_seconds) {
    const double width = longest > 0 ? 200 * sec / longest : 0;
    absl::StrAppend(&s, "<tr><td>", Esc(stage), "</td><td class=\"num\">", PlotNumber(sec),
                    "</td><td><span class=\"bar\" style=\"width:", absl::StrFormat("%.0f", width),
                    "px\"></span></td></tr>\n");
  }
  s += "</table>\n";
  if (!r.warnings.empty()) {
    s += "<h3>Warnings</h3><ul class=\"warnings\">\n";
    for (const std::string& w : r.warnings) absl::StrAppend(&s, "<li>", Esc(w), "</li>\n");
    s += "</ul>\n";
  }
  return s + "</section>\n";
}

}  // namespace

std::string ReportToHtml(const TrainReport& r) {
  const std::string title = absl::StrCat(r.model_name, " version ", r.version);
  std::string h = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      Esc(title), " · model page</title>\n<script>", kScript, "</script>\n<style>", kStyle,
      "</style>\n</head><body>\n<header><h1>", Esc(r.model_name), " <span>version ", r.version,
      "</span></h1>\n");
  if (!r.description.empty())
    absl::StrAppend(&h, "<p class=\"note\">", Esc(r.description), "</p>\n");
  absl::StrAppend(&h, "</header>\n", Summary(r), Invariance(r), "<div class=\"row\">",
                  Validation(r), Test(r), "</div>\n", DataAndTiming(r),
                  "<footer>Written by invariant-train beside report.json; self-contained (no "
                  "network, no other file).</footer>\n</body></html>\n");
  return h;
}

}  // namespace invariant::train
