// The model page (report.html): every plot's SVG with one element per datum,
// escaped names, no external reference, and the page a real run writes.
#include "train/pipeline/report_html.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/clip_certificate.h"
#include "train/pipeline/svg_plot.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadText;
using testing::RunOptions;
using testing::TempDir;

// Occurrences of `needle` in `text`.
int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The <svg …>…</svg> element with id `id` (empty when there is none).
std::string Svg(const std::string& html, const std::string& id) {
  const size_t at = html.find(absl::StrCat("<svg class=\"plot\" id=\"", id, "\""));
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</svg>", at) + 6 - at);
}

void AddCurve(v1::InvarianceCertificate& c, const std::string& generator, int sizes, double slope) {
  for (int i = 0; i < sizes; ++i) {
    v1::InvarianceCurvePoint& p = *c.add_curve();
    p.set_generator(generator);
    p.set_unit("degrees");
    p.set_magnitude(i * 2.5);
    p.set_relative_mean_discrepancy(slope * i);
  }
}

// A classification run's report: 3 classes, one named `<&"`, 5 λ, a curve
// along two generators and a baseline.
TrainReport Classification() {
  TrainReport r;
  r.model_name = "digits<b>";
  r.version = 3;
  r.description = "a <script>alert(1)</script> & more";
  r.task = "classification";
  r.validation_metric = "accuracy";
  for (double lambda : {1e-4, 1e-3, 1e-2, 1e-1, 1.0}) {
    r.validation_curve.emplace_back(lambda, 0.9 - std::fabs(std::log10(lambda) + 2) * 0.01);
  }
  r.lambda = 1e-2;
  r.test_metrics["accuracy"] = 0.9;
  r.class_names = {"zero", "<&\"", "two"};
  r.confusion = {{5, 1, 0}, {0, 7, 2}, {1, 0, 9}};
  r.test_rows = 25;
  AddCurve(r.certificate, "rotation", 9, 0.01);
  AddCurve(r.certificate, "translation_x", 5, 0.02);
  r.baseline_model = "models/plain/1";
  AddCurve(r.baseline_certificate, "rotation", 9, 0.1);
  AddCurve(r.baseline_certificate, "translation_x", 5, 0.2);
  r.stage_seconds = {{"data", 0.5}, {"solve", 1.5}};
  r.warnings = {"lambda <chosen> at the end"};
  return r;
}

TEST(ReportHtmlTest, EveryPlotHasOneElementPerDatum) {
  const std::string html = ReportToHtml(Classification());
  EXPECT_EQ(Count(html, "<svg class=\"plot\""), 4);  // 2 generators, λ, confusion
  const std::string rotation = Svg(html, "invariance-1");
  EXPECT_EQ(Count(rotation, "<circle class=\"point\""), 9 + 9);  // model and baseline
  EXPECT_EQ(Count(rotation, "<polyline class=\"series\""), 2);
  EXPECT_THAT(rotation, HasSubstr("stroke-dasharray=\"6 4\""));  // the baseline, dashed
  EXPECT_THAT(rotation, HasSubstr("rotation (degrees)"));
  EXPECT_EQ(Count(Svg(html, "invariance-2"), "<circle class=\"point\""), 5 + 5);
  const std::string validation = Svg(html, "validation-curve");
  EXPECT_EQ(Count(validation, "<circle class=\"point\""), 5);  // one per λ
  EXPECT_EQ(Count(validation, "<line class=\"marker\""), 1);   // the chosen λ
  EXPECT_THAT(validation, HasSubstr("chosen λ = 0.01"));
  const std::string confusion = Svg(html, "confusion");
  EXPECT_EQ(Count(confusion, "<rect class=\"cell\""), 9);  // one per entry
  EXPECT_THAT(confusion, HasSubstr("predicted two: 2 of 9"));
  EXPECT_EQ(Svg(html, "residuals"), "");
  for (const char* section : {"summary", "invariance", "validation", "test", "data-timing"}) {
    EXPECT_THAT(html, HasSubstr(absl::StrCat("<section id=\"", section, "\">")));
  }
}

TEST(ReportHtmlTest, AClipCertificateSaysItsPointsAreChangedClips) {
  TrainReport r = Classification();
  r.certificate.set_num_points(100);
  EXPECT_THAT(ReportToHtml(r), HasSubstr("over 100 held-out points"));
  r.certificate.set_method(absl::StrCat(100, kClipCertificateMethod, "16 elements drawn"));
  const std::string html = ReportToHtml(r);
  EXPECT_THAT(html, HasSubstr("over 100 held-out clips, changed as recordings and sent through "
                              "the model's front end"));
  EXPECT_THAT(html, Not(HasSubstr("held-out points")));
}

TEST(ReportHtmlTest, NamesAreEscaped) {
  const std::string html = ReportToHtml(Classification());
  EXPECT_THAT(html, Not(HasSubstr("<&\"")));
  EXPECT_THAT(html, HasSubstr("&lt;&amp;&quot;"));
  EXPECT_THAT(html, Not(HasSubstr("digits<b>")));
  EXPECT_THAT(html, HasSubstr("digits&lt;b&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("lambda &lt;chosen&gt; at the end"));
  EXPECT_EQ(Count(html, "<script>"), 1);  // the page's own
}

TEST(ReportHtmlTest, NothingIsFetched) {
  const std::string html = ReportToHtml(Classification());
  for (const char* ref : {"http:", "https:", "src=", "href=", "url(", "@import", "//cdn"}) {
    EXPECT_THAT(html, Not(HasSubstr(ref))) << ref;
  }
}

TEST(ReportHtmlTest, RegressionDrawsResidualsAndEmptyPlotsSayWhy) {
  TrainReport r;
  r.model_name = "energy";
  r.task = "regression";
  r.test_rows = 37;
  r.target_name = "E";
  for (int i = 0; i < 37; ++i) r.test_predictions.emplace_back(i * 0.5, i * 0.5 + (i % 3 - 1));
  r.test_predictions.emplace_back(std::numeric_limits<double>::quiet_NaN(), 1.0);  // left out
  const std::string html = ReportToHtml(r);
  const std::string residuals = Svg(html, "residuals");
  EXPECT_EQ(Count(residuals, "<circle class=\"point\""), 37);
  EXPECT_THAT(residuals, HasSubstr("target − prediction"));
  EXPECT_EQ(Svg(html, "confusion"), "");
  // No curve (identity group), no λ grid.
  EXPECT_EQ(Count(html, "<svg class=\"plot\""), 1);
  EXPECT_THAT(html, HasSubstr("the identity group"));
  EXPECT_THAT(html, HasSubstr("solved no λ grid"));
}

TEST(SvgPlotTest, LogAxesLeaveOutNonPositiveAndNonFiniteValues) {
  LinePlot plot;
  plot.frame.id = "p";
  plot.log_x = true;
  plot.series.push_back({"s", {0.0, 1e-3, 1e-2, 1.0}, {1, 2, std::nan(""), 4}, false});
  const std::string svg = DrawLines(plot);
  EXPECT_EQ(Count(svg, "<circle class=\"point\""), 2);  // x = 0 and y = NaN left out
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
  EXPECT_THAT(svg, Not(HasSubstr("inf")));
}

TEST(ReportHtmlTest, ARunWritesTheModelPageBesideItsReport) {
  TempDir dir;
  auto out = RunTraining(RunOptions(dir, testing::kXpermConfig, "xperm"));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string html = ReportToHtml(TrainReport());  // a page of nothing still renders
  EXPECT_THAT(html, HasSubstr("</html>"));
  const std::string page = ReadText(*out + "/report.html");
  // Xperm: the transpositions of its 5 blocks (0 … 4), the λ grid, 2 classes.
  EXPECT_EQ(Count(Svg(page, "invariance-1"), "<circle class=\"point\""), 5);
  EXPECT_EQ(Count(Svg(page, "validation-curve"), "<circle class=\"point\""), 3);
  EXPECT_EQ(Count(Svg(page, "confusion"), "<rect class=\"cell\""), 4);
  const std::string json = ReadText(*out + "/report.json");
  EXPECT_THAT(json, HasSubstr("\"curve\": [{\"generator\": \"transpositions\""));
  EXPECT_THAT(json, HasSubstr("\"confusion\": {\"class_names\": ["));
}

}  // namespace
}  // namespace invariant::train
