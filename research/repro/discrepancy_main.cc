// invariant-repro-discrepancy: the invariance discrepancy of a trained model
// under a group given on the command line, whatever group it was trained with.
//
// invariant-train certifies a model against its own config's group, so the
// plain random Fourier baseline (trained with the identity "group") reports 0.
// The reproductions need every model measured against the same group, here
// rotations uniform in [0, 2π) on 28 × 28 images:
//   ID = max_{x, g} |f(x) − f(g·x)| over the first --points images of the
//   test part of the data in --config and --elements seeded rotations
// (train/pipeline/certificate.h CertifyPredictor), and the label agreement:
// the fraction of the same (x, g) pairs with argmax f(g·x) = argmax f(x)
// (its own --elements draws). With --fixed_angles_deg the rotations are the
// given angles instead (90° multiples move pixels exactly, without
// interpolation). Prints one line:
//   max_discrepancy mean_discrepancy relative_max_discrepancy label_agreement
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/groups/group_factory.h"
#include "core/model/model.h"
#include "core/rls/linear_model.h"
#include "google/protobuf/text_format.h"
#include "train/data/data_config.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/config.h"

ABSL_FLAG(std::string, bundle, "", "model.bundle to measure");
ABSL_FLAG(std::string, config, "", "training config whose data (test part) gives the points");
ABSL_FLAG(int64_t, points, 200, "test images measured");
ABSL_FLAG(int64_t, elements, 16, "rotations drawn uniformly in [0, 2π)");
ABSL_FLAG(uint64_t, seed, 17, "seed of the rotations");
ABSL_FLAG(std::string, fixed_angles_deg, "",
          "instead: these rotation angles in degrees, e.g. 90,180,270 (exact pixel moves)");

namespace invariant {
namespace {

using train::CertifyPredictor;
using train::DataParts;
using train::LoadTrainConfig;
using train::OpenDataConfig;
using train::RowSource;

// The same four numbers over fixed angles (|Δ| mean over every entry).
absl::Status RunFixed(const Model& model, const FloatMatrix& x) {
  const int64_t n = x.rows(), d = x.cols(), t = model.output_dim();
  FloatMatrix base = FloatMatrix::Zeros(n, t), moved = FloatMatrix::Zeros(n, d);
  FloatMatrix scores = FloatMatrix::Zeros(n, t);
  model.Predict(n, x.data(), base.mutable_data());
  const std::vector<int32_t> labels = ArgmaxRows(base);
  double worst = 0, sum = 0, scale = 0;
  int64_t same = 0, count = 0, rows = 0;
  for (int64_t i = 0; i < base.size(); ++i)
    scale = std::max(scale, std::fabs(double{base.data()[i]}));
  for (absl::string_view a : absl::StrSplit(absl::GetFlag(FLAGS_fixed_angles_deg), ',')) {
    v1::GroupSpec spec;
    auto* image = spec.mutable_image();
    image->set_height(28);
    image->set_width(28);
    image->set_channels(1);
    image->mutable_rotation()->mutable_fixed()->set_value(std::stod(std::string(a)) * M_PI / 180);
    ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec));
    Rng rng(1);
    q->action().Apply(q->Sample(1, rng)[0], n, x.data(), moved.mutable_data());
    model.Predict(n, moved.data(), scores.mutable_data());
    for (int64_t i = 0; i < scores.size(); ++i) {
      const double e = std::fabs(double{scores.data()[i]} - base.data()[i]);
      worst = std::max(worst, e);
      sum += e;
      ++count;
    }
    const std::vector<int32_t> l = ArgmaxRows(scores);
    for (int64_t i = 0; i < n; ++i)
      same += l[static_cast<size_t>(i)] == labels[static_cast<size_t>(i)];
    rows += n;
  }
  std::printf("%.6g %.6g %.6g %.6g\n", worst, sum / count, worst / scale,
              static_cast<double>(same) / static_cast<double>(rows));
  return absl::OkStatus();
}

absl::Status Run() {
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, Model::Load(absl::GetFlag(FLAGS_bundle)));
  ASSIGN_OR_RETURN(v1::TrainConfig config, LoadTrainConfig(absl::GetFlag(FLAGS_config)));
  ASSIGN_OR_RETURN(DataParts parts, OpenDataConfig(config.data()));
  RowSource& source = parts.test ? *parts.test : *parts.train;
  const int64_t n = absl::GetFlag(FLAGS_points), d = source.schema().dim;
  FloatMatrix x = FloatMatrix::Zeros(n, d);
  ASSIGN_OR_RETURN(int64_t got, source.Next(n, x.mutable_data(), nullptr, nullptr));
  if (got != n) return absl::InvalidArgumentError("fewer test rows than --points");
  if (!absl::GetFlag(FLAGS_fixed_angles_deg).empty()) return RunFixed(*model, x);
  v1::EncoderSpec spec;
  auto* image = spec.mutable_group()->mutable_image();
  image->set_height(28);
  image->set_width(28);
  image->set_channels(1);
  image->mutable_rotation()->mutable_uniform()->set_low(0);
  image->mutable_rotation()->mutable_uniform()->set_high(6.283185307179586);
  v1::CertificateConfig cc;
  cc.set_num_points(n);
  cc.set_num_group_elements(absl::GetFlag(FLAGS_elements));
  auto f = [&model](int64_t rows, const float* in, float* out) { model->Predict(rows, in, out); };
  ASSIGN_OR_RETURN(v1::InvarianceCertificate c, CertifyPredictor(f, model->output_dim(), spec, x,
                                                                 cc, absl::GetFlag(FLAGS_seed)));
  // Label agreement under the same kind of rotations.
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec.group()));
  Rng rng(absl::GetFlag(FLAGS_seed) + 1);
  const int64_t t = model->output_dim();
  FloatMatrix base = FloatMatrix::Zeros(n, t), moved = FloatMatrix::Zeros(n, d);
  FloatMatrix scores = FloatMatrix::Zeros(n, t);
  model->Predict(n, x.data(), base.mutable_data());
  const std::vector<int32_t> labels = ArgmaxRows(base);
  int64_t same = 0, total = 0;
  for (const GroupElement& g : q->Sample(absl::GetFlag(FLAGS_elements), rng)) {
    q->action().Apply(g, n, x.data(), moved.mutable_data());
    model->Predict(n, moved.data(), scores.mutable_data());
    const std::vector<int32_t> l = ArgmaxRows(scores);
    for (int64_t i = 0; i < n; ++i)
      same += l[static_cast<size_t>(i)] == labels[static_cast<size_t>(i)];
    total += n;
  }
  std::printf("%.6g %.6g %.6g %.6g\n", c.max_discrepancy(), c.mean_discrepancy(),
              c.relative_max_discrepancy(), static_cast<double>(same) / static_cast<double>(total));
  return absl::OkStatus();
}

}  // namespace
}  // namespace invariant

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = invariant::Run();
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
