#include "research/repro/xperm_experiment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "Eigen/Eigenvalues"
#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/cdf_encoder.h"
#include "core/encoders/haar_kernel.h"
#include "core/encoders/template_bank.h"
#include "core/encoders/templates.h"
#include "core/groups/group_factory.h"
#include "core/rls/kernel_rls.h"
#include "core/rls/lambda_selection.h"
#include "core/rls/metrics.h"
#include "core/rls/ridge.h"
#include "invariant/v1/group.pb.h"
#include "train/data/splits.h"
#include "train/data/xperm.h"

namespace invariant {
namespace {

using train::Complement;
using train::Dataset;
using train::kXpermAlphabet;
using train::kXpermDim;
using train::kXpermLength;
using train::MakeXperm;
using train::SamplePerClass;
using train::ShuffleInPlace;
using train::XpermBagOfWords;
using train::XpermOptions;

// Symbol counts of a one-hot row → a base-6 key (counts 0..5 over 8 symbols).
int64_t MultisetKey(const float* row) {
  int64_t key = 0;
  for (int c = 0; c < kXpermAlphabet; ++c) {
    int count = 0;
    for (int p = 0; p < kXpermLength; ++p) count += row[p * kXpermAlphabet + c] > 0.5f ? 1 : 0;
    key = key * 6 + count;
  }
  return key;
}

// The rank of every multiset key, built once (792 keys).
const std::map<int64_t, int32_t>& OrbitRanks() {
  static const auto* ranks = [] {
    auto* m = new std::map<int64_t, int32_t>();
    Dataset all = MakeXperm({});
    for (int64_t i = 0; i < all.rows(); ++i) m->emplace(MultisetKey(all.x.row(i)), 0);
    int32_t next = 0;
    for (auto& kv : *m) kv.second = next++;
    return m;
  }();
  return *ranks;
}

FloatMatrix GatherRows(const FloatMatrix& m, const std::vector<int64_t>& rows) {
  FloatMatrix out = FloatMatrix::Zeros(static_cast<int64_t>(rows.size()), m.cols());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy(m.row(rows[i]), m.row(rows[i]) + m.cols(), out.mutable_row(static_cast<int64_t>(i)));
  }
  return out;
}

std::vector<int32_t> GatherLabels(const std::vector<int32_t>& labels,
                                  const std::vector<int64_t>& rows) {
  std::vector<int32_t> out;
  out.reserve(rows.size());
  for (int64_t r : rows) out.push_back(labels[static_cast<size_t>(r)]);
  return out;
}

}  // namespace

int32_t OrbitOfRow(const float* row) { return OrbitRanks().at(MultisetKey(row)); }

absl::StatusOr<XpermData> LoadXperm(uint64_t target_seed) {
  XpermData data;
  XpermOptions options;
  options.seed = target_seed;
  Dataset ds = MakeXperm(options);
  data.x = ds.x;
  data.labels = ds.labels;
  data.orbit.resize(static_cast<size_t>(ds.rows()));
  data.orbit_representative.assign(OrbitRanks().size(), -1);
  for (int64_t i = 0; i < ds.rows(); ++i) {
    const int32_t o = OrbitOfRow(ds.x.row(i));
    data.orbit[static_cast<size_t>(i)] = o;
    if (data.orbit_representative[static_cast<size_t>(o)] < 0) {
      data.orbit_representative[static_cast<size_t>(o)] = i;
    }
  }
  v1::GroupSpec spec;
  spec.mutable_block_permutation()->set_num_blocks(kXpermLength);
  spec.mutable_block_permutation()->set_block_size(kXpermAlphabet);
  ASSIGN_OR_RETURN(data.group, MakeGroupDistribution(spec));
  data.elements = data.group->Enumerate();
  return data;
}

Featurizer RawFeaturizer() {
  return [](const FloatMatrix& rows) { return rows; };
}

Featurizer BagOfWordsFeaturizer() {
  return [](const FloatMatrix& rows) {
    FloatMatrix out = FloatMatrix::Zeros(rows.rows(), kXpermAlphabet);
    XpermBagOfWords(rows.rows(), rows.data(), out.mutable_data());
    return out;
  };
}

absl::StatusOr<Featurizer> CdfFeaturizer(const XpermData& data, const CdfSpec& spec) {
  Rng template_rng = Rng::ForStream(spec.seed, 1);
  ASSIGN_OR_RETURN(FloatMatrix templates,
                   SampleStandardNormalTemplates(spec.templates, kXpermDim, template_rng));
  std::vector<GroupElement> elements = data.elements;
  if (spec.group_elements < static_cast<int64_t>(elements.size())) {
    Rng element_rng = Rng::ForStream(spec.seed, 2);
    std::vector<int64_t> order(elements.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    ShuffleInPlace(order, element_rng);
    std::vector<GroupElement> picked;
    for (int64_t k = 0; k < spec.group_elements; ++k) picked.push_back(elements[order[k]]);
    elements = std::move(picked);
  }
  ASSIGN_OR_RETURN(TemplateBank bank,
                   TemplateBank::Build(templates, data.group->action(), elements));
  CdfOptions options;
  options.num_bins = spec.bins;
  options.range = spec.range;
  ASSIGN_OR_RETURN(std::unique_ptr<CdfEncoder> enc,
                   CdfEncoder::Create(options, Projector::OverBank(std::move(bank))));
  std::shared_ptr<const CdfEncoder> encoder = std::move(enc);
  return Featurizer([encoder](const FloatMatrix& rows) {
    // Xperm rows have exactly five ones: ‖x‖ = √5; the theory wants unit rows.
    FloatMatrix unit = FloatMatrix::Zeros(rows.rows(), rows.cols());
    const float inv = static_cast<float>(1.0 / std::sqrt(5.0));
    for (int64_t i = 0; i < rows.size(); ++i) unit.mutable_data()[i] = rows.data()[i] * inv;
    FloatMatrix out = FloatMatrix::Zeros(rows.rows(), encoder->d_out());
    encoder->Encode(rows.rows(), unit.data(), out.mutable_data());
    return out;
  });
}

DoubleMatrix OrbitHaarKernel(const XpermData& data, double sigma) {
  const int64_t o = static_cast<int64_t>(data.orbit_representative.size());
  FloatMatrix reps = GatherRows(data.x, data.orbit_representative);
  Eigen::MatrixXd r = reps.map().cast<double>();
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(o, o);
  FloatMatrix moved = FloatMatrix::Zeros(o, kXpermDim);
  for (const GroupElement& g : data.elements) {
    data.group->action().Apply(g, o, reps.data(), moved.mutable_data());
    // ‖a − g·b‖² = 10 − 2⟨a, g·b⟩ for rows with five ones.
    Eigen::MatrixXd dots = r * moved.map().cast<double>().transpose();
    sum += ((dots.array() * 2.0 - 10.0) / (2.0 * sigma * sigma)).exp().matrix();
  }
  sum /= static_cast<double>(data.elements.size());
  return DoubleMatrix::FromEigen(sum);
}

absl::StatusOr<Featurizer> HaarFeaturizer(const XpermData& data, double sigma) {
  DoubleMatrix k = OrbitHaarKernel(data, sigma);
  Eigen::MatrixXd sym = k.map();
  sym = 0.5 * (sym + sym.transpose()).eval();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(sym);
  if (eig.info() != Eigen::Success) return absl::InternalError("orbit kernel eigendecomposition");
  const Eigen::VectorXd& e = eig.eigenvalues();
  const double cutoff = 1e-12 * e.maxCoeff();
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < e.size(); ++i) {
    if (e(i) > cutoff) keep.push_back(i);
  }
  const int64_t o = sym.rows(), rank = static_cast<int64_t>(keep.size());
  auto factor = std::make_shared<FloatMatrix>(FloatMatrix::Zeros(o, rank));
  for (int64_t c = 0; c < rank; ++c) {
    const double s = std::sqrt(e(keep[static_cast<size_t>(c)]));
    for (int64_t a = 0; a < o; ++a) {
      factor->mutable_row(a)[c] = static_cast<float>(eig.eigenvectors()(a, keep[c]) * s);
    }
  }
  return Featurizer([factor](const FloatMatrix& rows) {
    FloatMatrix out = FloatMatrix::Zeros(rows.rows(), factor->cols());
    for (int64_t i = 0; i < rows.rows(); ++i) {
      const float* f = factor->row(OrbitOfRow(rows.row(i)));
      std::copy(f, f + factor->cols(), out.mutable_row(i));
    }
    return out;
  });
}

absl::StatusOr<FitResult> FitWithHoldout(const FloatMatrix& features,
                                         const std::vector<int32_t>& labels,
                                         const std::vector<int64_t>& train, double holdout_fraction,
                                         bool fit_bias) {
  // Split each class's rows of the draw (already in random order).
  std::vector<int64_t> fit, holdout;
  for (int32_t c = 0; c < 2; ++c) {
    std::vector<int64_t> rows;
    for (int64_t r : train) {
      if (labels[static_cast<size_t>(r)] == c) rows.push_back(r);
    }
    const int64_t n = static_cast<int64_t>(rows.size());
    const int64_t h = std::clamp<int64_t>(std::llround(holdout_fraction * n), 1, n - 1);
    holdout.insert(holdout.end(), rows.begin(), rows.begin() + h);
    fit.insert(fit.end(), rows.begin() + h, rows.end());
  }
  RidgeOptions options;
  options.fit_bias = fit_bias;
  ASSIGN_OR_RETURN(FloatMatrix y_fit, OneVsAllTargets(GatherLabels(labels, fit), 2));
  ASSIGN_OR_RETURN(FloatMatrix y_hold, OneVsAllTargets(GatherLabels(labels, holdout), 2));
  ASSIGN_OR_RETURN(auto solver, MakeRidgeSolver(GatherRows(features, fit), y_fit, options));
  const std::vector<double> grid =
      GurlsLambdaGrid(solver->eigenvalues(), solver->num_examples(), 20);
  ASSIGN_OR_RETURN(
      LinearModelSelection sel,
      ChooseLambda(*solver, grid, GatherRows(features, holdout), y_hold, RlsTask::kClassification));
  // GURLS (paramsel_hoprimal) takes MATLAB's max over an ascending grid: on
  // ties the smallest λ wins. ChooseLambda breaks ties the other way, so the
  // choice is remade from its curve.
  FitResult result;
  size_t best = 0;
  for (size_t i = 1; i < sel.curve.scores.size(); ++i) {
    if (sel.curve.scores[i] > sel.curve.scores[best]) best = i;
  }
  result.lambda = sel.curve.lambdas[best];
  result.holdout_accuracy = sel.curve.scores[best];
  ASSIGN_OR_RETURN(FloatMatrix y_all, OneVsAllTargets(GatherLabels(labels, train), 2));
  ASSIGN_OR_RETURN(auto refit, MakeRidgeSolver(GatherRows(features, train), y_all, options));
  ASSIGN_OR_RETURN(result.model, refit->Solve(result.lambda));
  // Test: every row outside the draw (scores for all rows, then select).
  ASSIGN_OR_RETURN(FloatMatrix scores, ApplyLinearModel(result.model, features));
  const std::vector<int32_t> predicted = ArgmaxRows(scores);
  const std::vector<int64_t> test = Complement(features.rows(), train);
  ASSIGN_OR_RETURN(result.test_accuracy,
                   Accuracy(GatherLabels(predicted, test), GatherLabels(labels, test)));
  return result;
}

double InvarianceDiscrepancy(const XpermData& data, const Featurizer& featurizer,
                             const LinearModel& model, const std::vector<int64_t>& points) {
  FloatMatrix x = GatherRows(data.x, points);
  FloatMatrix base = *ApplyLinearModel(model, featurizer(x));
  FloatMatrix moved = FloatMatrix::Zeros(x.rows(), x.cols());
  double worst = 0;
  for (const GroupElement& g : data.elements) {
    data.group->action().Apply(g, x.rows(), x.data(), moved.mutable_data());
    FloatMatrix s = *ApplyLinearModel(model, featurizer(moved));
    for (int64_t i = 0; i < s.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(s.data()[i]) - base.data()[i]));
    }
  }
  return worst;
}

absl::StatusOr<HaarCheck> CheckHaar(const XpermData& data, double sigma, int64_t per_class,
                                    uint64_t seed) {
  HaarCheck check;
  // 1. The orbit kernel against the library's (1/|G|²) double sum.
  DoubleMatrix orbit = OrbitHaarKernel(data, sigma);
  std::vector<int64_t> reps(data.orbit_representative.begin(),
                            data.orbit_representative.begin() + 24);
  FloatMatrix a = GatherRows(data.x, reps);
  ASSIGN_OR_RETURN(DoubleMatrix exact, HaarKernelMatrix(a, a, data.group->action(), data.elements,
                                                        {BaseKernelKind::kGaussian, sigma}));
  for (int64_t i = 0; i < a.rows(); ++i) {
    for (int64_t j = 0; j < a.rows(); ++j) {
      check.kernel_max_abs_diff =
          std::max(check.kernel_max_abs_diff, std::fabs(exact.row(i)[j] - orbit.row(i)[j]));
    }
  }
  // 2. Kernel RLS on K = HaarKernelMatrix vs ridge on the orbit factor rows.
  ASSIGN_OR_RETURN(std::vector<int64_t> train, SamplePerClass(data.labels, 2, per_class, seed));
  std::vector<int64_t> test(train.size());
  for (size_t i = 0; i < test.size(); ++i) test[i] = static_cast<int64_t>(i * 97 % 32768);
  FloatMatrix xt = GatherRows(data.x, train), xs = GatherRows(data.x, test);
  ASSIGN_OR_RETURN(DoubleMatrix ktt, HaarKernelMatrix(xt, xt, data.group->action(), data.elements,
                                                      {BaseKernelKind::kGaussian, sigma}));
  ASSIGN_OR_RETURN(DoubleMatrix kst, HaarKernelMatrix(xs, xt, data.group->action(), data.elements,
                                                      {BaseKernelKind::kGaussian, sigma}));
  ASSIGN_OR_RETURN(FloatMatrix y, OneVsAllTargets(GatherLabels(data.labels, train), 2));
  const double lambda = 1e-3;
  ASSIGN_OR_RETURN(KernelRidgeSolver krr, KernelRidgeSolver::Create(ktt, y));
  ASSIGN_OR_RETURN(KernelRidgeModel km, krr.Solve(lambda));
  ASSIGN_OR_RETURN(FloatMatrix kscores, PredictKernelRidge(km, kst));
  ASSIGN_OR_RETURN(Featurizer haar, HaarFeaturizer(data, sigma));
  RidgeOptions no_bias;
  no_bias.fit_bias = false;
  ASSIGN_OR_RETURN(auto solver, MakeRidgeSolver(haar(xt), y, no_bias));
  ASSIGN_OR_RETURN(LinearModel lm, solver->Solve(lambda));
  ASSIGN_OR_RETURN(FloatMatrix fscores, ApplyLinearModel(lm, haar(xs)));
  for (int64_t i = 0; i < fscores.size(); ++i) {
    check.score_max_abs_diff =
        std::max(check.score_max_abs_diff,
                 std::fabs(static_cast<double>(fscores.data()[i]) - kscores.data()[i]));
    check.score_scale = std::max(check.score_scale, std::fabs(double{kscores.data()[i]}));
  }
  return check;
}

}  // namespace invariant
