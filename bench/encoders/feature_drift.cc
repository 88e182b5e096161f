// invariant-feature-drift: how far two models' features are apart on the
// test rows of a training config (e.g. a float32 bank against its bf16
// twin, or the template against the input placement).
//
//   invariant-feature-drift --config=CFG.textproto --a=A/model.bundle --b=B/model.bundle
//
// Reads the config's test split (train/pipeline/data_plan.h), featurizes it
// with both models and prints, with a = features of --a and b of --b:
//   row-relative L2     ‖a_i − b_i‖ / ‖a_i‖, max and mean over rows
//   element |Δ| / max|a| max_ij |a_ij − b_ij| and mean_ij |a_ij − b_ij|,
//                       both divided by max_ij |a_ij|
// and, when both models have a head, the test accuracy of each.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/model/model.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"

ABSL_FLAG(std::string, config, "", "Training config whose test split is used.");
ABSL_FLAG(std::string, a, "", "Reference model bundle.");
ABSL_FLAG(std::string, b, "", "Compared model bundle.");

namespace invariant {
namespace {

double Accuracy(const Model& m, const train::Dataset& test) {
  const int64_t n = test.rows(), t = m.output_dim();
  std::vector<float> scores(static_cast<size_t>(n * t));
  m.Predict(n, test.x.data(), scores.data());
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* s = scores.data() + i * t;
    correct += std::max_element(s, s + t) - s == test.labels[static_cast<size_t>(i)];
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

int Run() {
  auto config = train::LoadTrainConfig(absl::GetFlag(FLAGS_config));
  auto a = Model::Load(absl::GetFlag(FLAGS_a));
  auto b = Model::Load(absl::GetFlag(FLAGS_b));
  if (!config.ok() || !a.ok() || !b.ok()) {
    std::fprintf(stderr, "%s\n%s\n%s\n", config.status().ToString().c_str(),
                 a.status().ToString().c_str(), b.status().ToString().c_str());
    return 1;
  }
  if ((*a)->feature_dim() != (*b)->feature_dim() || (*a)->input_dim() != (*b)->input_dim()) {
    std::fprintf(stderr, "the models have different shapes\n");
    return 1;
  }
  auto plan = train::PlanData(*config);
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", plan.status().ToString().c_str());
    return 1;
  }
  const train::Dataset& test = plan->test;
  const int64_t n = test.rows(), f = (*a)->feature_dim();
  std::vector<float> fa(static_cast<size_t>(n * f)), fb(fa.size());
  (*a)->Featurize(n, test.x.data(), fa.data());
  (*b)->Featurize(n, test.x.data(), fb.data());
  double row_max = 0, row_sum = 0, max_abs = 0, diff_max = 0, diff_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < f; ++j) {
      const double x = fa[static_cast<size_t>(i * f + j)], y = fb[static_cast<size_t>(i * f + j)];
      num += (x - y) * (x - y);
      den += x * x;
      max_abs = std::max(max_abs, std::fabs(x));
      diff_max = std::max(diff_max, std::fabs(x - y));
      diff_sum += std::fabs(x - y);
    }
    const double rel = den > 0 ? std::sqrt(num / den) : 0.0;
    row_max = std::max(row_max, rel);
    row_sum += rel;
  }
  std::printf("test rows: %lld, features: %lld\n", static_cast<long long>(n),
              static_cast<long long>(f));
  std::printf("row-relative L2: max %.3e mean %.3e\n", row_max, row_sum / n);
  std::printf("element |delta| / max|a|: max %.3e mean %.3e\n", diff_max / max_abs,
              diff_sum / (static_cast<double>(n) * f) / max_abs);
  if ((*a)->has_head() && (*b)->has_head() && test.has_labels()) {
    std::printf("test accuracy: a %.4f b %.4f\n", Accuracy(**a, test), Accuracy(**b, test));
  }
  return 0;
}

}  // namespace
}  // namespace invariant

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return invariant::Run();
}
