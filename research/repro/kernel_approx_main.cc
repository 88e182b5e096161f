// invariant-repro-kernel-approx: Raj, Kumar, Mroueh, Fletcher, Schölkopf
// (AISTATS 2017), Fig. 1: the normalised error ‖K̂ − K‖ / ‖K‖ (spectral and
// Frobenius norms) of the local group-invariant random Fourier kernel versus
// the number of random features s, for r = 20 and r = 40 group elements.
//
//   K̂_ij = ⟨ψ(x_i), ψ(x_j)⟩ with ψ the production LGIKA-RF map: an
//          invariant.v1.EncoderSpec (random_fourier + group) drawn by its
//          kind's draw and rebuilt by MakeFeaturizer
//          (core/model/featurizer_factory.h), exactly as a trained model's
//          featurizer is; d_out = 2s reals (cos and sin sums).
//   K_ij = (1/70²) Σ_{a,b} k(g_a·x_i, g'_b·x_j), the paper's "true" kernel:
//          70 group elements sampled from the same distribution q, Gaussian
//          base kernel k with the bandwidth σ of ψ.
// Two data sets:
//   coulomb  synthetic Coulomb matrices (train/data/coulomb.h, the generator
//            of research/repro/coulomb/), q = the noisy sort of Montavon et al.
//            (‖row‖ + N(0, ν²), input dependent: 70 draws per molecule for K;
//            ψ draws its r per molecule, seeded by the row, as when serving)
//   coulomb-uniform  the same molecules, q = uniform row/column permutations
//            (Fig. 1's "randomly sampled from the permutation group"; 70
//            shared draws for K, ψ's r moved onto the frequencies)
//   xperm    N rows of Xperm (train/data/xperm.h), q = uniform over the 120
//            permutations of the 5 blocks (70 shared draws for K; ψ's r
//            shared draws are moved onto the frequencies)
// Besides the paper's reference the program measures ψ against
//   limit-r  K_r, the same double sum over ψ's own r elements: the s → ∞
//            limit of K̂, so ‖K̂ − K_r‖ is the frequency-sampling error alone
//            and ‖K_r − K‖ (printed as s = inf) the floor the paper's curve
//            approaches
//   exact    (Xperm) the exact Haar kernel over all 120 permutations, and
//            r = "all" (enumerate: every element in ψ), for which K_r is exact
// σ is the median heuristic (median ‖g·x_i − g'·x_j‖ over pairs of the
// reference copies) unless given, times each of --sigma_scales (default 1
// and 0.25: a near rank-one and a structured kernel matrix). Each seed
// redraws ψ (frequencies and its r elements; nested in s within a seed); K
// is drawn once per data set (--kernel_seed).
//
// Writes kernel_approx.csv (mean and std over seeds), kernel_approx_runs.csv
// (one row per seed), kernel_approx_summary.md and kernel_approx_tables.md
// into --out_dir (when set) and prints the summary CSV. --check asserts that
// every error falls from the smallest to the largest s, that ‖K̂ − K_r‖ falls
// like s^(−1/2) (within a factor 3) and, for r = all, that K_r is the exact
// kernel and K̂ converges to it at that rate; it exits 1 when one fails (the
// ctest smoke test runs it on tiny sizes).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "Eigen/Core"
#include "Eigen/Eigenvalues"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/base/tensor.h"
#include "core/encoders/haar_kernel.h"
#include "core/encoders/projector.h"
#include "core/encoders/template_bank.h"
#include "core/groups/group_factory.h"
#include "core/model/encoder_kinds.h"
#include "core/model/featurizer_factory.h"
#include "google/protobuf/text_format.h"
#include "invariant/v1/bundle.pb.h"
#include "train/data/coulomb.h"
#include "train/data/splits.h"
#include "train/data/xperm.h"

ABSL_FLAG(std::string, datasets, "coulomb,coulomb-uniform,xperm",
          "data sets: coulomb, coulomb-uniform, xperm");
ABSL_FLAG(int64_t, points, 500, "N: points of the kernel matrices (per data set)");
ABSL_FLAG(std::string, s_values, "16,32,64,128,256,512,1024,2048,4096",
          "numbers of random frequencies s (ψ has 2s real features)");
ABSL_FLAG(std::string, group_counts, "20,40",
          "r, group elements of ψ; 'all' = every element of an enumerable group (Xperm: 120)");
ABSL_FLAG(int64_t, true_elements, 70, "group elements of the reference kernel K (paper: 70)");
ABSL_FLAG(int32_t, seeds, 5, "independent draws of ψ per (r, s)");
ABSL_FLAG(double, coulomb_sigma, 0, "Gaussian bandwidth on Coulomb matrices (0: median heuristic)");
ABSL_FLAG(double, xperm_sigma, 0, "Gaussian bandwidth on Xperm rows (0: median heuristic)");
ABSL_FLAG(std::string, sigma_scales, "1,0.25",
          "multiples of the bandwidth to run (1: the median heuristic or the flag above)");
ABSL_FLAG(double, noisy_sort_sigma, 1.0, "ν of the noisy sort (Montavon et al. and Raj et al.: 1)");
ABSL_FLAG(uint64_t, data_seed, 2,
          "Coulomb generator seed (as research/repro/coulomb/) and the Xperm row draw");
ABSL_FLAG(uint64_t, kernel_seed, 70, "seed of the reference kernel's group elements");
ABSL_FLAG(bool, limit_reference, true, "also measure against K_r (ψ's own r elements, s → ∞)");
ABSL_FLAG(std::string, out_dir, "",
          "where kernel_approx{,_runs}.csv and kernel_approx_{summary,tables}.md go (unset: none)");
ABSL_FLAG(bool, check, false, "assert convergence (see the header); exit 1 on failure");

namespace invariant {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

template <typename T>
T Check(absl::StatusOr<T> s) {
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.status().ToString().c_str());
    std::exit(2);
  }
  return *std::move(s);
}

constexpr char kLimit[] = "limit-r";
constexpr char kExact[] = "exact";
constexpr int64_t kInf = -1;  // s of the s → ∞ rows (K_r against the reference)

struct Problem {
  std::string name;
  FloatMatrix x;  // N × d
  std::vector<int64_t> input_shape;
  v1::GroupSpec group;
  std::unique_ptr<GroupDistribution> q;
  FloatMatrix copies;  // the reference kernel's c copies of every point, row i·c + k
  int64_t c = 0;
  double sigma_base = 0;  // the median heuristic or the flag
  std::string sigma_note;
  double sigma = 0;         // sigma_base × the current --sigma_scales value
  DoubleMatrix k_true;      // the (1/c²) double sum over --true_elements draws
  DoubleMatrix k_exact;     // all elements (enumerable groups), else empty
  double exact_check = -1;  // max |k_exact − HaarKernelMatrix| on a few points
  double seconds_reference = 0;
};

// Row i·c + k of the result is g_{i,k}·x_i, with elements(i) = the c
// elements of point i.
template <typename ElementsOf>
FloatMatrix OrbitCopies(const GroupAction& action, const FloatMatrix& x, int64_t c,
                        ElementsOf elements) {
  const int64_t n = x.rows(), d = x.cols();
  FloatMatrix out = FloatMatrix::Zeros(n * c, d);
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<GroupElement> g = elements(i);
    for (int64_t k = 0; k < c; ++k) {
      action.Apply(g[static_cast<size_t>(k)], 1, x.row(i), out.mutable_row(i * c + k));
    }
  }
  return out;
}

// K_ij = mean over a ∈ copies ca of i in `a`, b ∈ copies cb of j in `b` of
// exp(−‖a − b‖² / 2σ²). Inner products by blocks in float (cblas_sgemm),
// squared norms and the sums in double. With `symmetric` (a = b) only the
// blocks j ≥ i are computed.
DoubleMatrix MeanGaussianKernel(const FloatMatrix& a, int64_t ca, const FloatMatrix& b, int64_t cb,
                                double sigma, bool symmetric) {
  const int64_t n = a.rows() / ca, m = b.rows() / cb, d = a.cols();
  auto norms = [d](const FloatMatrix& y) {
    std::vector<double> v(static_cast<size_t>(y.rows()));
    for (int64_t i = 0; i < y.rows(); ++i) {
      double s = 0;
      for (int64_t k = 0; k < d; ++k) s += static_cast<double>(y.row(i)[k]) * y.row(i)[k];
      v[static_cast<size_t>(i)] = s;
    }
    return v;
  };
  const std::vector<double> na = norms(a), nb = norms(b);
  const int64_t bi = std::max<int64_t>(1, 1024 / ca), bj = std::max<int64_t>(1, 1024 / cb);
  const double inv = 1.0 / (2.0 * sigma * sigma);
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(n, m);
  std::vector<float> g(static_cast<size_t>(bi * ca * bj * cb));
  for (int64_t i0 = 0; i0 < n; i0 += bi) {
    const int64_t ni = std::min(bi, n - i0);
    for (int64_t j0 = symmetric ? i0 : 0; j0 < m; j0 += bj) {
      const int64_t nj = std::min(bj, m - j0);
      const int64_t rows = ni * ca, cols = nj * cb;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(rows),
                  static_cast<blasint>(cols), static_cast<blasint>(d), 1.0f, a.row(i0 * ca),
                  static_cast<blasint>(d), b.row(j0 * cb), static_cast<blasint>(d), 0.0f, g.data(),
                  static_cast<blasint>(cols));
      for (int64_t p = 0; p < ni; ++p) {
        for (int64_t q = 0; q < nj; ++q) {
          double sum = 0;
          for (int64_t u = 0; u < ca; ++u) {
            const double nu = na[static_cast<size_t>((i0 + p) * ca + u)];
            const float* gr = g.data() + (p * ca + u) * cols + q * cb;
            const double* nv = nb.data() + (j0 + q) * cb;
            for (int64_t v = 0; v < cb; ++v) {
              const double dist = std::max(0.0, nu + nv[v] - 2.0 * gr[v]);
              sum += std::exp(-dist * inv);
            }
          }
          k(i0 + p, j0 + q) = sum / static_cast<double>(ca * cb);
          if (symmetric) k(j0 + q, i0 + p) = k(i0 + p, j0 + q);
        }
      }
    }
  }
  return DoubleMatrix::FromEigen(k);
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// The elements point i gets from an input-dependent q (one Rng per point).
std::vector<GroupElement> DrawFor(const GroupDistribution& q, const FloatMatrix& x, int64_t i,
                                  int64_t c, uint64_t seed) {
  Rng rng = Rng::ForStream(seed, static_cast<uint64_t>(i));
  return q.SampleFor(x.row(i), c, rng);
}

// The points, the group and the reference kernel's copies; the kernels
// themselves come from SetBandwidth.
absl::StatusOr<Problem> MakeProblem(const std::string& name, int64_t n) {
  Problem p;
  p.name = name;
  const uint64_t data_seed = absl::GetFlag(FLAGS_data_seed);
  double sigma = 0;
  if (name == "coulomb" || name == "coulomb-uniform") {
    train::CoulombOptions o;  // research/repro/coulomb/*.textproto: 4..23 atoms, seed 2
    o.num_molecules = n;
    o.max_atoms = 23;
    o.min_atoms = 4;
    o.seed = data_seed;
    ASSIGN_OR_RETURN(train::Dataset ds, train::MakeCoulomb(o));
    p.x = ds.x;
    p.input_shape = {23, 23};
    p.group.mutable_matrix_permutation()->set_n(23);
    if (name == "coulomb") {
      p.group.mutable_matrix_permutation()->set_noisy_sort_sigma(
          absl::GetFlag(FLAGS_noisy_sort_sigma));
      p.group.set_placement(v1::GroupSpec::PLACEMENT_INPUT);
    }  // coulomb-uniform: uniform permutations, moved onto the frequencies
    sigma = absl::GetFlag(FLAGS_coulomb_sigma);
  } else if (name == "xperm") {
    train::Dataset all = train::MakeXperm({});
    if (n > all.rows()) return absl::InvalidArgumentError("xperm has 32,768 rows");
    const std::vector<int64_t> pick = train::ShuffledIndices(all.rows(), data_seed);
    p.x = FloatMatrix::Zeros(n, all.x.cols());
    for (int64_t i = 0; i < n; ++i) {
      std::copy(all.x.row(pick[i]), all.x.row(pick[i]) + all.x.cols(), p.x.mutable_row(i));
    }
    p.input_shape = {train::kXpermLength, train::kXpermAlphabet};
    p.group.mutable_block_permutation()->set_num_blocks(train::kXpermLength);
    p.group.mutable_block_permutation()->set_block_size(train::kXpermAlphabet);
    sigma = absl::GetFlag(FLAGS_xperm_sigma);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown data set '", name, "'"));
  }
  ASSIGN_OR_RETURN(p.q, MakeGroupDistribution(p.group));
  // The reference kernel's copies: 70 draws per point (input-dependent q)
  // or 70 draws shared by every point.
  const int64_t c = absl::GetFlag(FLAGS_true_elements);
  const uint64_t kseed = absl::GetFlag(FLAGS_kernel_seed);
  FloatMatrix& copies = p.copies;
  p.c = c;
  if (p.q->depends_on_input()) {
    copies = OrbitCopies(p.q->action(), p.x, c,
                         [&](int64_t i) { return DrawFor(*p.q, p.x, i, c, kseed); });
  } else {
    Rng rng(kseed);
    const std::vector<GroupElement> shared = p.q->Sample(c, rng);
    copies = OrbitCopies(p.q->action(), p.x, c, [&](int64_t) { return shared; });
  }
  if (sigma > 0) {
    p.sigma_note = "given";
  } else {
    std::vector<double> d;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < p.x.cols(); ++k) {
          const double t = static_cast<double>(copies.row(i * c)[k]) - copies.row(j * c)[k];
          s += t * t;
        }
        d.push_back(std::sqrt(s));
      }
    }
    sigma = Median(std::move(d));
    p.sigma_note = "median heuristic";
  }
  p.sigma_base = sigma;
  return p;
}

// Computes the reference kernels for σ = scale × the base bandwidth.
absl::Status SetBandwidth(Problem& p, double scale) {
  const auto t0 = Clock::now();
  const int64_t n = p.x.rows();
  const double sigma = scale * p.sigma_base;
  p.sigma = sigma;
  p.k_true = MeanGaussianKernel(p.copies, p.c, p.copies, p.c, sigma, true);
  if (p.q->enumerable()) {
    // k_G(x, z) = (1/|G|) Σ_g k(x, g·z), equal to the (1/|G|²) double sum
    // for the uniform distribution on a group acting by isometries.
    const std::vector<GroupElement> all = p.q->Enumerate();
    const int64_t e = static_cast<int64_t>(all.size());
    FloatMatrix orbit = OrbitCopies(p.q->action(), p.x, e, [&](int64_t) { return all; });
    p.k_exact = MeanGaussianKernel(p.x, 1, orbit, e, sigma, false);
    // Against the library's yardstick on a few points.
    const int64_t few = std::min<int64_t>(n, 12);
    FloatMatrix head = FloatMatrix::Zeros(few, p.x.cols());
    std::copy(p.x.data(), p.x.data() + few * p.x.cols(), head.mutable_data());
    ASSIGN_OR_RETURN(DoubleMatrix ref, HaarKernelMatrix(head, head, p.q->action(), all,
                                                        {BaseKernelKind::kGaussian, sigma}));
    p.exact_check = 0;
    for (int64_t i = 0; i < few; ++i) {
      for (int64_t j = 0; j < few; ++j) {
        p.exact_check = std::max(p.exact_check, std::fabs(ref.row(i)[j] - p.k_exact.row(i)[j]));
      }
    }
  }
  p.seconds_reference = Since(t0);
  return absl::OkStatus();
}

// The production feature map for (s, r, seed): an EncoderSpec drawn by its
// kind and rebuilt by MakeFeaturizer, as invariant-train and the server do.
// r = 0 enumerates the group. Returns the encoder and the drawn spec.
absl::StatusOr<std::pair<std::shared_ptr<const Encoder>, v1::EncoderSpec>> MakePsi(const Problem& p,
                                                                                   int64_t s,
                                                                                   int64_t r,
                                                                                   uint64_t seed) {
  v1::Manifest manifest;
  manifest.set_input_dim(p.x.cols());
  v1::EncoderSpec& spec = *manifest.mutable_encoder();
  const std::string text = absl::StrFormat(
      "random_fourier { num_features: %d num_group_elements: %d sigma: %.17g } seed: %d", s,
      std::max<int64_t>(r, 1), p.sigma, seed);
  if (!google::protobuf::TextFormat::ParseFromString(text, &spec)) {
    return absl::InternalError(absl::StrCat("cannot parse ", text));
  }
  *spec.mutable_group() = p.group;
  if (r == 0) spec.mutable_group()->set_enumerate(true);
  for (int64_t v : p.input_shape) spec.add_input_shape(v);
  ASSIGN_OR_RETURN(const EncoderKind* kind, FindEncoderKind(spec, "encoder"));
  RETURN_IF_ERROR(kind->validate_config(spec));
  EncoderTrainingData data;
  data.input_dim = p.x.cols();
  data.train_rows = p.x.rows();
  ModelTensors tensors;
  RETURN_IF_ERROR(kind->draw(spec, data, tensors));
  ASSIGN_OR_RETURN(std::shared_ptr<const Encoder> encoder, MakeFeaturizer(manifest, tensors));
  return std::make_pair(std::move(encoder), spec);
}

// The r elements ψ applies to each point, redrawn as the encoder draws them:
// input-dependent q per row from Rng::ForStream(seed, HashRowBytes(row))
// (Projector::OverInput), otherwise once from Rng::ForStream(seed, 2)
// (core/model/bank_tensors.h DrawBank).
absl::StatusOr<FloatMatrix> PsiCopies(const Problem& p, const v1::EncoderSpec& spec) {
  const int64_t r = spec.random_fourier().num_group_elements();
  if (p.q->depends_on_input()) {
    return OrbitCopies(p.q->action(), p.x, r, [&](int64_t i) {
      Rng rng = Rng::ForStream(spec.seed(), HashRowBytes(p.x.row(i), p.x.cols()));
      return p.q->SampleFor(p.x.row(i), r, rng);
    });
  }
  Rng rng = Rng::ForStream(spec.seed(), 2);
  ASSIGN_OR_RETURN(std::vector<GroupElement> shared,
                   DrawGroupElements(*p.q, r, spec.group().enumerate(), rng));
  if (static_cast<int64_t>(shared.size()) != r) return absl::InternalError("element count");
  return OrbitCopies(p.q->action(), p.x, r, [&](int64_t) { return shared; });
}

// K̂ = Ψ Ψᵀ in double.
Eigen::MatrixXd FeatureGram(const FloatMatrix& psi) {
  const int64_t n = psi.rows(), w = psi.cols();
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> f =
      psi.map().cast<double>();
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(n, n);  // column-major, lower triangle filled
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, static_cast<blasint>(n),
              static_cast<blasint>(w), 1.0, f.data(), static_cast<blasint>(w), 0.0, k.data(),
              static_cast<blasint>(n));
  k.triangularView<Eigen::StrictlyUpper>() = k.transpose();
  return k;
}

double SpectralNorm(const Eigen::MatrixXd& sym) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(sym, Eigen::EigenvaluesOnly);
  const Eigen::VectorXd& e = es.eigenvalues();
  return std::max(std::fabs(e(0)), std::fabs(e(e.size() - 1)));
}

struct Norms {
  double spectral = 0, frobenius = 0;
};
Norms NormsOf(const Eigen::MatrixXd& m) { return {SpectralNorm(m), m.norm()}; }

struct Stats {
  std::vector<double> v;
  double Mean() const {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? NAN : s / static_cast<double>(v.size());
  }
  double Std() const {
    if (v.size() < 2) return 0;
    const double m = Mean();
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size() - 1));
  }
};

// (dataset, bandwidth scale, r label, reference, norm, s) → errors over seeds.
using Key = std::tuple<std::string, double, std::string, std::string, std::string, int64_t>;

struct Results {
  std::map<Key, Stats> errors;
  std::vector<std::string> runs;  // CSV lines
  void Add(const std::string& ds, double scale, double sigma, const std::string& r,
           const std::string& ref, int64_t s, int seed, const Norms& err) {
    errors[{ds, scale, r, ref, "spectral", s}].v.push_back(err.spectral);
    errors[{ds, scale, r, ref, "frobenius", s}].v.push_back(err.frobenius);
    runs.push_back(absl::StrFormat("%s,%g,%.6g,%s,%s,%s,%d,%.8g,%.8g", ds, scale, sigma, r, ref,
                                   s == kInf ? "inf" : absl::StrCat(s), seed, err.spectral,
                                   err.frobenius));
  }
  double Mean(const std::string& ds, double scale, const std::string& r, const std::string& ref,
              const std::string& norm, int64_t s) {
    return errors[{ds, scale, r, ref, norm, s}].Mean();
  }
};

// Least-squares slope of log(mean error) against log s.
double LogLogSlope(Results& res, const std::string& ds, double scale, const std::string& r,
                   const std::string& ref, const std::string& norm,
                   const std::vector<int64_t>& ss) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (int64_t s : ss) {
    const double x = std::log(static_cast<double>(s)),
                 y = std::log(res.Mean(ds, scale, r, ref, norm, s));
    sx += x, sy += y, sxx += x * x, sxy += x * y, ++n;
  }
  if (n < 2) return NAN;
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

Norms Relative(const Norms& e, const Norms& k) {
  return {e.spectral / k.spectral, e.frobenius / k.frobenius};
}

// The --check assertions for one (data set, bandwidth); failures appended.
void CheckConvergence(Results& res, const Problem& p, double scale,
                      const std::vector<std::string>& labels, const std::vector<int64_t>& ss,
                      const std::string& sampled, bool limit, std::vector<std::string>& failures) {
  if (ss.size() < 2) return;
  const std::string& ds = p.name;
  const int64_t lo = ss.front(), hi = ss.back();
  // Monte Carlo error ∝ s^(−1/2); the bound allows 3× that on the means
  // (at small s and few seeds the spectral norm falls somewhat slower).
  const double rate = 3.0 * std::sqrt(static_cast<double>(lo) / static_cast<double>(hi));
  for (const std::string& l : labels) {
    for (const char* norm : {"spectral", "frobenius"}) {
      std::vector<std::string> refs = {sampled};
      if (!p.k_exact.empty()) refs.push_back(kExact);
      if (limit) refs.push_back(kLimit);
      for (const std::string& ref : refs) {
        const double a = res.Mean(ds, scale, l, ref, norm, lo);
        const double b = res.Mean(ds, scale, l, ref, norm, hi);
        if (!(b < a)) {
          failures.push_back(
              absl::StrFormat("%s σ×%g r=%s %s %s: error at s=%d (%.4g) not below "
                              "s=%d (%.4g)",
                              ds, scale, l, ref, norm, hi, b, lo, a));
        }
      }
      if (limit) {
        // The frequency error alone falls like s^(−1/2).
        const double a = res.Mean(ds, scale, l, kLimit, norm, lo);
        const double b = res.Mean(ds, scale, l, kLimit, norm, hi);
        if (!(b < rate * a)) {
          failures.push_back(absl::StrFormat(
              "%s σ×%g r=%s %s: ‖K̂ − K_r‖ at s=%d is %.4g, above 3·(s_min/s)^½·%.4g = %.4g", ds,
              scale, l, norm, hi, b, a, rate * a));
        }
      }
      if (absl::StartsWith(l, "all-") && !p.k_exact.empty()) {
        // Every element in ψ: its limit is the exact kernel, and K̂ converges
        // to it at the Monte Carlo rate, with no floor.
        if (limit) {
          const double floor = res.Mean(ds, scale, l, kExact, norm, kInf);
          if (!(floor < 1e-5)) {
            failures.push_back(
                absl::StrFormat("%s σ×%g r=%s %s: K_r differs from the exact "
                                "kernel by %.3g",
                                ds, scale, l, norm, floor));
          }
        }
        const double a = res.Mean(ds, scale, l, kExact, norm, lo);
        const double b = res.Mean(ds, scale, l, kExact, norm, hi);
        if (!(b < rate * a)) {
          failures.push_back(
              absl::StrFormat("%s σ×%g r=%s %s: error vs the exact kernel at s=%d is %.4g, above "
                              "3·(s_min/s)^½·%.4g = %.4g",
                              ds, scale, l, norm, hi, b, a, rate * a));
        }
      }
    }
  }
}

int Main() {
  const auto t_start = Clock::now();
  std::vector<int64_t> ss;
  for (absl::string_view v :
       absl::StrSplit(absl::GetFlag(FLAGS_s_values), ',', absl::SkipEmpty())) {
    ss.push_back(std::stoll(std::string(v)));
  }
  std::sort(ss.begin(), ss.end());
  std::vector<double> scales;
  for (absl::string_view v :
       absl::StrSplit(absl::GetFlag(FLAGS_sigma_scales), ',', absl::SkipEmpty())) {
    scales.push_back(std::stod(std::string(v)));
  }
  const std::vector<std::string> rs =
      absl::StrSplit(absl::GetFlag(FLAGS_group_counts), ',', absl::SkipEmpty());
  const int64_t n = absl::GetFlag(FLAGS_points);
  const int seeds = absl::GetFlag(FLAGS_seeds);
  const std::string sampled = absl::StrCat("sampled-", absl::GetFlag(FLAGS_true_elements));
  const bool limit = absl::GetFlag(FLAGS_limit_reference);
  Results res;
  std::vector<std::string> failures;
  std::string md;
  // One summary row per (data set, bandwidth, r): the paper's reference at
  // the smallest and largest s, the s → ∞ floor and the log-log slope.
  std::string summary = absl::StrCat(
      "| data | σ | r | spectral, s = ", ss.front(), " | spectral, s = ", ss.back(),
      " | spectral, s → ∞ | Frobenius, s = ", ss.front(), " | Frobenius, s = ", ss.back(),
      " | Frobenius, s → ∞ | slope (spectral / Frobenius) "
      "|\n|---|---|---|---|---|---|---|---|---|---|\n");

  for (absl::string_view dsv :
       absl::StrSplit(absl::GetFlag(FLAGS_datasets), ',', absl::SkipEmpty())) {
    const std::string ds(dsv);
    Problem p = Check(MakeProblem(ds, n));
    for (double scale : scales) {
      const auto t_ds = Clock::now();
      if (absl::Status st = SetBandwidth(p, scale); !st.ok()) Check(absl::StatusOr<int>(st));
      const Norms k_norm = NormsOf(p.k_true.map());
      Norms exact_norm;
      if (!p.k_exact.empty()) exact_norm = NormsOf(p.k_exact.map());
      std::fprintf(stderr, "%s: N = %lld, d = %lld, σ = %g × %.6g (%s), reference kernel %.1f s\n",
                   ds.c_str(), static_cast<long long>(n), static_cast<long long>(p.x.cols()), scale,
                   p.sigma_base, p.sigma_note.c_str(), p.seconds_reference);
      std::vector<std::string> labels;
      double psi_seconds = 0, ref_seconds = 0;
      for (const std::string& rtok : rs) {
        int64_t r = 0;
        std::string label;
        if (rtok == "all") {
          if (!p.q->enumerable()) {
            std::fprintf(stderr, "%s: r = all skipped (%s is not enumerable)\n", ds.c_str(),
                         p.q->name().c_str());
            continue;
          }
          label = absl::StrCat("all-", p.q->Enumerate().size());
        } else {
          r = std::stoll(rtok);
          label = rtok;
        }
        labels.push_back(label);
        Eigen::MatrixXd k_r_all;  // r = all: every seed applies the same elements
        for (int seed = 1; seed <= seeds; ++seed) {
          // Frequencies and ψ's elements: the same for every s of one seed
          // (nested draws, as one growing feature set).
          const uint64_t enc_seed = 1000 * static_cast<uint64_t>(seed) + static_cast<uint64_t>(r);
          Eigen::MatrixXd k_r;
          Norms k_r_norm;
          for (int64_t s : ss) {
            auto t0 = Clock::now();
            auto [encoder, spec] = Check(MakePsi(p, s, r, enc_seed));
            FloatMatrix psi = FloatMatrix::Zeros(n, encoder->d_out());
            encoder->Encode(n, p.x.data(), psi.mutable_data());
            const Eigen::MatrixXd k_hat = FeatureGram(psi);
            psi_seconds += Since(t0);
            t0 = Clock::now();
            res.Add(ds, scale, p.sigma, label, sampled, s, seed,
                    Relative(NormsOf(k_hat - p.k_true.map()), k_norm));
            if (!p.k_exact.empty()) {
              res.Add(ds, scale, p.sigma, label, kExact, s, seed,
                      Relative(NormsOf(k_hat - p.k_exact.map()), exact_norm));
            }
            if (limit) {
              if (k_r.size() == 0) {
                // ψ's elements do not depend on s (same seed): K_r once per
                // seed, or once for r = all.
                if (r == 0 && k_r_all.size() > 0) {
                  k_r = k_r_all;
                } else {
                  FloatMatrix copies = Check(PsiCopies(p, spec));
                  const int64_t c = spec.random_fourier().num_group_elements();
                  k_r = MeanGaussianKernel(copies, c, copies, c, p.sigma, true).map();
                  if (r == 0) k_r_all = k_r;
                }
                k_r_norm = NormsOf(k_r);
                res.Add(ds, scale, p.sigma, label, sampled, kInf, seed,
                        Relative(NormsOf(k_r - p.k_true.map()), k_norm));
                if (!p.k_exact.empty()) {
                  res.Add(ds, scale, p.sigma, label, kExact, kInf, seed,
                          Relative(NormsOf(k_r - p.k_exact.map()), exact_norm));
                }
              }
              res.Add(ds, scale, p.sigma, label, kLimit, s, seed,
                      Relative(NormsOf(k_hat - k_r), k_r_norm));
            }
            ref_seconds += Since(t0);
          }
        }
        std::fprintf(stderr, "%s σ×%g: r = %s done (%.0f s)\n", ds.c_str(), scale, label.c_str(),
                     Since(t_ds));
      }

      // Tables: one per reference, rows s, columns r × norm.
      absl::StrAppend(
          &md, "### ", ds, ", σ = ", absl::StrFormat("%.4g", p.sigma),
          scale == 1 ? absl::StrCat(" (", p.sigma_note, ")")
                     : absl::StrFormat(" (%g × the %s)", scale, p.sigma_note),
          "\n\n", "N = ", n, " points, d = ", p.x.cols(), ", group ", p.q->name(), ", ", seeds,
          " seeds. Reference kernel K (", sampled,
          "): ", absl::StrFormat("‖K‖₂ = %.4g, ‖K‖_F = %.4g", k_norm.spectral, k_norm.frobenius),
          ".");
      if (p.exact_check >= 0) {
        absl::StrAppend(&md, " Exact kernel K_G: ",
                        absl::StrFormat("‖K_G‖₂ = %.4g, ‖K_G‖_F = %.4g", exact_norm.spectral,
                                        exact_norm.frobenius),
                        ", equal to HaarKernelMatrix (core/encoders/haar_kernel.h) to ",
                        absl::StrFormat("%.2g", p.exact_check), " (max |Δ| on 12 points).");
        const Norms gap = Relative(NormsOf(p.k_true.map() - p.k_exact.map()), exact_norm);
        absl::StrAppend(&md, " The ", sampled, " reference against it: ",
                        absl::StrFormat("‖K − K_G‖/‖K_G‖ = %.4f (spectral), %.4f (Frobenius).",
                                        gap.spectral, gap.frobenius));
      }
      absl::StrAppend(&md, absl::StrFormat(" Time: reference kernels %.0f s, ψ and K̂ %.0f s, "
                                           "K_r and the norms %.0f s.\n\n",
                                           p.seconds_reference, psi_seconds, ref_seconds));
      std::vector<std::pair<std::string, std::string>> refs = {
          {sampled,
           absl::StrCat("‖K̂ − K‖/‖K‖ against the paper's reference K (",
                        absl::GetFlag(FLAGS_true_elements),
                        " sampled elements); row ∞ is ‖K_r − K‖/‖K‖, the limit of K̂ as s → ∞ "
                        "for ψ's own r elements")}};
      if (!p.k_exact.empty()) {
        refs.push_back({kExact,
                        "‖K̂ − K_G‖/‖K_G‖ against the exact kernel over all 120 block "
                        "permutations; row ∞ is ‖K_r − K_G‖/‖K_G‖"});
      }
      if (limit) {
        refs.push_back({kLimit,
                        "‖K̂ − K_r‖/‖K_r‖ against K_r (ψ's own r elements, its s → ∞ "
                        "limit): the frequency-sampling error alone"});
      }
      for (const auto& [ref, title] : refs) {
        absl::StrAppend(&md, "**", title, ".** Mean ± std over seeds.\n\n| s |");
        for (const std::string& l : labels) {
          absl::StrAppend(&md, " r = ", l, " spectral | r = ", l, " Frobenius |");
        }
        absl::StrAppend(&md, "\n|---|");
        for (size_t i = 0; i < labels.size(); ++i) absl::StrAppend(&md, "---|---|");
        absl::StrAppend(&md, "\n");
        std::vector<int64_t> rows = ss;
        if (ref != kLimit && limit) rows.push_back(kInf);
        for (int64_t s : rows) {
          absl::StrAppend(&md, "| ", s == kInf ? "∞" : absl::StrCat(s), " |");
          for (const std::string& l : labels) {
            for (const char* norm : {"spectral", "frobenius"}) {
              const Stats& st = res.errors[{ds, scale, l, ref, norm, s}];
              absl::StrAppend(&md, absl::StrFormat(" %.4f ± %.4f |", st.Mean(), st.Std()));
            }
          }
          absl::StrAppend(&md, "\n");
        }
        absl::StrAppend(&md, "| log-log slope |");
        for (const std::string& l : labels) {
          for (const char* norm : {"spectral", "frobenius"}) {
            absl::StrAppend(
                &md, absl::StrFormat(" %.2f |", LogLogSlope(res, ds, scale, l, ref, norm, ss)));
          }
        }
        absl::StrAppend(&md, "\n\n");
      }
      for (const std::string& l : labels) {
        auto cell = [&](const char* norm, int64_t s) {
          if (s == kInf && !limit) return std::string("—");
          const Stats& st = res.errors[{ds, scale, l, sampled, norm, s}];
          return absl::StrFormat("%.4f ± %.4f", st.Mean(), st.Std());
        };
        absl::StrAppend(
            &summary, "| ", ds, " | ",
            absl::StrFormat(
                "%.4g (%s)", p.sigma,
                scale == 1 ? p.sigma_note : absl::StrFormat("%g × %s", scale, p.sigma_note)),
            " | ", l, " | ", cell("spectral", ss.front()), " | ", cell("spectral", ss.back()),
            " | ", cell("spectral", kInf), " | ", cell("frobenius", ss.front()), " | ",
            cell("frobenius", ss.back()), " | ", cell("frobenius", kInf), " | ",
            absl::StrFormat("%.2f / %.2f", LogLogSlope(res, ds, scale, l, sampled, "spectral", ss),
                            LogLogSlope(res, ds, scale, l, sampled, "frobenius", ss)),
            " |\n");
      }
      absl::StrAppend(&md, absl::StrFormat("Run time (%s, σ × %g): %.0f s.\n\n", ds, scale,
                                           Since(t_ds) + p.seconds_reference));
      if (absl::GetFlag(FLAGS_check)) {
        CheckConvergence(res, p, scale, labels, ss, sampled, limit, failures);
      }
    }
  }

  // Verdicts on the paper's reference, over every curve (data set × σ × r ×
  // norm) and every pair r < r' of numeric group counts.
  {
    int curves = 0, falls = 0, monotone = 0, above_floor = 0, pairs = 0, r_helps_max = 0,
        r_helps_inf = 0;
    std::map<std::tuple<std::string, double, std::string>, std::map<int64_t, double>> by_r;
    for (const auto& [k, st] : res.errors) {
      const auto& [ds, scale, l, ref, norm, s] = k;
      if (ref != sampled || s != ss.front()) continue;
      ++curves;
      const double lo = st.Mean(), hi = res.Mean(ds, scale, l, ref, norm, ss.back());
      falls += hi < lo ? 1 : 0;
      bool mono = true;
      for (size_t i = 1; i < ss.size(); ++i) {
        mono = mono && res.Mean(ds, scale, l, ref, norm, ss[i]) <
                           res.Mean(ds, scale, l, ref, norm, ss[i - 1]);
      }
      monotone += mono ? 1 : 0;
      if (limit) above_floor += hi > res.Mean(ds, scale, l, ref, norm, kInf) ? 1 : 0;
      if (!absl::StartsWith(l, "all-")) by_r[{ds, scale, norm}][std::stoll(l)] = 0;
    }
    for (auto& [key, rmap] : by_r) {
      const auto& [ds, scale, norm] = key;
      for (auto a = rmap.begin(); a != rmap.end(); ++a) {
        for (auto b = std::next(a); b != rmap.end(); ++b) {
          ++pairs;
          const std::string la = absl::StrCat(a->first), lb = absl::StrCat(b->first);
          r_helps_max += res.Mean(ds, scale, lb, sampled, norm, ss.back()) <
                                 res.Mean(ds, scale, la, sampled, norm, ss.back())
                             ? 1
                             : 0;
          if (limit) {
            r_helps_inf += res.Mean(ds, scale, lb, sampled, norm, kInf) <
                                   res.Mean(ds, scale, la, sampled, norm, kInf)
                               ? 1
                               : 0;
          }
        }
      }
    }
    absl::StrAppend(&summary, "\nVerdicts on the mean errors against the reference K (", curves,
                    " curves: data set × σ × r × norm):\n\n",
                    absl::StrFormat("* error at s = %d below s = %d: %d of %d\n", ss.back(),
                                    ss.front(), falls, curves),
                    absl::StrFormat("* falls at every step of s: %d of %d\n", monotone, curves));
    if (limit) {
      absl::StrAppend(&summary,
                      absl::StrFormat("* still above its s → ∞ floor ‖K_r − K‖ at s = %d: %d of "
                                      "%d\n",
                                      ss.back(), above_floor, curves));
    }
    if (pairs > 0) {
      absl::StrAppend(&summary,
                      absl::StrFormat("* the larger r has the smaller error at s = %d: %d of %d "
                                      "pairs",
                                      ss.back(), r_helps_max, pairs));
      if (limit) {
        absl::StrAppend(&summary,
                        absl::StrFormat("; the smaller floor: %d of %d", r_helps_inf, pairs));
      }
      absl::StrAppend(&summary, "\n");
    }
  }

  std::string csv = "dataset,sigma_scale,r,reference,norm,s,mean,std,seeds\n";
  for (const auto& [k, st] : res.errors) {
    const auto& [ds, scale, l, ref, norm, s] = k;
    absl::StrAppend(&csv, absl::StrFormat("%s,%g,%s,%s,%s,%s,%.8g,%.8g,%d\n", ds, scale, l, ref,
                                          norm, s == kInf ? "inf" : absl::StrCat(s), st.Mean(),
                                          st.Std(), st.v.size()));
  }
  std::printf("%s", csv.c_str());
  absl::StrAppend(&md, absl::StrFormat("Total run time of invariant-repro-kernel-approx: %.0f s.\n",
                                       Since(t_start)));
  const std::string dir = absl::GetFlag(FLAGS_out_dir);
  if (!dir.empty()) {
    std::ofstream(dir + "/kernel_approx.csv") << csv;
    std::ofstream runs(dir + "/kernel_approx_runs.csv");
    runs << "dataset,sigma_scale,sigma,r,reference,s,seed,spectral,frobenius\n";
    for (const std::string& line : res.runs) runs << line << "\n";
    std::ofstream(dir + "/kernel_approx_tables.md") << md;
    std::ofstream(dir + "/kernel_approx_summary.md") << summary;
  } else {
    std::fprintf(stderr, "%s\n%s", summary.c_str(), md.c_str());
  }
  if (absl::GetFlag(FLAGS_check)) {
    for (const std::string& f : failures) std::fprintf(stderr, "CHECK FAILED: %s\n", f.c_str());
    if (!failures.empty()) return 1;
    std::fprintf(stderr, "check: all assertions passed\n");
  }
  return 0;
}

}  // namespace
}  // namespace invariant

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return invariant::Main();
}
