#include "train/pipeline/report.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"

namespace invariant::train {
namespace {

// The project's one JSON number writer: shortest round-trip, null when not finite.
std::string Num(double v) { return JsonNumber(v); }

std::string Metrics(const std::map<std::string, double>& m) {
  std::string j = "{";
  for (const auto& [k, v] : m)
    absl::StrAppend(&j, j.size() > 1 ? ", " : "", JsonString(k), ": ", Num(v));
  return j + "}";
}

}  // namespace

std::string ReportToJson(const TrainReport& r) {
  std::string j = "{\n";
  absl::StrAppend(&j, "  \"model\": ", JsonString(r.model_name), ",\n");
  absl::StrAppend(&j, "  \"version\": ", r.version, ",\n");
  absl::StrAppend(&j, "  \"description\": ", JsonString(r.description), ",\n");
  absl::StrAppend(&j, "  \"encoder_kind\": ", JsonString(r.encoder_kind), ",\n");
  absl::StrAppend(&j, "  \"group\": ", JsonString(r.group), ",\n");
  absl::StrAppend(&j, "  \"input_dim\": ", r.input_dim, ",\n");
  absl::StrAppend(&j, "  \"feature_dim\": ", r.feature_dim, ",\n");
  absl::StrAppend(&j, "  \"rows\": {\"train\": ", r.train_rows,
                  ", \"validation\": ", r.validation_rows, ", \"test\": ", r.test_rows, "},\n");
  absl::StrAppend(&j, "  \"task\": ", JsonString(r.task), ",\n");
  absl::StrAppend(&j, "  \"lambda\": ", Num(r.lambda), ",\n");
  absl::StrAppend(&j, "  \"validation_metric\": ", JsonString(r.validation_metric), ",\n");
  j += "  \"validation_curve\": [";
  for (size_t i = 0; i < r.validation_curve.size(); ++i) {
    absl::StrAppend(&j, i ? ", " : "", "{\"lambda\": ", Num(r.validation_curve[i].first),
                    ", \"value\": ", Num(r.validation_curve[i].second), "}");
  }
  j += "],\n  \"test\": {";
  bool first = true;
  for (const auto& [k, v] : r.test_metrics) {
    absl::StrAppend(&j, first ? "" : ", ", JsonString(k), ": ", Num(v));
    first = false;
  }
  j += "},\n";
  const auto& c = r.certificate;
  absl::StrAppend(&j, "  \"invariance\": {\"max_discrepancy\": ", Num(c.max_discrepancy()),
                  ", \"mean_discrepancy\": ", Num(c.mean_discrepancy()),
                  ", \"relative_mean_discrepancy\": ", Num(c.relative_mean_discrepancy()),
                  ", \"relative_max_discrepancy\": ", Num(c.relative_max_discrepancy()),
                  ", \"num_points\": ", c.num_points(),
                  ", \"num_group_elements\": ", c.num_group_elements(),
                  ", \"exhaustive\": ", c.exhaustive() ? "true" : "false",
                  ", \"method\": ", JsonString(c.method()),
                  ", \"generator_residual\": ", Num(c.generator_residual()), "},\n");
  j += "  \"seconds\": {";
  for (size_t i = 0; i < r.stage_seconds.size(); ++i) {
    absl::StrAppend(&j, i ? ", " : "", JsonString(r.stage_seconds[i].first), ": ",
                    Num(r.stage_seconds[i].second));
  }
  absl::StrAppend(&j, "},\n  \"featurized_rows\": ", r.featurized_rows,
                  ",\n  \"featurize_rows_per_second\": ", Num(r.featurize_rows_per_second),
                  ",\n  \"warnings\": [");
  for (size_t i = 0; i < r.warnings.size(); ++i) {
    absl::StrAppend(&j, i ? ", " : "", JsonString(r.warnings[i]));
  }
  j += "],\n";
  absl::StrAppend(&j, "  \"solver\": {\"kind\": ", JsonString(r.solver), ", \"cg\": [");
  for (size_t i = 0; i < r.cg_solves.size(); ++i) {
    absl::StrAppend(&j, i ? ", " : "", "{\"lambda\": ", Num(r.cg_solves[i].lambda),
                    ", \"iterations\": ", r.cg_solves[i].iterations,
                    ", \"relative_residual\": ", Num(r.cg_solves[i].relative_residual), "}");
  }
  j += "]}";
  if (r.k_fold > 0) {
    absl::StrAppend(&j, ",\n  \"cross_validation\": {\"k\": ", r.k_fold, ", \"folds\": [");
    for (size_t i = 0; i < r.folds.size(); ++i) {
      const ReportFold& f = r.folds[i];
      absl::StrAppend(&j, i ? ", " : "", "{\"train_rows\": ", f.train_rows,
                      ", \"validation_rows\": ", f.validation_rows,
                      ", \"test_rows\": ", f.test_rows, ", \"lambda\": ", Num(f.lambda),
                      ", \"test\": ", Metrics(f.test_metrics), "}");
    }
    absl::StrAppend(&j, "], \"mean\": ", Metrics(r.test_metrics),
                    ", \"std\": ", Metrics(r.test_metrics_std),
                    ", \"written\": ", JsonString(r.written_model), "}");
  }
  j += "\n}\n";
  return j;
}

std::string ReportToMarkdown(const TrainReport& r) {
  std::string m = absl::StrCat("# ", r.model_name, " version ", r.version, "\n\n");
  if (!r.description.empty()) absl::StrAppend(&m, r.description, "\n\n");
  for (const std::string& w : r.warnings) absl::StrAppend(&m, "**Warning:** ", w, "\n\n");
  absl::StrAppend(&m, "| | |\n|---|---|\n");
  absl::StrAppend(&m, "| encoder | ", r.encoder_kind, " |\n| group | ", r.group, " |\n");
  absl::StrAppend(&m, "| input → features | ", r.input_dim, " → ", r.feature_dim, " |\n");
  absl::StrAppend(&m, "| rows train / validation / test | ", r.train_rows, " / ", r.validation_rows,
                  " / ", r.test_rows, " |\n");
  absl::StrAppend(&m, "| task | ", r.task, " |\n| λ chosen | ", Num(r.lambda), " |\n");
  for (const auto& [k, v] : r.test_metrics) {
    if (r.k_fold > 0) {
      absl::StrAppend(&m, "| test ", k, " (mean ± std over ", r.k_fold, " folds) | ", Num(v), " ± ",
                      Num(r.test_metrics_std.count(k) ? r.test_metrics_std.at(k) : 0), " |\n");
    } else {
      absl::StrAppend(&m, "| test ", k, " | ", Num(v), " |\n");
    }
  }
  if (!r.solver.empty()) absl::StrAppend(&m, "| solver | ", r.solver, " |\n");
  if (r.k_fold > 0) absl::StrAppend(&m, "| model written | ", r.written_model, " |\n");
  const auto& c = r.certificate;
  absl::StrAppend(&m, "| invariance max / mean discrepancy | ", Num(c.max_discrepancy()), " / ",
                  Num(c.mean_discrepancy()), " (", c.num_points(), " points × ",
                  c.num_group_elements(), " elements, ", c.method(), ") |\n");
  absl::StrAppend(&m, "| invariance relative mean discrepancy | ",
                  Num(c.relative_mean_discrepancy()), " |\n");
  absl::StrAppend(&m, "| featurize rows/s (", r.featurized_rows, " rows) | ",
                  Num(r.featurize_rows_per_second), " |\n");
  if (!r.validation_curve.empty()) {
    absl::StrAppend(&m, "\n## Validation (", r.validation_metric,
                    ")\n\n| λ | value |\n|---|---|\n");
    for (const auto& [lam, v] : r.validation_curve) {
      absl::StrAppend(&m, "| ", Num(lam), " | ", Num(v), " |\n");
    }
  }
  if (r.k_fold > 0) {
    absl::StrAppend(&m, "\n## Cross-validation (", r.k_fold,
                    " folds)\n\n| fold | train / validation / test rows | λ | test |\n"
                    "|---|---|---|---|\n");
    for (size_t i = 0; i < r.folds.size(); ++i) {
      const ReportFold& f = r.folds[i];
      std::string metrics;
      for (const auto& [k, v] : f.test_metrics) {
        absl::StrAppend(&metrics, metrics.empty() ? "" : ", ", k, " ", Num(v));
      }
      absl::StrAppend(&m, "| ", i + 1, " | ", f.train_rows, " / ", f.validation_rows, " / ",
                      f.test_rows, " | ", Num(f.lambda), " | ", metrics, " |\n");
    }
  }
  if (!r.cg_solves.empty()) {
    absl::StrAppend(&m,
                    "\n## Conjugate gradients\n\n| λ | iterations | relative residual |\n"
                    "|---|---|---|\n");
    for (const ReportCgSolve& c : r.cg_solves) {
      absl::StrAppend(&m, "| ", Num(c.lambda), " | ", c.iterations, " | ", Num(c.relative_residual),
                      " |\n");
    }
  }
  absl::StrAppend(&m, "\n## Seconds per stage\n\n| stage | s |\n|---|---|\n");
  for (const auto& [k, v] : r.stage_seconds) absl::StrAppend(&m, "| ", k, " | ", Num(v), " |\n");
  return m;
}

}  // namespace invariant::train
