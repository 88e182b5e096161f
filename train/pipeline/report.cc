#include "train/pipeline/report.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "train/pipeline/fold_metrics.h"

namespace invariant::train {
namespace {

// The project's one JSON number writer: shortest round-trip, null when not finite.
std::string Num(double v) { return JsonNumber(v); }

std::string Ints(const std::vector<int64_t>& v) {
  std::string j = "[";
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(&j, i ? ", " : "", v[i]);
  return j + "]";
}

// What the k-fold std is.
constexpr char kStdKind[] = "sample standard deviation over the folds (K - 1 in the denominator)";

std::string Metrics(const std::map<std::string, double>& m) {
  std::string j = "{";
  for (const auto& [k, v] : m)
    absl::StrAppend(&j, j.size() > 1 ? ", " : "", JsonString(k), ": ", Num(v));
  return j + "}";
}

std::string Curve(const v1::InvarianceCertificate& c) {
  std::string j = "[";
  for (int i = 0; i < c.curve_size(); ++i) {
    const v1::InvarianceCurvePoint& p = c.curve(i);
    absl::StrAppend(&j, i ? ", " : "", "{\"generator\": ", JsonString(p.generator()),
                    ", \"unit\": ", JsonString(p.unit()), ", \"size\": ", Num(p.magnitude()),
                    ", \"mean_discrepancy\": ", Num(p.mean_discrepancy()),
                    ", \"relative_mean_discrepancy\": ", Num(p.relative_mean_discrepancy()), "}");
  }
  return j + "]";
}

// The figures of a certificate, with its curve.
std::string Certificate(const v1::InvarianceCertificate& c) {
  return absl::StrCat(
      "{\"max_discrepancy\": ", Num(c.max_discrepancy()),
      ", \"mean_discrepancy\": ", Num(c.mean_discrepancy()),
      ", \"relative_mean_discrepancy\": ", Num(c.relative_mean_discrepancy()),
      ", \"relative_max_discrepancy\": ", Num(c.relative_max_discrepancy()),
      ", \"num_points\": ", c.num_points(), ", \"num_group_elements\": ", c.num_group_elements(),
      ", \"exhaustive\": ", c.exhaustive() ? "true" : "false",
      ", \"method\": ", JsonString(c.method()),
      ", \"generator_residual\": ", Num(c.generator_residual()), ", \"curve\": ", Curve(c), "}");
}

}  // namespace

void RecordConfusion(const std::vector<int32_t>& predicted, const std::vector<int32_t>& labels,
                     const std::vector<std::string>& class_names, TrainReport& r) {
  const size_t c = class_names.size();
  r.class_names = class_names;
  r.confusion.assign(c, std::vector<int64_t>(c, 0));
  for (size_t i = 0; i < std::min(predicted.size(), labels.size()); ++i) {
    const auto t = static_cast<size_t>(labels[i]), p = static_cast<size_t>(predicted[i]);
    if (t < c && p < c) ++r.confusion[t][p];
  }
}

void RecordPredictions(int64_t n, const float* predictions, const float* targets, int64_t cols,
                       const std::vector<std::string>& target_names, TrainReport& r) {
  r.target_name = target_names.empty() ? "y0" : target_names.front();
  r.test_predictions.clear();
  const int64_t kept = std::min(n, kMaxReportedPredictions);
  for (int64_t k = 0; k < kept; ++k) {
    const int64_t i = k * n / kept;  // evenly over the rows, in order
    r.test_predictions.emplace_back(predictions[i * cols], targets[i * cols]);
  }
}

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
                  r.augmented_train_rows > 0
                      ? absl::StrCat(", \"augmented_train\": ", r.augmented_train_rows)
                      : "",
                  ", \"validation\": ", r.validation_rows, ", \"test\": ", r.test_rows, "},\n");
  if (r.k_fold > 0) {
    absl::StrAppend(&j,
                    "  \"rows_meaning\": \"k-fold: train = the written model's rows (all); "
                    "validation happens inside each round (cross_validation.folds[]."
                    "inner_validation_rows); test = every ",
                    r.augmented_train_rows > 0 ? "original " : "",
                    "row, tested once by the round that holds it out",
                    r.augmented_train_rows > 0
                        ? "; augmented_train = the augmented copies among train, never tested"
                        : "",
                    "\",\n");
  }
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
  absl::StrAppend(&j, "  \"invariance\": ", Certificate(r.certificate), ",\n");
  if (!r.baseline_model.empty()) {
    absl::StrAppend(&j, "  \"baseline\": {\"model\": ", JsonString(r.baseline_model),
                    ", \"invariance\": ", Certificate(r.baseline_certificate), "},\n");
  }
  if (!r.confusion.empty()) {
    j += "  \"confusion\": {\"class_names\": [";
    for (size_t i = 0; i < r.class_names.size(); ++i) {
      absl::StrAppend(&j, i ? ", " : "", JsonString(r.class_names[i]));
    }
    j += "], \"counts\": [";
    for (size_t i = 0; i < r.confusion.size(); ++i)
      absl::StrAppend(&j, i ? ", " : "", Ints(r.confusion[i]));
    j += "]},\n";
  }
  j += "  \"seconds\": {";
  for (size_t i = 0; i < r.stage_seconds.size(); ++i) {
    absl::StrAppend(&j, i ? ", " : "", JsonString(r.stage_seconds[i].first), ": ",
                    Num(r.stage_seconds[i].second));
  }
  absl::StrAppend(&j, "},\n  \"featurized_rows\": ", r.featurized_rows,
                  ",\n  \"featurize_seconds\": ", Num(r.featurize_seconds),
                  ",\n  \"featurize_rows_per_second\": ", Num(r.featurize_rows_per_second),
                  ",\n  \"accumulate\": {\"rows\": ", r.accumulated_rows,
                  ", \"seconds\": ", Num(r.accumulate_seconds), "}", ",\n  \"warnings\": [");
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
    absl::StrAppend(&j, ",\n  \"cross_validation\": {\"k\": ", r.k_fold,
                    ", \"stratified\": ", r.stratified ? "true" : "false",
                    ", \"leave_one_group_out\": ", r.fold_groups.empty() ? "false" : "true",
                    ", \"protocol\": \"each round: lambda by inner cross-validation of its K-1 "
                    "training folds, refit on all K-1 folds, test on its fold\", \"folds\": [");
    for (size_t i = 0; i < r.folds.size(); ++i) {
      const ReportFold& f = r.folds[i];
      absl::StrAppend(&j, i ? ", " : "", "{");
      if (!f.group.empty()) absl::StrAppend(&j, "\"group\": ", JsonString(f.group), ", ");
      absl::StrAppend(&j, "\"train_rows\": ", f.train_rows,
                      ", \"inner_train_rows\": ", Ints(f.inner_train_rows),
                      ", \"inner_validation_rows\": ", Ints(f.inner_validation_rows),
                      ", \"test_rows\": ", f.test_rows, ", \"lambda\": ", Num(f.lambda),
                      ", \"test\": ", Metrics(f.test_metrics), "}");
    }
    absl::StrAppend(
        &j, "], \"mean\": ", Metrics(r.test_metrics), ", \"std\": ", Metrics(r.test_metrics_std),
        ", \"std_kind\": \"", kStdKind, "\", \"pooled\": ", Metrics(r.test_metrics_pooled),
        ", \"pooled_rows\": ", r.pooled_rows, ", \"written\": ", JsonString(r.written_model), "}");
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
      absl::StrAppend(&m, "| test ", k, " (mean ± std over ", r.k_fold, " folds; ", kStdKind,
                      ") | ", Num(v), " ± ",
                      Num(r.test_metrics_std.count(k) ? r.test_metrics_std.at(k) : 0), " |\n");
      absl::StrAppend(&m, "| test ", k, " pooled over all ", r.pooled_rows, " test rows | ",
                      Num(r.test_metrics_pooled.count(k) ? r.test_metrics_pooled.at(k) : 0),
                      " |\n");
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
  absl::StrAppend(&m, "| featurize (feature map alone): rows, s, rows/s | ", r.featurized_rows,
                  ", ", Num(r.featurize_seconds), ", ", Num(r.featurize_rows_per_second), " |\n");
  absl::StrAppend(&m, "| accumulate ΦᵀΦ, ΦᵀY: rows, s | ", r.accumulated_rows, ", ",
                  Num(r.accumulate_seconds), " |\n");
  if (!r.validation_curve.empty()) {
    absl::StrAppend(&m, "\n## Validation (", r.validation_metric,
                    ")\n\n| λ | value |\n|---|---|\n");
    for (const auto& [lam, v] : r.validation_curve) {
      absl::StrAppend(&m, "| ", Num(lam), " | ", Num(v), " |\n");
    }
  }
  if (r.k_fold > 0) {
    absl::StrAppend(&m, "\n## Cross-validation (", r.k_fold, " folds",
                    !r.fold_groups.empty() ? ", one per group: leave one group out"
                    : r.stratified         ? ", stratified by the target"
                                           : ", random",
                    ")\n\nEach round chooses λ by an inner cross-validation of its ", r.k_fold - 1,
                    " training folds (train on ", r.k_fold - 2,
                    ", validate on the one left, each in turn), refits on all ", r.k_fold - 1,
                    " at that λ and tests the refit on its own fold.\n\n"
                    "| round | refit train rows | inner validation rows | test rows | λ | test |\n"
                    "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r.folds.size(); ++i) {
      const ReportFold& f = r.folds[i];
      std::string metrics, inner;
      for (const auto& [k, v] : f.test_metrics) {
        absl::StrAppend(&metrics, metrics.empty() ? "" : ", ", k, " ", Num(v));
      }
      for (int64_t v : f.inner_validation_rows)
        absl::StrAppend(&inner, inner.empty() ? "" : " / ", v);
      absl::StrAppend(&m, "| ", i + 1, f.group.empty() ? "" : absl::StrCat(" (", f.group, ")"),
                      " | ", f.train_rows, " | ", inner, " | ", f.test_rows, " | ", Num(f.lambda),
                      " | ", metrics, " |\n");
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

std::string CrossValidationConsole(const TrainReport& r) {
  const int k = r.k_fold;
  std::string out = absl::StrCat(
      "cross-validation: ", k, " folds (",
      !r.fold_groups.empty() ? "one per group: leave one group out"
      : r.stratified         ? "stratified"
                             : "random",
      "); each round chooses lambda by an inner ", k - 1, "-fold cross-validation of its ", k - 1,
      " training folds, refits on all ", k - 1, " and tests on its own fold\n");
  for (size_t i = 0; i < r.folds.size(); ++i) {
    const ReportFold& f = r.folds[i];
    std::string inner, metrics;
    for (int64_t v : f.inner_validation_rows) absl::StrAppend(&inner, inner.empty() ? "" : "/", v);
    for (const auto& [name, v] : f.test_metrics) {
      absl::StrAppend(&metrics, " ", name, "=", absl::SixDigits(v));
    }
    absl::StrAppend(&out, "  round ", i + 1,
                    f.group.empty() ? "" : absl::StrCat(" (group ", f.group, " held out)"),
                    ": refit on ", f.train_rows, " train rows (inner validation rows ", inner,
                    "), lambda ", absl::SixDigits(f.lambda), ", test", metrics, " on ", f.test_rows,
                    " rows\n");
  }
  for (const auto& [name, mean] : r.test_metrics) {
    absl::StrAppend(&out, "  test ", name, ": mean ", absl::SixDigits(mean), " +- ",
                    absl::SixDigits(MetricOrZero(r.test_metrics_std, name)), " (sample std over ",
                    k, " folds, K-1), pooled ",
                    absl::SixDigits(MetricOrZero(r.test_metrics_pooled, name)), " over all ",
                    r.pooled_rows, " test rows\n");
  }
  absl::StrAppend(&out, "written model: ", r.written_model, "\n");
  return out;
}

}  // namespace invariant::train
